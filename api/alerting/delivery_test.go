package alerting_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/alertmsg"
	"github.com/tocsin/tocsin/internal/config"
	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/storagetest"
)

func TestEmailAlertWithAttachmentArrivesWithVariablesFilled(t *testing.T) {
	t.Parallel()
	sb, withSandbox := stacktest.Sandbox(t)
	s := stacktest.Start(t, withSandbox)
	tenant, tok := s.NewTenant(t)
	ada := &contact{First: "Ada", Last: "Lovelace", Email: "ada-" + tenant + "@example.com", Custom: `{"building":"B12"}`}
	alan := &contact{First: "Alan", Last: "Turing", Email: "alan-" + tenant + "@example.com"}
	seed(t, s, tenant, ada, alan)

	alert := map[string]any{"settings": map[string]any{
		"message": map[string]any{
			"subject":   "Campus closed, {{firstName}}",
			"body":      "Hello {{fullName}}, go to {{shelter}} in building {{custom.building}}.",
			"variables": map[string]any{"values": []map[string]any{{"name": "shelter", "value": "Gym B"}}},
		},
		"channels":   map[string]any{"email": map[string]any{"enabled": true}},
		"recipients": map[string]any{"contactIds": []int64{ada.ID, alan.ID}},
		"sender":     map[string]any{"name": "Campus Safety"},
	}}
	raw, _ := json.Marshal(alert)
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	_ = mw.WriteField("alert", string(raw))
	_ = mw.WriteField("jobId", "job-"+tenant)
	_ = mw.WriteField("async", "true")
	fw, _ := mw.CreateFormFile("attachment", "evacuation.txt")
	_, _ = fw.Write([]byte("Leave by the north stairs."))
	_ = mw.Close()
	body := buf.Bytes()
	r := s.Do(t, http.MethodPost, "/v2/alertsWithAttachments", tok, bytes.NewReader(body), "Content-Type", mw.FormDataContentType())
	if r.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	var res sendResponse
	r.JSON(t, &res)
	if !strings.HasPrefix(res.WorkflowID, fmt.Sprintf("alert-%s-%d-", tenant, res.AlertID)) || res.Status != "Queued" {
		t.Fatalf("response %s", r.Body)
	}
	// The transaction that stored the alert released the claim on its attachment.
	if cs := s.UploadClaims(t, tenant); len(cs) != 0 {
		t.Fatalf("claims left: %+v", cs)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	got, err := sb.SMTP.WaitTo(ctx, ada.Email)
	if err != nil {
		t.Fatalf("no email for Ada: %v", err)
	}
	if got.Subject != "Campus closed, Ada" {
		t.Errorf("subject %q", got.Subject)
	}
	if !strings.Contains(got.Text, "Hello Ada Lovelace, go to Gym B in building B12.") {
		t.Errorf("text %q", got.Text)
	}
	if len(got.Attachments) != 1 || got.Attachments[0].Name != "evacuation.txt" || !strings.Contains(string(got.Attachments[0].Data), "north stairs") {
		t.Errorf("attachments %+v", got.Attachments)
	}
	alanMail, err := sb.SMTP.WaitTo(ctx, alan.Email)
	if err != nil {
		t.Fatalf("no email for Alan: %v", err)
	}
	if !strings.Contains(alanMail.Text, "Hello Alan Turing, go to Gym B in building .") {
		t.Errorf("Alan's text %q", alanMail.Text)
	}

	st := waitDone(t, s, tok, res.AlertID)
	if st.Status != "Sent" || st.Recipients != 2 || st.Deliveries.Sent != 2 || st.Deliveries.Final != 2 {
		t.Fatalf("status %+v", st)
	}
	var hist []string
	for _, h := range st.History {
		hist = append(hist, h.Status)
	}
	if strings.Join(hist, ",") != "Queued,Processing,Sent" {
		t.Fatalf("history %v", hist)
	}

	// The retried request (same jobId) answers the first alert.
	r = s.Do(t, http.MethodPost, "/v2/alertsWithAttachments", tok, bytes.NewReader(body), "Content-Type", mw.FormDataContentType())
	var again sendResponse
	r.JSON(t, &again)
	if r.Status != http.StatusOK || again.AlertID != res.AlertID || !again.Replayed {
		t.Fatalf("retry: %d %s", r.Status, r.Body)
	}

	// Results: one email row per recipient, with the provider's id.
	r = s.Do(t, http.MethodGet, fmt.Sprintf("/v2/alerts/%d/results/channels/email", res.AlertID), tok, nil)
	var page struct {
		TotalCount int64 `json:"totalCount"`
		Items      []struct {
			Email, Status string
			RecipientID   int64 `json:"recipientId"`
		} `json:"items"`
	}
	r.JSON(t, &page)
	if page.TotalCount != 2 || page.Items[0].Status != "Sent" {
		t.Fatalf("email results %s", r.Body)
	}
	// Events of the alert's lifecycle are in the outbox.
	types := events(t, s, tenant)
	for _, want := range []string{"alert.created", "alert.queued", "alert.sent", "alert.completed"} {
		if !strings.Contains(strings.Join(types, ","), want) {
			t.Errorf("events %v lack %s", types, want)
		}
	}
	if len(sb.SMTP.Messages()) != 2 {
		t.Errorf("%d emails, want 2", len(sb.SMTP.Messages()))
	}
}

func TestTextAlertReachesTheSMSEndpoint(t *testing.T) {
	t.Parallel()
	sb, withSandbox := stacktest.Sandbox(t)
	s := stacktest.Start(t, withSandbox, func(c *config.Config) { c.ReceiptsToken = "receipts-secret" })
	tenant, tok := s.NewTenant(t)
	var cs []*contact
	for i := range 5 {
		cs = append(cs, &contact{First: fmt.Sprintf("P%d", i), Last: "Tester", Phone: fmt.Sprintf("+1555%07d", 1000+i)})
	}
	noPhone := &contact{First: "No", Last: "Phone", Email: "np@example.com"}
	seed(t, s, tenant, append(cs, noPhone)...)
	parent := group(t, s, tenant, 0, cs[0], cs[1])
	group(t, s, tenant, parent, cs[2], noPhone)

	res := send(t, s, tok, textAlert("Hi {{firstName}}: water main break.", map[string]any{
		"groups":     []map[string]any{{"id": parent, "includeSubgroups": true}},
		"contactIds": []int64{cs[3].ID, cs[0].ID},
		"adHoc":      []map[string]any{{"firstName": "Walk", "lastName": "In", "phone": "+15559990000"}},
	}))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, c := range []*contact{cs[0], cs[1], cs[2], cs[3]} {
		msg, err := sb.SMS.WaitTo(ctx, c.Phone)
		if err != nil {
			t.Fatalf("no text for %s: %v", c.Phone, err)
		}
		if msg.Body != "Hi "+c.First+": water main break." || msg.Tenant != tenant ||
			!strings.HasPrefix(msg.IdempotencyKey, res.WorkflowID+":text:1:") {
			t.Fatalf("text %+v", msg)
		}
	}
	if _, err := sb.SMS.WaitTo(ctx, "+15559990000"); err != nil {
		t.Fatalf("no text for the ad-hoc recipient: %v", err)
	}
	st := waitDone(t, s, tok, res.AlertID)
	// cs[4] is in no source; noPhone has no number: a permanent failure.
	if st.Status != "Sent" || st.Recipients != 6 || st.Deliveries.Sent != 5 || st.Deliveries.Failed != 1 {
		t.Fatalf("status %+v", st)
	}
	for _, m := range sb.SMS.Messages() {
		if m.To == cs[4].Phone {
			t.Fatal("a contact outside every source got the text")
		}
	}

	// The worker counts the deliveries for its dashboard.
	mfs, err := s.Metrics.Gather()
	if err != nil {
		t.Fatal(err)
	}
	counted := 0.0
	for _, mf := range mfs {
		if mf.GetName() != "tocsin_deliveries_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["channel"] == "text" && labels["outcome"] == "sent" {
				counted = m.GetCounter().GetValue()
			}
		}
	}
	if counted < 5 {
		t.Fatalf("tocsin_deliveries_total{channel=text,outcome=sent} = %v, want at least 5", counted)
	}

	// Recipients page: sorted by first name, filtered by name.
	r := s.Do(t, http.MethodGet, fmt.Sprintf("/v2/alerts/%d/results/recipients?sort=-firstName&pageSize=2", res.AlertID), tok, nil)
	var page struct {
		TotalCount int64 `json:"totalCount"`
		Items      []struct {
			RecipientID int64 `json:"recipientId"`
			ContactID   *int64
			Name        struct{ First string }
			Status      string
			IsMandatory bool `json:"isMandatory"`
		} `json:"items"`
	}
	r.JSON(t, &page)
	if r.Status != 200 || page.TotalCount != 6 || len(page.Items) != 2 || page.Items[0].Name.First != "Walk" || page.Items[1].Name.First != "P3" {
		t.Fatalf("recipients %d %s", r.Status, r.Body)
	}
	r = s.Do(t, http.MethodGet, fmt.Sprintf("/v2/alerts/%d/results/recipients?name=no%%20pho&isMandatory=false", res.AlertID), tok, nil)
	r.JSON(t, &page)
	if page.TotalCount != 1 || page.Items[0].Status != "Failed" {
		t.Fatalf("filtered recipients %s", r.Body)
	}
	// One recipient with its delivery.
	r = s.Do(t, http.MethodGet, fmt.Sprintf("/v2/alerts/%d/results/recipients/%d", res.AlertID, page.Items[0].RecipientID), tok, nil)
	var one struct {
		Channels []struct {
			Channel    string
			Deliveries []struct {
				Status, Error, IdempotencyKey string
				Permanent                     bool
			}
		}
	}
	r.JSON(t, &one)
	if r.Status != 200 || len(one.Channels) != 1 || len(one.Channels[0].Deliveries) != 1 ||
		one.Channels[0].Deliveries[0].Error != "no text address" || !one.Channels[0].Deliveries[0].Permanent {
		t.Fatalf("single recipient %d %s", r.Status, r.Body)
	}
	r = s.Do(t, http.MethodGet, fmt.Sprintf("/v2/alerts/%d/results/channels/aggregatedSummary", res.AlertID), tok, nil)
	var agg struct {
		Results struct{ Sms struct{ Sent, Failed int64 } }
	}
	r.JSON(t, &agg)
	if agg.Results.Sms.Sent != 5 || agg.Results.Sms.Failed != 1 {
		t.Fatalf("aggregated %s", r.Body)
	}
	// A delivery receipt turns Sent into Delivered.
	var key string
	for _, m := range sb.SMS.Messages() {
		if m.To == cs[0].Phone {
			key = m.IdempotencyKey
		}
	}
	receipt := map[string]any{"receipts": []map[string]any{{"key": key, "status": "delivered"}, {"key": "alert-1-2:text:1:3", "status": "delivered"}}}
	if r := s.Do(t, http.MethodPost, "/v2/alerts/receipts", "", receipt); r.Status != http.StatusUnauthorized {
		t.Fatalf("receipt without the token: %d", r.Status)
	}
	r = s.Do(t, http.MethodPost, "/v2/alerts/receipts", "", receipt, "Authorization", "Bearer receipts-secret")
	var applied struct {
		Applied int
		Ignored []string
	}
	r.JSON(t, &applied)
	if r.Status != 200 || applied.Applied != 1 || len(applied.Ignored) != 1 {
		t.Fatalf("receipts %d %s", r.Status, r.Body)
	}
	st = status(t, s, tok, res.AlertID)
	if st.Deliveries.Delivered != 1 || st.Deliveries.Sent != 4 {
		t.Fatalf("after the receipt: %+v", st.Deliveries)
	}
	// A second receipt for the same delivery changes nothing more. (The
	// scheme's name is case-insensitive.)
	r = s.Do(t, http.MethodPost, "/v2/alerts/receipts", "", receipt, "Authorization", "bearer receipts-secret")
	if r.Status != http.StatusOK {
		t.Fatalf("repeated receipts: %d %s", r.Status, r.Body)
	}
	if st2 := status(t, s, tok, res.AlertID); st2.Deliveries.Delivered != 1 {
		t.Fatalf("after a repeated receipt: %+v", st2.Deliveries)
	}
}

