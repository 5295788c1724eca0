package directory_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/tocsin/tocsin/dispatch"
	"github.com/tocsin/tocsin/internal/config"
	"github.com/tocsin/tocsin/internal/stacktest"
	storagedir "github.com/tocsin/tocsin/storage/directory"
	"github.com/tocsin/tocsin/storage/storagetest"
	"github.com/tocsin/tocsin/workflows"
)

// TestEmailVerificationEndToEnd: create a user, add an email, reserve a
// nonce, resend; the code arrives at the loopback SMTP server; a wrong code
// is refused, the right one verifies.
func TestEmailVerificationEndToEnd(t *testing.T) {
	t.Parallel()
	e := start(t)
	id := e.createUser(t, "Ada", "Lovelace")
	want(t, e.do(t, "POST", e.user(id)+"/contact/emails", map[string]any{"address": "Ada@Example.com"}), 201)
	addr := emailPath(e, id, "ada@example.com")

	// No code sent yet.
	wantProblem(t, e.do(t, "POST", addr+"/verification/verify", map[string]any{"code": "123456"}), 409, "")

	e.resend(t, addr)
	code := e.emailCode(t, "ada@example.com", 1)
	stacktest.Eventually(t, 30*time.Second, "status Pending", func() bool {
		return strings.Contains(string(e.do(t, "GET", addr, nil).Body), `"verificationStatus":"Pending"`)
	})

	wrong := "000000"
	if code == wrong {
		wrong = "111111"
	}
	p := wantProblem(t, e.do(t, "POST", addr+"/verification/verify", map[string]any{"code": wrong}), 400, "body.code")
	if !strings.Contains(p.Error(), "4 attempts left") {
		t.Fatalf("wrong code: %s", p.Error())
	}
	var v struct {
		Verified   bool
		Status     string
		Address    string
		TargetType string
		VerifiedAt *time.Time
		Attempt    struct{ AttemptsUsed, MaxAttempts int }
	}
	want(t, e.do(t, "POST", addr+"/verification/verify", map[string]any{"code": code}), 200).JSON(t, &v)
	if !v.Verified || v.Status != "Verified" || v.Address != "ada@example.com" || v.TargetType != "Email" || v.VerifiedAt == nil ||
		v.Attempt.AttemptsUsed != 1 || v.Attempt.MaxAttempts != 5 {
		t.Fatalf("%+v", v)
	}
	var em struct {
		VerificationStatus string
		VerifiedAt         *time.Time
	}
	want(t, e.do(t, "GET", addr, nil), 200).JSON(t, &em)
	if em.VerificationStatus != "Verified" || em.VerifiedAt == nil {
		t.Fatalf("%+v", em)
	}
	if !strings.Contains(string(want(t, e.do(t, "GET", e.user(id)+"/contact", nil), 200).Body), `"verificationStatus":"Verified"`) {
		t.Fatal("contact information does not show the verification")
	}
	if n := e.eventCount(t, "verification.completed"); n != 1 {
		t.Fatalf("%d verification.completed events", n)
	}
	// Verified addresses need no more codes.
	wantProblem(t, e.do(t, "POST", addr+"/verification/nonce", map[string]any{"nonce": "another-nonce-1"}), 409, "")
	wantProblem(t, e.do(t, "POST", addr+"/verification/verify", map[string]any{"code": code}), 409, "")

	// The code's workflow runs under a business id that holds no address.
	wfID := e.verificationID(t, id, "ada@example.com")
	// ("ada" alone is hex, so a hash may hold it by chance.)
	if strings.Contains(wfID, "ada@") || strings.Contains(wfID, "example") {
		t.Fatalf("workflow id %s holds the address", wfID)
	}
	desc, err := e.s.Temporal.DescribeWorkflowExecution(context.Background(), wfID, "")
	if err != nil {
		t.Fatalf("workflow %s: %v", wfID, err)
	}
	if desc.WorkflowExecutionInfo.Type.Name != "Verification" {
		t.Fatalf("workflow type %s", desc.WorkflowExecutionInfo.Type.Name)
	}
	// The used code is settled in the workflow at once (it stops waiting
	// for the code's expiry, and the run stays only to take a resend for
	// up to workflows.VerificationIdle).
	settled := false
	for _, ev := range e.s.History(t, wfID) {
		if a := ev.GetWorkflowExecutionSignaledEventAttributes(); a != nil && a.SignalName == workflows.SignalVerificationSettled {
			settled = true
		}
	}
	if !settled {
		t.Fatalf("workflow %s was not told the code was used", wfID)
	}
}

