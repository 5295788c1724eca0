package alerting

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/tocsin/tocsin/alert"
	"github.com/tocsin/tocsin/api/model"
	"github.com/tocsin/tocsin/api/rest"
	"github.com/tocsin/tocsin/internal/alertmsg"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/results"
)

// AlertResponseResult answers a recipient's response.
type AlertResponseResult struct {
	AlertID     int64                     `json:"alertId" example:"42"`
	RecipientID int64                     `json:"recipientId" example:"7"`
	Confirmed   bool                      `json:"confirmed"`
	Answers     []model.RecipientResponse `json:"answers" doc:"The recipient's current answers."`
}

type responseTarget struct {
	tenant string
	alert  *storage.Alert
	s      *alert.Settings
	seq    int64
}

// target checks a response token and reads what it names.
func (h *handler) target(ctx context.Context, token string) (*responseTarget, error) {
	link, err := alertmsg.ParseResponseToken(h.linkSecret(), token)
	if err != nil {
		return nil, rest.NotFound("response link")
	}
	tenant, alertID, seq := link.Tenant, link.AlertID, link.Seq
	al, err := storage.GetAlert(ctx, h.d.DB, tenant, alertID)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, rest.NotFound("response link")
	}
	if err != nil {
		return nil, rest.Unavailable("the database", err)
	}
	// A link of another alert of this id (one stored before the database
	// was restored from a backup) is not this alert's.
	if link.Tag != alert.TagOf(tenant, alertID, al.WorkflowID) {
		return nil, rest.NotFound("response link")
	}
	var s alert.Settings
	if err := json.Unmarshal(al.Settings, &s); err != nil {
		return nil, err
	}
	ok, err := h.results.HasRecipient(ctx, tenant, alertID, seq)
	if err != nil {
		return nil, rest.Unavailable("the database", err)
	}
	if !ok {
		return nil, rest.NotFound("response link")
	}
	return &responseTarget{tenant: tenant, alert: al, s: &s, seq: seq}, nil
}

// closed says whether the alert no longer takes responses: it had a
// broadcast duration, and its workflow has completed after it.
func (t *responseTarget) closed() bool {
	w := t.s.Workflow
	return w != nil && w.BroadcastDurationMinutes > 0 && t.alert.CompletedAt != nil
}

func (h *handler) linkSecret() []byte {
	return alertmsg.LinkSecret(h.d.Config.SecretsKey, h.d.Config.JWTSecret)
}

// answers are the recipient's answers as the API shows them.
func (t *responseTarget) answers(as []results.Answer) []model.RecipientResponse {
	texts := optionTexts(t.s)
	out := []model.RecipientResponse{}
	for _, r := range as {
		out = append(out, model.RecipientResponse{QuestionID: r.Question, OptionID: r.Option, OptionText: texts[r.Option], RespondedAt: r.At, Via: r.Via})
	}
	return out
}

type responsePageInput struct {
	Token string `path:"token" maxLength:"300" doc:"The recipient's personal token from the alert's message."`
	Done  bool   `query:"done" doc:"Shows the thank-you note after an answer."`
	// RetryAfter is set by respondToAlert's redirect of a change refused
	// because the link changed its answers too often.
	RetryAfter int `query:"retryAfter" minimum:"0" maximum:"86400" doc:"Says the answer was not changed because this link changed its answers too often, and that it can change them again in this many seconds."`
}

type responsePageOutput struct {
	ContentType string `header:"Content-Type"`
	// The page is personal: never sniffed as something else, framed by
	// another site, cached, or named in a Referer sent onwards.
	ContentTypeOptions string `header:"X-Content-Type-Options" doc:"Always nosniff."`
	FrameOptions       string `header:"X-Frame-Options" doc:"Always DENY: the page may not be framed."`
	SecurityPolicy     string `header:"Content-Security-Policy" doc:"No scripts, styles or frames; forms post to this server only."`
	ReferrerPolicy     string `header:"Referrer-Policy" doc:"Always no-referrer: the personal link never leaves in a Referer."`
	CacheControl       string `header:"Cache-Control" doc:"Always no-store."`
	Body               []byte
}