func TestEmailCarriesAStoredFile(t *testing.T) {
	t.Parallel()
	sb, withSandbox := stacktest.Sandbox(t)
	s := stacktest.Start(t, withSandbox)
	tenant, tok := s.NewTenant(t)
	c := &contact{First: "Fi", Last: "Le", Email: "file-" + tenant + "@example.com"}
	seed(t, s, tenant, c)
	ctx := context.Background()
	// The file is uploaded as a user uploads it.
	var img bytes.Buffer
	if err := png.Encode(&img, image.NewRGBA(image.Rect(0, 0, 4, 3))); err != nil {
		t.Fatal(err)
	}
	data := img.Bytes()
	var form bytes.Buffer
	mw := multipart.NewWriter(&form)
	for k, v := range map[string]string{"FileName": "campus.png", "FolderName": "maps", "ContentType": "image/png", "ContentLength": fmt.Sprint(len(data))} {
		_ = mw.WriteField(k, v)
	}
	fw, _ := mw.CreateFormFile("HttpFile", "campus.png")
	_, _ = fw.Write(data)
	_ = mw.Close()
	if r := s.Do(t, http.MethodPost, "/v4/"+tenant+"/files", tok, &form, "Content-Type", mw.FormDataContentType()); r.Status != http.StatusCreated {
		t.Fatalf("upload: %d %s", r.Status, r.Body)
	}
	send(t, s, tok, map[string]any{"settings": map[string]any{
		"message":    map[string]any{"subject": "Map", "body": "See the map."},
		"recipients": map[string]any{"contactIds": []int64{c.ID}},
		"content":    map[string]any{"attachments": []string{"maps/campus.png"}},
	}})
	wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	got, err := sb.SMTP.WaitTo(wctx, c.Email)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Attachments) != 1 || got.Attachments[0].Name != "campus.png" || !bytes.Equal(got.Attachments[0].Data, data) {
		t.Fatalf("attachments %+v", got.Attachments)
	}
	// Another tenant's file name is unknown here.
	_, other := s.NewTenant(t)
	r := s.Do(t, http.MethodPost, "/v2/alerts/preview", other, map[string]any{"settings": map[string]any{
		"message":    map[string]any{"subject": "Map", "body": "See the map."},
		"recipients": map[string]any{"adHoc": []map[string]any{{"email": "x@example.com"}}},
		"content":    map[string]any{"attachments": []string{"maps/campus.png"}},
	}})
	if r.Status != 400 || !strings.Contains(string(r.Body), "no stored file") {
		t.Fatalf("another tenant's file: %d %s", r.Status, r.Body)
	}
}