// TestPhoneVerificationEndToEnd does the same through the loopback text endpoint.
func TestPhoneVerificationEndToEnd(t *testing.T) {
	t.Parallel()
	e := start(t)
	id := e.createUser(t, "Grace", "Hopper")
	var ph struct{ Number, VerificationStatus string }
	want(t, e.do(t, "POST", e.user(id)+"/contact/phones", map[string]any{"number": "+1 (202) 555-0123"}), 201).JSON(t, &ph)
	if ph.Number != "+12025550123" || ph.VerificationStatus != "Unverified" {
		t.Fatalf("%+v", ph)
	}
	num := phonePath(e, id, "+12025550123")
	e.resend(t, num)
	first := e.textCode(t, "+12025550123", 1)

	// A second resend replaces the first code: only the newest verifies.
	e.resend(t, num)
	second := e.textCode(t, "+12025550123", 2)
	if first != second {
		p := wantProblem(t, e.do(t, "POST", num+"/verification/verify", map[string]any{"code": first}), 400, "body.code")
		_ = p
	}
	var v struct {
		Verified   bool
		TargetType string
		Address    string
	}
	want(t, e.do(t, "POST", num+"/verification/verify", map[string]any{"code": second}), 200).JSON(t, &v)
	if !v.Verified || v.TargetType != "Phone" || v.Address != "+12025550123" {
		t.Fatalf("%+v", v)
	}
	texts := e.sb.SMS.Messages()
	if texts[0].Tenant != e.tenant || texts[0].IdempotencyKey == "" || texts[0].IdempotencyKey == texts[1].IdempotencyKey {
		t.Fatalf("texts %+v", texts)
	}
	want(t, e.do(t, "GET", num, nil), 200)
	if !strings.Contains(string(e.do(t, "GET", num, nil).Body), `"verificationStatus":"Verified"`) {
		t.Fatal("phone not verified")
	}
}

// TestACodeIsRetriedOutsideTheWorkflowTask: a code gets one attempt inside
// the workflow task that received the resend; while the text provider
// fails, the other attempts run as an activity, so no workflow task waits
// through their backoff (the SDK warns past 5 s), and the code still
// arrives once the provider answers.
func TestACodeIsRetriedOutsideTheWorkflowTask(t *testing.T) {
	t.Parallel()
	e := start(t)
	id := e.createUser(t, "Hedy", "Lamarr")
	const number = "+12025550177"
	want(t, e.do(t, "POST", e.user(id)+"/contact/phones", map[string]any{"number": number}), 201)
	e.sb.SMS.Respond(number, http.StatusInternalServerError)
	num := phonePath(e, id, number)
	e.resend(t, num)
	wfID := e.verificationID(t, id, number)
	retried := func() bool {
		for _, ev := range e.s.History(t, wfID) {
			if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil && a.ActivityType.GetName() == "SendVerificationCode" {
				return true
			}
		}
		return false
	}
	stacktest.Eventually(t, 30*time.Second, "the code's retry as an activity", retried)
	e.sb.SMS.Respond(number, 0)
	code := e.textCode(t, number, 1)
	want(t, e.do(t, "POST", num+"/verification/verify", map[string]any{"code": code}), 200)

	stacktest.CheckWorkflowTasks(t, e.s.History(t, wfID), 5*time.Second)
}

