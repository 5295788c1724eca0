package payloadcrypt_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/tocsin/tocsin/internal/payloadcrypt"
	"github.com/tocsin/tocsin/internal/secrets"
	"github.com/tocsin/tocsin/internal/stacktest"
	storagedir "github.com/tocsin/tocsin/storage/directory"
	"github.com/tocsin/tocsin/workflows"
)

// TestHistoriesHoldNoPersonalDataInClear runs a verification of an email
// address and of a phone number, and an alert by email and text, through
// the API; then it reads every workflow history straight from Temporal with
// a client that has no codec, as anyone with access to Temporal could, and
// finds no address, number, message or code in clear, in ids or payloads.
func TestHistoriesHoldNoPersonalDataInClear(t *testing.T) {
	t.Parallel()
	sb, withSandbox := stacktest.Sandbox(t)
	s := stacktest.Start(t, withSandbox)
	tenant := stacktest.NewTenant()
	sfx := stacktest.Suffix()
	email := "lock." + sfx + "@example.com"
	phone := "+1202555" + fmt.Sprint(1000+time.Now().UnixNano()%9000)
	adHocEmail := "grace." + sfx + "@example.net"
	adHocPhone := "+1303555" + fmt.Sprint(1000+time.Now().UnixNano()%9000)
	subject := "Gas leak " + sfx
	body := "Leave building B12 by the north stairs " + sfx

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	want := func(r stacktest.Response, status int) stacktest.Response {
		t.Helper()
		if r.Status != status {
			t.Fatalf("status %d, want %d: %s", r.Status, status, r.Body)
		}
		return r
	}

	// Verifications: a directory user with an email address and a phone number.
	dirTok := s.Token(t, tenant, "directory:public")
	users := "/" + tenant + "/directory/staff/users"
	var u struct{ ID string }
	want(s.Do(t, "POST", users, dirTok, map[string]any{"name": map[string]any{"first": "Ada", "last": "Lock"}}), 201).JSON(t, &u)
	user := users + "/" + u.ID
	want(s.Do(t, "POST", user+"/contact/emails", dirTok, map[string]any{"address": email}), 201)
	want(s.Do(t, "POST", user+"/contact/phones", dirTok, map[string]any{"number": phone}), 201)
	emailPath := user + "/contact/emails/" + url.PathEscape(email)
	phonePath := user + "/contact/phones/" + strings.ReplaceAll(url.PathEscape(phone), "+", "%2B")
	for _, p := range []string{emailPath, phonePath} {
		nonce := "nonce-" + stacktest.Suffix()
		want(s.Do(t, "POST", p+"/verification/nonce", dirTok, map[string]any{"nonce": nonce}), 201)
		want(s.Do(t, "POST", p+"/verification/resend", dirTok, map[string]any{"nonce": nonce}), 202)
	}
	codeRE := regexp.MustCompile(`\b(\d{6})\b`)
	mail, err := sb.SMTP.WaitTo(ctx, email)
	if err != nil {
		t.Fatalf("verification email: %v", err)
	}
	text, err := sb.SMS.WaitTo(ctx, phone)
	if err != nil {
		t.Fatalf("verification text: %v", err)
	}
	emailCode, phoneCode := codeRE.FindString(mail.Text), codeRE.FindString(text.Body)
	if emailCode == "" || phoneCode == "" {
		t.Fatalf("no codes in %q / %q", mail.Text, text.Body)
	}
	want(s.Do(t, "POST", emailPath+"/verification/verify", dirTok, map[string]any{"code": emailCode}), 200)

	// An alert by email and text to ad-hoc recipients.
	alertTok := s.Token(t, tenant)
	var sent struct {
		AlertID    int64  `json:"alertId"`
		WorkflowID string `json:"workflowId"`
	}
	r := s.Do(t, http.MethodPost, "/v2/alerts", alertTok, map[string]any{"settings": map[string]any{
		"message":  map[string]any{"subject": subject, "body": body},
		"channels": map[string]any{"email": map[string]any{"enabled": true}, "text": map[string]any{"enabled": true}},
		"recipients": map[string]any{"adHoc": []map[string]any{
			{"firstName": "Grace", "lastName": "Hopper", "email": adHocEmail, "phone": adHocPhone},
		}},
	}})
	if r.Status != http.StatusCreated && r.Status != http.StatusAccepted && r.Status != http.StatusOK {
		t.Fatalf("create alert: %d %s", r.Status, r.Body)
	}
	r.JSON(t, &sent)
	if _, err := sb.SMTP.WaitTo(ctx, adHocEmail); err != nil {
		t.Fatalf("alert email: %v", err)
	}
	if _, err := sb.SMS.WaitTo(ctx, adHocPhone); err != nil {
		t.Fatalf("alert text: %v", err)
	}
	if err := s.Temporal.GetWorkflow(ctx, sent.WorkflowID, "").Get(ctx, nil); err != nil {
		t.Fatalf("alert workflow: %v", err)
	}

	// Temporal, as seen without the codec.
	plain, err := client.Dial(client.Options{HostPort: s.Config.TemporalAddress, Namespace: s.Config.TemporalNamespace})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	idKey, err := secrets.Derive(s.Config.SecretsKey, "workflow ids")
	if err != nil {
		t.Fatal(err)
	}
	person, _ := strconv.ParseInt(u.ID, 10, 64)
	verificationID := func(kind storagedir.Kind, address string) string {
		aid, err := storagedir.AddressID(ctx, s.DB, tenant, person, kind, address)
		if err != nil {
			t.Fatal(err)
		}
		return workflows.VerificationWorkflowID(idKey, tenant, person, address, aid)
	}
	roots := []string{verificationID(storagedir.KindEmail, email), verificationID(storagedir.KindPhone, phone), sent.WorkflowID}
	secretsInClear := []string{
		email, phone, strings.TrimPrefix(phone, "+"), adHocEmail, adHocPhone, strings.TrimPrefix(adHocPhone, "+"),
		"lock." + sfx, "grace." + sfx, subject, body, "north stairs", emailCode, phoneCode, "Hopper",
	}
	seen := map[string]bool{}
	events := 0
	for len(roots) > 0 {
		id := roots[0]
		roots = roots[1:]
		if seen[id] {
			continue
		}
		seen[id] = true
		for _, c := range secretsInClear {
			if strings.Contains(id, c) {
				t.Errorf("workflow id %s holds %q", id, c)
			}
		}
		it := plain.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for it.HasNext() {
			ev, err := it.Next()
			if err != nil {
				t.Fatalf("history of %s: %v", id, err)
			}
			events++
			raw, err := protojson.Marshal(ev)
			if err != nil {
				t.Fatal(err)
			}
			// Payload data is base64 in JSON: look at the decoded bytes too.
			for _, c := range secretsInClear {
				if strings.Contains(string(raw), c) || strings.Contains(ev.String(), c) {
					t.Errorf("%s event %d (%s) holds %q in clear", id, ev.EventId, ev.EventType, c)
				}
			}
			if a := ev.GetStartChildWorkflowExecutionInitiatedEventAttributes(); a != nil {
				roots = append(roots, a.WorkflowId)
			}
		}
	}
	// Both verifications and the alert (a small alert runs no child).
	if len(seen) < 3 || events < 20 {
		t.Fatalf("read only %d workflows, %d events", len(seen), events)
	}

	// The data is there, encrypted: tocsin's own client reads the verification input.
	var in workflows.VerificationInput
	hist := s.Temporal.GetWorkflowHistory(ctx, verificationID(storagedir.KindEmail, email), "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	first, err := hist.Next()
	if err != nil {
		t.Fatal(err)
	}
	payloads := first.GetWorkflowExecutionStartedEventAttributes().GetInput()
	if string(payloads.GetPayloads()[0].GetMetadata()["encoding"]) != "binary/encrypted" {
		t.Fatalf("input metadata %v", payloads.GetPayloads()[0].GetMetadata())
	}
	codec, err := payloadcrypt.New(s.Config.PayloadKeys, s.Config.PayloadKeyID)
	if err != nil {
		t.Fatal(err)
	}
	if err := codec.DataConverter().FromPayloads(payloads, &in); err != nil || in.Address != email {
		t.Fatalf("decrypted input: %v %+v", err, in)
	}
}