// TestASmallAlertRetriesOutsideTheWorkflowTask: the one batch of a small
// alert gets its first attempt inside the workflow task; while the provider
// keeps failing, the retries run as an activity, so no workflow task waits
// through their backoff (the SDK warns past 5 s), and the delivery still
// ends Sent once the provider answers, after its attempts.
func TestASmallAlertRetriesOutsideTheWorkflowTask(t *testing.T) {
	t.Parallel()
	sb, withSandbox := stacktest.Sandbox(t)
	s := stacktest.Start(t, withSandbox)
	_, tok := s.NewTenant(t)
	const phone = "+15557770001"
	sb.SMS.Respond(phone, http.StatusInternalServerError)
	res := send(t, s, tok, textAlert("Water main break.", map[string]any{"adHoc": []map[string]any{{"phone": phone}}}))
	var one struct {
		Channels []struct {
			Deliveries []struct {
				Status   string
				Attempts int
			}
		}
	}
	stacktest.Eventually(t, 30*time.Second, "the fourth attempt", func() bool {
		s.Do(t, http.MethodGet, fmt.Sprintf("/v2/alerts/%d/results/recipients/1", res.AlertID), tok, nil).JSON(t, &one)
		return len(one.Channels) == 1 && len(one.Channels[0].Deliveries) == 1 && one.Channels[0].Deliveries[0].Attempts >= 4
	})
	sb.SMS.Respond(phone, 0)
	if st := waitDone(t, s, tok, res.AlertID); st.Status != "Sent" || st.Deliveries.Sent != 1 {
		t.Fatalf("alert %+v, want Sent", st)
	}

	// Retries inside the task would hold it 7 s or more (their backoff);
	// 5 s is where the SDK warns.
	stacktest.CheckWorkflowTasks(t, s.History(t, res.WorkflowID), 5*time.Second)
}