// TestNoncesAreRateLimitedAndSpentOnce covers the nonce rules.
func TestNoncesAreRateLimitedAndSpentOnce(t *testing.T) {
	t.Parallel()
	e := start(t)
	id := e.createUser(t, "Alan", "Turing")
	want(t, e.do(t, "POST", e.user(id)+"/contact/emails", map[string]any{"address": "alan@example.com"}), 201)
	addr := emailPath(e, id, "alan@example.com")

	// Unknown nonce.
	wantProblem(t, e.do(t, "POST", addr+"/verification/resend", map[string]any{"nonce": "never-reserved"}), 400, "body.nonce")

	for i := 1; i <= 5; i++ {
		var tok struct {
			Nonce             string
			RemainingInWindow int
			ExpiresAt         time.Time
			TargetType        string
		}
		want(t, e.do(t, "POST", addr+"/verification/nonce", map[string]any{"nonce": "nonce-000" + strconv.Itoa(i)}), 201).JSON(t, &tok)
		if tok.Nonce != "nonce-000"+strconv.Itoa(i) || tok.RemainingInWindow != 5-i || tok.ExpiresAt.Before(time.Now()) || tok.TargetType != "Email" {
			t.Fatalf("nonce %d: %+v", i, tok)
		}
		if i == 1 {
			// The same nonce twice is a conflict.
			wantProblem(t, e.do(t, "POST", addr+"/verification/nonce", map[string]any{"nonce": "nonce-0001"}), 409, "")
		}
	}
	r := e.do(t, "POST", addr+"/verification/nonce", map[string]any{"nonce": "nonce-0006"})
	wantProblem(t, r, 429, "")
	if secs, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || secs < 1 || secs > 15*60 {
		t.Fatalf("Retry-After %q", r.Header.Get("Retry-After"))
	}
	// A reserved nonce is spent by one resend only.
	want(t, e.do(t, "POST", addr+"/verification/resend", map[string]any{"nonce": "nonce-0001"}), 202)
	wantProblem(t, e.do(t, "POST", addr+"/verification/resend", map[string]any{"nonce": "nonce-0001"}), 400, "body.nonce")
	// Nonces are per address: a phone of the same user is not limited.
	want(t, e.do(t, "POST", e.user(id)+"/contact/phones", map[string]any{"number": "2025550199", "country": "US"}), 201)
	want(t, e.do(t, "POST", phonePath(e, id, "+12025550199")+"/verification/nonce", map[string]any{"nonce": "nonce-0006"}), 201)
	// Bad nonce format.
	wantProblem(t, e.do(t, "POST", addr+"/verification/nonce", map[string]any{"nonce": "no spaces allowed"}), 400, "body.nonce")

	// Removing the address, or its user, and adding it again does not
	// reset the limit.
	want(t, e.do(t, "DELETE", addr, nil), 204)
	want(t, e.do(t, "POST", e.user(id)+"/contact/emails", map[string]any{"address": "alan@example.com"}), 201)
	wantProblem(t, e.do(t, "POST", addr+"/verification/nonce", map[string]any{"nonce": "nonce-0007"}), 429, "")
	want(t, e.do(t, "DELETE", e.user(id), nil), 204)
	again := e.createUser(t, "Alan", "Again")
	want(t, e.do(t, "POST", e.user(again)+"/contact/emails", map[string]any{"address": "alan@example.com"}), 201)
	wantProblem(t, e.do(t, "POST", emailPath(e, again, "alan@example.com")+"/verification/nonce", map[string]any{"nonce": "nonce-0008"}), 429, "")
}