// pageOutput is the response page with its security headers.
func pageOutput(html string) *responsePageOutput {
	return &responsePageOutput{
		ContentType: "text/html; charset=utf-8", ContentTypeOptions: "nosniff", FrameOptions: "DENY",
		SecurityPolicy: "default-src 'none'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
		ReferrerPolicy: "no-referrer", CacheControl: "no-store", Body: []byte(html),
	}
}

var pageTemplate = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Subject}}</title></head><body>
<h1>{{.Subject}}</h1>
<p>{{.Body}}</p>
{{if .Closed}}<p><strong>This alert is closed: answers are no longer taken.</strong></p>
{{else if .RetryMinutes}}<p><strong>Your answer was not changed: it has been changed too often through this link. You can change it again in {{.RetryMinutes}} minute{{if gt .RetryMinutes 1}}s{{end}}.</strong></p>
{{else if .Done}}<p><strong>Thank you, your answer was recorded.</strong></p>{{end}}
{{range .Questions}}<h2>{{.Text}}</h2>
{{range .Options}}{{if $.Closed}}<p>{{.Text}}{{if .Chosen}} (your answer){{end}}</p>{{else}}<form method="post" action="{{$.Action}}?optionId={{.ID}}"><button type="submit">{{.Text}}{{if .Chosen}} (your answer){{end}}</button></form>{{end}}
{{end}}{{end}}
{{if .Confirm}}{{if .Closed}}<p>{{if .Confirmed}}Confirmed.{{else}}Not confirmed.{{end}}</p>{{else}}<form method="post" action="{{.Action}}?confirm=true"><button type="submit">{{if .Confirmed}}Confirmed{{else}}I have received this alert{{end}}</button></form>{{end}}{{end}}
</body></html>
`))

func (h *handler) getAlertResponsePage(ctx context.Context, in *responsePageInput) (*responsePageOutput, error) {
	t, err := h.target(ctx, in.Token)
	if err != nil {
		return nil, err
	}
	as, confirmed, err := h.results.RecipientAnswers(ctx, t.tenant, t.alert.ID, t.seq)
	if err != nil {
		return nil, rest.Unavailable("the database", err)
	}
	answers := t.answers(as)
	chosen := map[int]bool{}
	for _, a := range answers {
		chosen[a.OptionID] = true
	}
	type opt struct {
		ID     int
		Text   string
		Chosen bool
	}
	type question struct {
		Text    string
		Options []opt
	}
	data := struct {
		Subject, Body, Action string
		Done, Confirm         bool
		Confirmed, Closed     bool
		RetryMinutes          int
		Questions             []question
	}{
		Subject: t.s.Message.Subject, Action: alertmsg.ResponsePath + in.Token, Done: in.Done, Confirmed: confirmed, Closed: t.closed(),
		RetryMinutes: (in.RetryAfter + 59) / 60,
		Confirm:      t.s.Workflow != nil && t.s.Workflow.ConfirmationRequested,
	}
	if rd, err := alert.NewRenderer(t.tenant, t.alert.ID, t.s, "", nil); err == nil {
		if r, err := h.results.Recipient(ctx, t.tenant, t.alert.ID, t.seq); err == nil {
			m, _ := rd.Message("email", &r.RecipientRow, "")
			data.Body = m.Text
		}
	}
	if t.s.Survey != nil {
		for _, q := range t.s.Survey.Questions {
			qq := question{Text: q.Text}
			for _, o := range q.Options {
				qq.Options = append(qq.Options, opt{ID: o.ID, Text: o.Text, Chosen: chosen[o.ID]})
			}
			data.Questions = append(data.Questions, qq)
		}
	}
	var b strings.Builder
	if err := pageTemplate.Execute(&b, data); err != nil {
		return nil, fmt.Errorf("render response page: %w", err)
	}
	return pageOutput(b.String()), nil
}

type respondInput struct {
	Token    string `path:"token" maxLength:"300" doc:"The recipient's personal token from the alert's message."`
	OptionID int    `query:"optionId" minimum:"0" doc:"The chosen poll option (a Poll alert's answer)."`
	Confirm  bool   `query:"confirm" doc:"Confirm receipt of the alert."`
	Accept   string `header:"Accept" doc:"A browser (text/html) is redirected (303) back to the response page, which shows the answer or that the alert is closed."`
}

type respondOutput struct {
	Status   int
	Location string `header:"Location" doc:"For browsers: the response page."`
	// Body is also sent with a browser's 303, so that no answer is a bare
	// JSON null.
	Body *AlertResponseResult
}

// respondToAlert records a poll answer or a confirmation through a
// recipient's personal link, and emits alert.recipient.responded.
func (h *handler) respondToAlert(ctx context.Context, in *respondInput) (*respondOutput, error) {
	t, err := h.target(ctx, in.Token)
	if err != nil {
		return nil, err
	}
	if in.OptionID == 0 && !in.Confirm {
		return nil, rest.Invalid("query", "optionId", "give optionId (a poll answer) or confirm=true", nil)
	}
	browser := strings.Contains(in.Accept, "text/html")
	if t.closed() {
		if !browser {
			return nil, rest.Problem(http.StatusGone, "the alert is closed: its broadcast duration has passed")
		}
		// The page says the alert is closed and shows the answers that count.
		return h.unchanged(ctx, t, in.Token, "?done=true")
	}
	question, optionText := 0, ""
	if in.OptionID > 0 {
		if t.s.Survey != nil {
			for _, q := range t.s.Survey.Questions {
				for _, o := range q.Options {
					if o.ID == in.OptionID {
						question, optionText = q.ID, o.Text
					}
				}
			}
		}
		if question == 0 {
			return nil, rest.Invalid("query", "optionId", "not an option of this alert's poll", in.OptionID)
		}
	} else if t.s.Workflow == nil || !t.s.Workflow.ConfirmationRequested {
		if t.s.Type != alert.TypePoll {
			return nil, rest.Invalid("query", "confirm", "this alert does not ask for confirmation", true)
		}
	}
	as, confirmed, err := h.results.Respond(ctx, results.Response{Tenant: t.tenant, AlertID: t.alert.ID, Seq: t.seq,
		Question: question, Option: in.OptionID, OptionText: optionText, At: time.Now().UTC()})
	var limited *results.ChangeLimitedError
	if errors.As(err, &limited) {
		secs := int(math.Ceil(limited.RetryAfter.Seconds()))
		if browser {
			// The page says the answer was not changed, and when it can be.
			return h.unchanged(ctx, t, in.Token, "?retryAfter="+strconv.Itoa(secs))
		}
		return nil, rest.Problem(http.StatusTooManyRequests, fmt.Sprintf("this link has changed its answers too often (%d changes at once, then one every %d minutes): "+
			"the answer was not changed; retry in %d seconds", results.AnswerChangeBurst, int(results.AnswerChangeInterval.Minutes()), secs)).
			WithHeader("Retry-After", strconv.Itoa(secs))
	}
	if err != nil {
		return nil, rest.Unavailable("the database", err)
	}
	return t.answered(in.Token, browser, as, confirmed), nil
}

// unchanged answers a browser's response through token that could not
// change anything (the alert is closed, or the link changed its answers
// too often): the recipient's answers as they are, with a redirect to the
// page with query, which says why.
func (h *handler) unchanged(ctx context.Context, t *responseTarget, token, query string) (*respondOutput, error) {
	as, confirmed, err := h.results.RecipientAnswers(ctx, t.tenant, t.alert.ID, t.seq)
	if err != nil {
		return nil, rest.Unavailable("the database", err)
	}
	out := t.answered(token, true, as, confirmed)
	out.Location = alertmsg.ResponsePath + token + query
	return out, nil
}

// answered is the answer to a response through token: the recipient's
// answers, sent with a redirect back to the page to a browser.
func (t *responseTarget) answered(token string, browser bool, as []results.Answer, confirmed bool) *respondOutput {
	out := &respondOutput{Status: http.StatusOK, Body: &AlertResponseResult{AlertID: t.alert.ID, RecipientID: t.seq, Confirmed: confirmed, Answers: t.answers(as)}}
	if browser {
		out.Status, out.Location = http.StatusSeeOther, alertmsg.ResponsePath+token+"?done=true"
	}
	return out
}

// DeliveryReceipt is a provider's report on one delivery.
type DeliveryReceipt struct {
	Key               string     `json:"key" minLength:"1" maxLength:"300" doc:"The idempotency key tocsin sent with the message." example:"alert-1001-42-k3x7q2ab:text:1:7"`
	Status            string     `json:"status" enum:"delivered,failed" doc:"What became of the message."`
	ProviderMessageID string     `json:"providerMessageId,omitempty" maxLength:"200"`
	Error             string     `json:"error,omitempty" maxLength:"1000" doc:"Why it failed."`
	At                *time.Time `json:"at,omitempty" doc:"When it happened; now when absent."`
}

// DeliveryReceipts is a batch of receipts.
type DeliveryReceipts struct {
	Receipts []DeliveryReceipt `json:"receipts" minItems:"1" maxItems:"1000"`
}

// DeliveryReceiptsResult says what was applied.
type DeliveryReceiptsResult struct {
	Applied int      `json:"applied" doc:"Receipts that changed a delivery."`
	Ignored []string `json:"ignored" doc:"Keys of receipts that matched no sent delivery (unknown, malformed, or already final in another state)."`
}

type receiptsInput struct {
	Authorization string `header:"Authorization" doc:"Bearer followed by the receipts token (TOCSIN_RECEIPTS_TOKEN)."`
	Body          DeliveryReceipts
}

func (h *handler) receiveDeliveryReceipts(ctx context.Context, in *receiptsInput) (*rest.Output[DeliveryReceiptsResult], error) {
	want := h.d.Config.ReceiptsToken
	got, _ := strings.CutPrefix(in.Authorization, "Bearer ")
	if want == "" || subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1 {
		return nil, rest.Problem(http.StatusUnauthorized, "a valid receipts token is required").WithHeader("WWW-Authenticate", `Bearer realm="tocsin-receipts"`)
	}
	out := rest.Output[DeliveryReceiptsResult]{Body: DeliveryReceiptsResult{Ignored: []string{}}}
	for _, r := range in.Body.Receipts {
		ok, err := h.applyReceipt(ctx, r)
		if err != nil {
			return nil, rest.Unavailable("the database", err)
		}
		if ok {
			out.Body.Applied++
		} else {
			out.Body.Ignored = append(out.Body.Ignored, r.Key)
		}
	}
	return &out, nil
}

func (h *handler) applyReceipt(ctx context.Context, r DeliveryReceipt) (bool, error) {
	k, err := alert.ParseDeliveryKey(r.Key)
	if err != nil {
		return false, nil
	}
	ref := results.DeliveryRef{Tenant: k.Tenant, AlertID: k.AlertID, Channel: k.Channel, Cycle: k.Cycle, Seq: k.Seq, WorkflowID: k.WorkflowID()}
	at := time.Now().UTC()
	if r.At != nil {
		at = *utc(r.At)
	}
	if r.Status == "delivered" {
		return h.results.ApplyReceipt(ctx, ref, results.Receipt{Delivered: true, At: at, ProviderMessageID: r.ProviderMessageID})
	}
	return h.results.ApplyReceipt(ctx, ref, results.Receipt{Error: firstOf(r.Error, "the provider reported a failure")})
}