// TestTextLongerForARecipientIsShortenedToItsSegments: a contact whose
// custom field makes the text longer than maxSegments gets it shortened to
// fit, the response link whole after the "...", as the preview with that
// contact shows it; another contact gets the text as written.
func TestTextLongerForARecipientIsShortenedToItsSegments(t *testing.T) {
	t.Parallel()
	sb, withSandbox := stacktest.Sandbox(t)
	s := stacktest.Start(t, withSandbox)
	tenant, tok := s.NewTenant(t)
	hall := strings.Repeat("Hall ", 80)
	long := &contact{First: "Lena", Last: "L", Phone: "+15557770020", Custom: `{"building":"` + hall + `"}`}
	short := &contact{First: "Sam", Last: "S", Phone: "+15557770021", Custom: `{"building":"B12"}`}
	seed(t, s, tenant, long, short)
	a := textAlert("Hello {{firstName}}, go to {{custom.building}} now.", map[string]any{"contactIds": []int64{long.ID, short.ID}})
	st := a["settings"].(map[string]any)
	st["channels"] = map[string]any{"text": map[string]any{"enabled": true, "maxSegments": 2}}
	st["workflow"] = map[string]any{"confirmationRequested": true}
	confirm := "\n\nPlease confirm: " + s.App.Config.PublicURL + "/s/"

	r := s.Do(t, http.MethodPost, "/v2/alerts/preview", tok, map[string]any{"settings": st, "sampleRecipientId": long.ID})
	var preview struct {
		Messages []struct{ Channel, Body string }
	}
	r.JSON(t, &preview)
	if r.Status != http.StatusOK || len(preview.Messages) != 1 {
		t.Fatalf("preview: %d %s", r.Status, r.Body)
	}
	res := send(t, s, tok, a)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	longSMS, err := sb.SMS.WaitTo(ctx, long.Phone)
	if err != nil {
		t.Fatal(err)
	}
	shortSMS, err := sb.SMS.WaitTo(ctx, short.Phone)
	if err != nil {
		t.Fatal(err)
	}
	body, code, _ := strings.Cut(longSMS.Body, confirm)
	if enc, units, n := alertmsg.SMSInfo(longSMS.Body); n > 2 || enc != alertmsg.GSM7 || units < 2*153-3 ||
		!strings.HasPrefix(body, "Hello Lena, go to Hall Hall") || !strings.HasSuffix(body, "...") || len(code) != 8 {
		t.Fatalf("%s alert %d: %d %s segments (%d septets): %q", tenant, res.AlertID, n, enc, units, longSMS.Body)
	}
	if want := strings.TrimSuffix(longSMS.Body, code) + "XXXXXXXX"; preview.Messages[0].Body != want {
		t.Errorf("the preview shows %q, sent %q", preview.Messages[0].Body, longSMS.Body)
	}
	if !strings.HasPrefix(shortSMS.Body, "Hello Sam, go to B12 now."+confirm) || len(shortSMS.Body) != len("Hello Sam, go to B12 now."+confirm)+8 {
		t.Errorf("the contact whose text fits got %q", shortSMS.Body)
	}
	// The worker counts the shortened text.
	stacktest.Eventually(t, 30*time.Second, "tocsin_text_shortened_total to count the shortened text", func() bool {
		mfs, err := s.Metrics.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			if mf.GetName() == "tocsin_text_shortened_total" {
				return mf.GetMetric()[0].GetCounter().GetValue() == 1
			}
		}
		return false
	})
}