// TestNonceRetentionSchedule: the hourly schedule prunes a day-old nonce,
// though the address reserves no other, and then the nonce may be reserved
// again.
func TestNonceRetentionSchedule(t *testing.T) {
	t.Parallel()
	e := start(t)
	id := e.createUser(t, "Grace", "Hopper")
	want(t, e.do(t, "POST", e.user(id)+"/contact/emails", map[string]any{"address": "grace@example.com"}), 201)
	nonce := emailPath(e, id, "grace@example.com") + "/verification/nonce"
	want(t, e.do(t, "POST", nonce, map[string]any{"nonce": "nonce-0001"}), 201)
	wantProblem(t, e.do(t, "POST", nonce, map[string]any{"nonce": "nonce-0001"}), 409, "")
	ctx := context.Background()
	if err := storagetest.AgeNonces(ctx, e.s.DB, e.tenant, storagedir.NonceRetention+time.Minute); err != nil {
		t.Fatal(err)
	}
	handle := e.s.Temporal.ScheduleClient().GetHandle(ctx, dispatch.NonceRetentionScheduleID(e.s.Config.TemporalTaskQueue))
	if err := handle.Trigger(ctx, client.ScheduleTriggerOptions{}); err != nil {
		t.Fatal(err)
	}
	stacktest.Eventually(t, 60*time.Second, "the old nonce pruned", func() bool {
		n, err := storagetest.PersonRowCounts(ctx, e.s.DB, e.tenant)
		return err == nil && n["directory_verification_nonces"] == 0
	})
	want(t, e.do(t, "POST", nonce, map[string]any{"nonce": "nonce-0001"}), 201)
}

// TestWrongCodesKillTheCode: the fifth wrong code kills it; the right code
// is then refused too, until a resend.
func TestWrongCodesKillTheCode(t *testing.T) {
	t.Parallel()
	e := start(t)
	id := e.createUser(t, "Edsger", "Dijkstra")
	want(t, e.do(t, "POST", e.user(id)+"/contact/emails", map[string]any{"address": "edsger@example.com"}), 201)
	addr := emailPath(e, id, "edsger@example.com")
	e.resend(t, addr)
	code := e.emailCode(t, "edsger@example.com", 1)
	wrong := "999999"
	if code == wrong {
		wrong = "888888"
	}
	for i := 1; i <= 5; i++ {
		p := wantProblem(t, e.do(t, "POST", addr+"/verification/verify", map[string]any{"code": wrong}), 400, "body.code")
		if i == 5 && !strings.Contains(p.Error(), "no attempts are left") {
			t.Fatalf("fifth wrong code: %s", p.Error())
		}
		if i == 4 && !strings.Contains(p.Error(), "; 1 attempt left") {
			t.Fatalf("fourth wrong code: %s", p.Error())
		}
	}
	wantProblem(t, e.do(t, "POST", addr+"/verification/verify", map[string]any{"code": code}), 410, "")
	if !strings.Contains(string(e.do(t, "GET", addr, nil).Body), `"verificationStatus":"Failed"`) {
		t.Fatal("status is not Failed")
	}
	if n := e.eventCount(t, "verification.failed"); n != 1 {
		t.Fatalf("%d verification.failed events", n)
	}
	// A resend gives a new live code.
	e.resend(t, addr)
	code = e.emailCode(t, "edsger@example.com", 2)
	want(t, e.do(t, "POST", addr+"/verification/verify", map[string]any{"code": code}), 200)
}

// TestExpiredCodeIsRefused runs with a short code lifetime: the workflow
// expires the code, and the verify answers 410.
func TestExpiredCodeIsRefused(t *testing.T) {
	t.Parallel()
	e := start(t, func(c *config.Config) { c.VerificationCodeTTL = 2 * time.Second })
	id := e.createUser(t, "Barbara", "Liskov")
	want(t, e.do(t, "POST", e.user(id)+"/contact/emails", map[string]any{"address": "barbara@example.com"}), 201)
	addr := emailPath(e, id, "barbara@example.com")
	e.resend(t, addr)
	code := e.emailCode(t, "barbara@example.com", 1)
	stacktest.Eventually(t, 60*time.Second, "the workflow to expire the code", func() bool {
		return strings.Contains(string(e.do(t, "GET", addr, nil).Body), `"verificationStatus":"Expired"`)
	})
	wantProblem(t, e.do(t, "POST", addr+"/verification/verify", map[string]any{"code": code}), 410, "")
	if n := e.eventCount(t, "verification.failed"); n != 1 {
		t.Fatalf("%d verification.failed events", n)
	}
}

// TestTestingOperationsRevealPendingCodes lists live codes with the switch on.
func TestTestingOperationsRevealPendingCodes(t *testing.T) {
	t.Parallel()
	e := start(t)
	id := e.createUser(t, "Frances", "Allen")
	want(t, e.do(t, "POST", e.user(id)+"/contact/emails", map[string]any{"address": "frances@example.com"}), 201)
	want(t, e.do(t, "POST", e.user(id)+"/contact/phones", map[string]any{"number": "+442079460958"}), 201)
	e.resend(t, emailPath(e, id, "frances@example.com"))
	e.resend(t, phonePath(e, id, "+442079460958"))
	code := e.emailCode(t, "frances@example.com", 1)
	textCode := e.textCode(t, "+442079460958", 1)

	var pending []struct {
		DeviceType, Address, UserID, DirectoryID, Code string
		CreatedAt, ExpiresAt                           time.Time
	}
	want(t, e.do(t, "GET", "/"+e.tenant+"/testing/verifications/email", nil), 200).JSON(t, &pending)
	if len(pending) != 1 || pending[0].Code != code || pending[0].Address != "frances@example.com" || pending[0].UserID != id ||
		pending[0].DeviceType != "Email" || pending[0].DirectoryID != "staff" || !pending[0].ExpiresAt.After(pending[0].CreatedAt) {
		t.Fatalf("%+v (code %s)", pending, code)
	}
	want(t, e.do(t, "GET", "/"+e.tenant+"/testing/verifications/phone", nil), 200).JSON(t, &pending)
	if len(pending) != 1 || pending[0].Code != textCode || pending[0].DeviceType != "Sms" {
		t.Fatalf("%+v", pending)
	}
	// Once verified, the code is no longer kept.
	want(t, e.do(t, "POST", emailPath(e, id, "frances@example.com")+"/verification/verify", map[string]any{"code": code}), 200)
	want(t, e.do(t, "GET", "/"+e.tenant+"/testing/verifications/email", nil), 200).JSON(t, &pending)
	if len(pending) != 0 {
		t.Fatalf("%+v", pending)
	}
	if kept, err := storagetest.CountStoredCodes(context.Background(), e.s.DB, e.tenant, storagedir.KindEmail); err != nil || kept.Plain != 0 {
		t.Fatalf("plain codes kept: %+v %v", kept, err)
	}
	// Another tenant sees nothing; another tenant's path is a 404.
	other := stacktest.NewTenant()
	otherTok := e.s.Token(t, other, "directory:public")
	if r := want(t, e.s.Do(t, "GET", "/"+other+"/testing/verifications/phone", otherTok, nil), 200); string(r.Body) != "[]" && !strings.HasPrefix(string(r.Body), "[]") {
		t.Fatalf("%s", r.Body)
	}
	wantProblem(t, e.s.Do(t, "GET", "/"+e.tenant+"/testing/verifications/phone", otherTok, nil), 404, "")
}

// TestTestingOperationsAreOffByDefault: without the switch they are 404s and
// no plain code is stored.
func TestTestingOperationsAreOffByDefault(t *testing.T) {
	t.Parallel()
	e := start(t, func(c *config.Config) { c.TestingEndpoints = false })
	id := e.createUser(t, "Ken", "Thompson")
	want(t, e.do(t, "POST", e.user(id)+"/contact/emails", map[string]any{"address": "ken@example.com"}), 201)
	e.resend(t, emailPath(e, id, "ken@example.com"))
	e.emailCode(t, "ken@example.com", 1)
	wantProblem(t, e.do(t, "GET", "/"+e.tenant+"/testing/verifications/email", nil), 404, "")
	wantProblem(t, e.do(t, "GET", "/"+e.tenant+"/testing/verifications/phone", nil), 404, "")
	codes, err := storagetest.CountStoredCodes(context.Background(), e.s.DB, e.tenant, storagedir.KindEmail)
	if err != nil || codes.Plain != 0 {
		t.Fatalf("plain codes kept: %+v %v", codes, err)
	}
	if codes.HashedPending != 1 {
		t.Fatalf("hashed codes: %+v", codes)
	}
}