// TestTextWithoutUnicodeIsSentInGSM7: with allowUnicode false, a contact
// whose name and custom field GSM-7 lacks gets a GSM-7 text, those
// characters replaced by their base letter or "?", as the preview for them
// and the alert's details show it.
func TestTextWithoutUnicodeIsSentInGSM7(t *testing.T) {
	t.Parallel()
	sb, withSandbox := stacktest.Sandbox(t)
	s := stacktest.Start(t, withSandbox)
	tenant, tok := s.NewTenant(t)
	zoe := &contact{First: "Zoë😀", Last: "Ŝmith", Phone: "+15557770030", Custom: `{"building":"Bâtiment ж"}`}
	seed(t, s, tenant, zoe)
	a := textAlert("Hello {{fullName}}, go to {{custom.building}} now.", map[string]any{"contactIds": []int64{zoe.ID}})
	st := a["settings"].(map[string]any)
	st["channels"] = map[string]any{"text": map[string]any{"enabled": true, "allowUnicode": false}}
	const want = "Hello Zoe? Smith, go to Batiment ? now."

	r := s.Do(t, http.MethodPost, "/v2/alerts/preview", tok, map[string]any{"settings": st, "sampleRecipientId": zoe.ID})
	var preview struct {
		Messages []struct{ Channel, Body, Encoding string }
	}
	r.JSON(t, &preview)
	if r.Status != http.StatusOK || len(preview.Messages) != 1 || preview.Messages[0].Body != want || preview.Messages[0].Encoding != alertmsg.GSM7 {
		t.Fatalf("preview: %d %s", r.Status, r.Body)
	}
	res := send(t, s, tok, a)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sms, err := sb.SMS.WaitTo(ctx, zoe.Phone)
	if err != nil {
		t.Fatal(err)
	}
	if enc, _, _ := alertmsg.SMSInfo(sms.Body); sms.Body != want || enc != alertmsg.GSM7 {
		t.Fatalf("%s alert %d: sent %s %q, want %q", tenant, res.AlertID, enc, sms.Body, want)
	}
	var detail struct {
		Messages []struct{ Channel, Body string }
	}
	s.Do(t, http.MethodGet, fmt.Sprintf("/v2/alerts/%d", res.AlertID), tok, nil).JSON(t, &detail)
	if len(detail.Messages) != 1 || detail.Messages[0].Body != want {
		t.Errorf("the alert's details show %+v", detail.Messages)
	}
}

// TestTextSizeIsTheSizeOfTheTextSent: the submission check, the preview
// and the alert's details all measure the text the SMS endpoint receives:
// with the conference line and the response link appended as sent (a short
// link, not the long personal page), and the alert's own variables filled.
func TestTextSizeIsTheSizeOfTheTextSent(t *testing.T) {
	t.Parallel()
	sb, withSandbox := stacktest.Sandbox(t)
	s := stacktest.Start(t, withSandbox)
	tenant, tok := s.NewTenant(t)
	c := &contact{First: "Tex", Last: "T", Phone: "+15557770010"}
	seed(t, s, tenant, c)
	// "\n\nPlease confirm: " and a short link follow the body.
	confirm := len("\n\nPlease confirm: ") + len(s.App.Config.PublicURL) + len("/s/") + 8
	alertOf := func(body string, segments int, conference bool) map[string]any {
		a := textAlert(body, map[string]any{"contactIds": []int64{c.ID}})
		st := a["settings"].(map[string]any)
		st["channels"] = map[string]any{"text": map[string]any{"enabled": true, "maxSegments": segments}}
		st["workflow"] = map[string]any{"confirmationRequested": true}
		if conference {
			st["type"] = "Conference"
			st["conference"] = map[string]any{"bridgeNumber": "+15550199", "accessCode": "4821", "url": "https://meet.example.com/storm"}
		}
		return a
	}
	type message struct {
		Channel, Body, Encoding string
		Segments, Characters    int
	}
	textOf := func(r stacktest.Response) message {
		t.Helper()
		var res struct{ Messages []message }
		r.JSON(t, &res)
		for _, m := range res.Messages {
			if m.Channel == "text" {
				return m
			}
		}
		t.Fatalf("no text message in %s", r.Body)
		return message{}
	}
	refused := func(path string, a map[string]any, msg string) {
		t.Helper()
		r := s.Do(t, http.MethodPost, path, tok, a)
		if r.Status != http.StatusBadRequest {
			t.Fatalf("%s: %d %s, want a 400 saying %q", path, r.Status, r.Body, msg)
		}
		expectFailure(t, problem(t, r).Errors, "body.settings.message.body", msg, r.Body)
	}

	// One segment holds 160 characters: a body that fills it with the link
	// is accepted, one more character is not.
	fits := strings.Repeat("a", 160-confirm)
	for _, path := range []string{"/v2/alerts/preview", "/v2/alerts"} {
		refused(path, alertOf("a"+fits, 1, false), "2 GSM-7 segments (161 characters)")
	}
	// The conference line counts too.
	conference := strings.Repeat("c", 130)
	refused("/v2/alerts", alertOf(conference, 1, true), "limit of 1")
	// {{alertId}} counts as the alert's id: a preview has none yet (0), an
	// alert of a two-digit id takes a character more.
	for range 10 {
		if _, err := storage.NextAlertID(context.Background(), s.DB); err != nil {
			t.Fatal(err)
		}
	}
	withID := alertOf(fits[2:]+" {{alertId}}", 1, false)
	if r := s.Do(t, http.MethodPost, "/v2/alerts/preview", tok, withID); r.Status != http.StatusOK || textOf(r).Characters != 160 {
		t.Fatalf("preview of a text of 160 characters with {{alertId}} 0: %d %s", r.Status, r.Body)
	}
	refused("/v2/alerts", withID, "(161 characters)")
	if n := alertCount(t, s, tok); n != 0 {
		t.Fatalf("refused alerts left %d alerts", n)
	}

	for _, a := range []map[string]any{alertOf(fits, 1, false), alertOf(conference, 2, true)} {
		sb.SMS.Clear()
		preview := textOf(s.Do(t, http.MethodPost, "/v2/alerts/preview", tok, a))
		res := send(t, s, tok, a)
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		sent, err := sb.SMS.WaitTo(ctx, c.Phone)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		detail := textOf(s.Do(t, http.MethodGet, fmt.Sprintf("/v2/alerts/%d", res.AlertID), tok, nil))
		enc, units, segments := alertmsg.SMSInfo(sent.Body)
		for what, m := range map[string]message{"preview": preview, "details": detail} {
			if m.Characters != len([]rune(sent.Body)) || m.Segments != segments || m.Encoding != enc {
				t.Errorf("%s: %d characters, %d %s segments; sent %d (%d units), %d %s segments: %q",
					what, m.Characters, m.Segments, m.Encoding, len([]rune(sent.Body)), units, segments, enc, sent.Body)
			}
		}
		// The details show the text sent, the link's code aside.
		code := sent.Body[len(sent.Body)-8:]
		if want := strings.TrimSuffix(sent.Body, code) + "XXXXXXXX"; detail.Body != want {
			t.Errorf("details show %q, sent %q", detail.Body, sent.Body)
		}
	}
}