// TestUndeliverableCodeFailsTheVerification: a permanent refusal by the
// provider ends the verification as Failed with an event.
func TestUndeliverableCodeFailsTheVerification(t *testing.T) {
	t.Parallel()
	e := start(t)
	e.sb.SMTP.Reject("nobody@example.com", 550)
	id := e.createUser(t, "No", "Body")
	want(t, e.do(t, "POST", e.user(id)+"/contact/emails", map[string]any{"address": "nobody@example.com"}), 201)
	addr := emailPath(e, id, "nobody@example.com")
	e.resend(t, addr)
	stacktest.Eventually(t, 60*time.Second, "status Failed", func() bool {
		return strings.Contains(string(e.do(t, "GET", addr, nil).Body), `"verificationStatus":"Failed"`)
	})
	if n := e.eventCount(t, "verification.failed"); n != 1 {
		t.Fatalf("%d verification.failed events", n)
	}
}

// TestNoCodeForNumbersThatCannotText: codes go by text only, so a Fax number
// or one added with canText false is refused a nonce and a resend (409),
// and no quota is spent and nothing is sent.
func TestNoCodeForNumbersThatCannotText(t *testing.T) {
	t.Parallel()
	e := start(t)
	id := e.createUser(t, "Fax", "Only")
	want(t, e.do(t, "POST", e.user(id)+"/contact/phones", map[string]any{"number": "4155552672", "country": "US", "type": "Fax"}), 201)
	want(t, e.do(t, "POST", e.user(id)+"/contact/phones", map[string]any{"number": "4155552673", "country": "US", "type": "Home", "canText": false}), 201)
	for _, number := range []string{"+14155552672", "+14155552673"} {
		num := phonePath(e, id, number)
		for i := range 6 {
			p := wantProblem(t, e.do(t, "POST", num+"/verification/nonce", map[string]any{"nonce": "fax-nonce-" + strconv.Itoa(i)}), 409, "")
			if !strings.Contains(p.Error(), "cannot take texts") {
				t.Fatalf("%s: %s", number, p.Error())
			}
		}
		wantProblem(t, e.do(t, "POST", num+"/verification/resend", map[string]any{"nonce": "fax-nonce-0"}), 409, "")
	}
	// A number that can take texts is not held back by them.
	want(t, e.do(t, "POST", e.user(id)+"/contact/phones", map[string]any{"number": "4155552674", "country": "US", "type": "Mobile"}), 201)
	e.resend(t, phonePath(e, id, "+14155552674"))
	e.textCode(t, "+14155552674", 1)
	for _, m := range e.sb.SMS.Messages() {
		if m.To == "+14155552672" || m.To == "+14155552673" {
			t.Fatalf("a code was texted to %s", m.To)
		}
	}
}

// TestAnAddressAddedAgainGetsItsCodes: an address removed after codes were
// sent to it and added again gets a code on its first resend, and the code
// sent before the removal does not verify it.
func TestAnAddressAddedAgainGetsItsCodes(t *testing.T) {
	t.Parallel()
	e := start(t)
	id := e.createUser(t, "Grace", "Hopper")
	const address = "grace@example.com"
	want(t, e.do(t, "POST", e.user(id)+"/contact/emails", map[string]any{"address": address}), 201)
	addr := emailPath(e, id, address)
	e.resend(t, addr)
	old := e.emailCode(t, address, 1)
	// A second resend: the old run has seen resend 2.
	e.resend(t, addr)
	e.emailCode(t, address, 2)

	want(t, e.do(t, "DELETE", addr, nil), 204)
	want(t, e.do(t, "POST", e.user(id)+"/contact/emails", map[string]any{"address": address}), 201)
	wantProblem(t, e.do(t, "POST", addr+"/verification/verify", map[string]any{"code": old}), 409, "")
	e.resend(t, addr)
	code := e.emailCode(t, address, 3)
	want(t, e.do(t, "POST", addr+"/verification/verify", map[string]any{"code": code}), 200)
}