// TestAlertCopiesOnlyTheCustomFieldsItsTextsRead: resolving an alert's
// recipients copies of each contact's custom fields only those its texts
// read ({{custom.f001}}, and the field of a CustomField variable a text
// uses), not the tens a contact may hold beside them; the texts are filled
// as before.
func TestAlertCopiesOnlyTheCustomFieldsItsTextsRead(t *testing.T) {
	t.Parallel()
	sb, withSandbox := stacktest.Sandbox(t)
	s := stacktest.Start(t, withSandbox)
	tenant, tok := s.NewTenant(t)
	fields := func(tag string) string {
		m := map[string]string{}
		for i := range 60 {
			m[fmt.Sprintf("f%03d", i)] = fmt.Sprintf("%s-%d-%s", tag, i, strings.Repeat("v", 20))
		}
		b, _ := json.Marshal(m)
		return string(b)
	}
	ann := &contact{First: "Ann", Last: "A", Phone: "+15557770041", Custom: fields("ann")}
	bob := &contact{First: "Bob", Last: "B", Phone: "+15557770042", Custom: fields("bob")}
	cid := &contact{First: "Cid", Last: "C", Phone: "+15557770043"}
	seed(t, s, tenant, ann, bob, cid)
	a := textAlert("Go to {{custom.f001}} near {{hall}}.", map[string]any{"contactIds": []int64{ann.ID, bob.ID, cid.ID}})
	msg := a["settings"].(map[string]any)["message"].(map[string]any)
	msg["variables"] = map[string]any{"values": []map[string]any{
		{"name": "hall", "source": "CustomField", "field": "f002", "value": "the hall"},
		{"name": "unused", "source": "CustomField", "field": "f003", "value": "x"},
	}}
	res := send(t, s, tok, a)
	if st := waitDone(t, s, tok, res.AlertID); st.Deliveries.Sent+st.Deliveries.Delivered != 3 {
		t.Fatalf("alert %+v", st)
	}
	copied, err := storagetest.RecipientCustomFields(context.Background(), s.DB, tenant, res.AlertID)
	if err != nil {
		t.Fatal(err)
	}
	if len(copied) != 2 {
		t.Fatalf("custom fields copied for %d recipients: %v", len(copied), copied)
	}
	for _, c := range copied {
		if len(c) != 2 || !strings.HasPrefix(c["f001"], "ann-1-") && !strings.HasPrefix(c["f001"], "bob-1-") || c["f002"] == "" {
			t.Errorf("copied %d fields: %v", len(c), c)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, c := range []*contact{ann, cid} {
		sms, err := sb.SMS.WaitTo(ctx, c.Phone)
		if err != nil {
			t.Fatal(err)
		}
		want := "Go to  near the hall."
		if c == ann {
			want = "Go to ann-1-" + strings.Repeat("v", 20) + " near ann-2-" + strings.Repeat("v", 20) + "."
		}
		if sms.Body != want {
			t.Errorf("%s got %q", c.First, sms.Body)
		}
	}
}
