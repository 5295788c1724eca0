package alerting

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/tocsin/tocsin/alert"
	"github.com/tocsin/tocsin/api/model"
	"github.com/tocsin/tocsin/api/rest"
	"github.com/tocsin/tocsin/hooks/events"
	"github.com/tocsin/tocsin/internal/alertmsg"
	"github.com/tocsin/tocsin/storage"
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
	tenant, alertID, seq, err := alertmsg.ParseResponseToken(h.linkSecret(), token)
	if err != nil {
		return nil, rest.NotFound("response link")
	}
	al, err := storage.GetAlert(ctx, h.d.DB, tenant, alertID)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, rest.NotFound("response link")
	}
	if err != nil {
		return nil, rest.Unavailable("the database", err)
	}
	var s alert.Settings
	if err := json.Unmarshal(al.Settings, &s); err != nil {
		return nil, err
	}
	var n int
	if err := h.d.DB.GetContext(ctx, &n, `SELECT count(*) FROM alert_recipients WHERE alert_id = $1 AND tenant_id = $2 AND seq = $3`,
		alertID, tenant, seq); err != nil {
		return nil, rest.Unavailable("the database", err)
	}
	if n == 0 {
		return nil, rest.NotFound("response link")
	}
	return &responseTarget{tenant: tenant, alert: al, s: &s, seq: seq}, nil
}

func (h *handler) linkSecret() []byte {
	return alertmsg.LinkSecret(h.d.Config.SecretsKey, h.d.Config.JWTSecret)
}

func (t *responseTarget) answers(ctx context.Context, db sqlx.QueryerContext) ([]model.RecipientResponse, bool, error) {
	var rs []struct {
		Question int       `db:"question_id"`
		Option   int       `db:"option_id"`
		Via      string    `db:"via"`
		At       time.Time `db:"responded_at"`
	}
	if err := sqlx.SelectContext(ctx, db, &rs, `SELECT question_id, option_id, via, responded_at FROM alert_responses
		WHERE alert_id = $1 AND tenant_id = $2 AND seq = $3 ORDER BY question_id`, t.alert.ID, t.tenant, t.seq); err != nil {
		return nil, false, rest.Unavailable("the database", err)
	}
	texts := optionTexts(t.s)
	out := []model.RecipientResponse{}
	for _, r := range rs {
		out = append(out, model.RecipientResponse{QuestionID: r.Question, OptionID: r.Option, OptionText: texts[r.Option], RespondedAt: r.At, Via: r.Via})
	}
	var confirmed bool
	if err := sqlx.GetContext(ctx, db, &confirmed, `SELECT confirmed_at IS NOT NULL FROM alert_recipients WHERE alert_id = $1 AND tenant_id = $2 AND seq = $3`,
		t.alert.ID, t.tenant, t.seq); err != nil {
		return nil, false, rest.Unavailable("the database", err)
	}
	return out, confirmed, nil
}

type responsePageInput struct {
	Token string `path:"token" maxLength:"300" doc:"The recipient's personal token from the alert's message."`
	Done  bool   `query:"done" doc:"Shows the thank-you note after an answer."`
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
{{if .Done}}<p><strong>Thank you, your answer was recorded.</strong></p>{{end}}
{{range .Questions}}<h2>{{.Text}}</h2>
{{range .Options}}<form method="post" action="{{$.Action}}?optionId={{.ID}}"><button type="submit">{{.Text}}{{if .Chosen}} (your answer){{end}}</button></form>
{{end}}{{end}}
{{if .Confirm}}<form method="post" action="{{.Action}}?confirm=true"><button type="submit">{{if .Confirmed}}Confirmed{{else}}I have received this alert{{end}}</button></form>{{end}}
</body></html>
`))

func (h *handler) getAlertResponsePage(ctx context.Context, in *responsePageInput) (*responsePageOutput, error) {
	t, err := h.target(ctx, in.Token)
	if err != nil {
		return nil, err
	}
	answers, confirmed, err := t.answers(ctx, h.d.DB)
	if err != nil {
		return nil, err
	}
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
		Confirmed             bool
		Questions             []question
	}{
		Subject: t.s.Message.Subject, Action: alertmsg.ResponsePath + in.Token, Done: in.Done, Confirmed: confirmed,
		Confirm: t.s.Workflow != nil && t.s.Workflow.ConfirmationRequested,
	}
	if rd, err := alert.NewRenderer(t.tenant, t.alert.ID, t.s, "", nil); err == nil {
		var r storage.RecipientRow
		if err := h.d.DB.GetContext(ctx, &r, `SELECT seq, person_id, external_id, first_name, last_name, email, phone, voice_phone,
			custom_fields, is_mandatory FROM alert_recipients WHERE alert_id = $1 AND tenant_id = $2 AND seq = $3`, t.alert.ID, t.tenant, t.seq); err == nil {
			data.Body = rd.Message("email", &r, "").Text
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
	Accept   string `header:"Accept" doc:"A browser (text/html) is redirected back to the response page."`
}

type respondOutput struct {
	Status   int
	Location string `header:"Location" doc:"For browsers: the response page."`
	Body     *AlertResponseResult
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
	if w := t.s.Workflow; w != nil && w.BroadcastDurationMinutes > 0 && t.alert.CompletedAt != nil {
		return nil, rest.Problem(http.StatusGone, "the alert is closed: its broadcast duration has passed")
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
	now := time.Now().UTC()
	var res AlertResponseResult
	err = h.d.DB.InTx(ctx, func(tx *sqlx.Tx) error {
		var personID *int64
		if err := tx.GetContext(ctx, &personID, `UPDATE alert_recipients SET confirmed_at = coalesce(confirmed_at, $4),
				responded_at = CASE WHEN $5 THEN $4 ELSE responded_at END
			WHERE alert_id = $1 AND tenant_id = $2 AND seq = $3 RETURNING person_id`,
			t.alert.ID, t.tenant, t.seq, now, question > 0); err != nil {
			return fmt.Errorf("record response: %w", err)
		}
		if question > 0 {
			if _, err := tx.ExecContext(ctx, `INSERT INTO alert_responses (tenant_id, alert_id, seq, question_id, option_id, via, responded_at)
				VALUES ($1, $2, $3, $4, $5, 'link', $6)
				ON CONFLICT (alert_id, seq, question_id) DO UPDATE SET option_id = excluded.option_id, responded_at = excluded.responded_at`,
				t.tenant, t.alert.ID, t.seq, question, in.OptionID, now); err != nil {
				return fmt.Errorf("record answer: %w", err)
			}
		}
		ev := events.RecipientResponded{AlertID: t.alert.ID, RecipientID: t.seq, ContactID: personID, Confirmed: true, Via: "link", RespondedAt: now}
		if question > 0 {
			q, o := int64(question), int64(in.OptionID)
			ev.QuestionID, ev.OptionID, ev.OptionText = &q, &o, &optionText
		}
		if _, err := storage.EmitEvent(ctx, tx, t.tenant, storage.EventRecipientResponded, ev); err != nil {
			return err
		}
		answers, confirmed, err := t.answers(ctx, tx)
		if err != nil {
			return err
		}
		res = AlertResponseResult{AlertID: t.alert.ID, RecipientID: t.seq, Confirmed: confirmed, Answers: answers}
		return nil
	})
	if err != nil {
		var pd *rest.ProblemDetails
		if errors.As(err, &pd) {
			return nil, pd
		}
		return nil, rest.Unavailable("the database", err)
	}
	if strings.Contains(in.Accept, "text/html") {
		return &respondOutput{Status: http.StatusSeeOther, Location: alertmsg.ResponsePath + in.Token + "?done=true"}, nil
	}
	return &respondOutput{Status: http.StatusOK, Body: &res}, nil
}

// DeliveryReceipt is a provider's report on one delivery.
type DeliveryReceipt struct {
	Key               string     `json:"key" minLength:"1" maxLength:"300" doc:"The idempotency key tocsin sent with the message." example:"alert-1001-42:text:1:7"`
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

type receiptsOutput struct {
	Body DeliveryReceiptsResult
}

func (h *handler) receiveDeliveryReceipts(ctx context.Context, in *receiptsInput) (*receiptsOutput, error) {
	want := h.d.Config.ReceiptsToken
	got, _ := strings.CutPrefix(in.Authorization, "Bearer ")
	if want == "" || subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1 {
		return nil, rest.Problem(http.StatusUnauthorized, "a valid receipts token is required").WithHeader("WWW-Authenticate", `Bearer realm="tocsin-receipts"`)
	}
	out := receiptsOutput{Body: DeliveryReceiptsResult{Ignored: []string{}}}
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
	tenant, alertID, ch, cycle, seq, err := alert.ParseDeliveryKey(r.Key)
	if err != nil {
		return false, nil
	}
	at := time.Now().UTC()
	if r.At != nil {
		at = *r.At
	}
	applied := false
	err = h.d.DB.InTx(ctx, func(tx *sqlx.Tx) error {
		var res interface{ RowsAffected() (int64, error) }
		var err error
		if r.Status == "delivered" {
			res, err = tx.ExecContext(ctx, `UPDATE alert_deliveries SET status = 'Delivered', delivered_at = $6, updated_at = now(),
				provider_message_id = CASE WHEN $7 = '' THEN provider_message_id ELSE $7 END
				WHERE tenant_id = $1 AND alert_id = $2 AND channel = $3 AND cycle = $4 AND seq = $5 AND status IN ('Sent', 'Delivered')`,
				tenant, alertID, ch, cycle, seq, at, r.ProviderMessageID)
		} else {
			res, err = tx.ExecContext(ctx, `UPDATE alert_deliveries SET status = 'Failed', error = $6, permanent = true, updated_at = now()
				WHERE tenant_id = $1 AND alert_id = $2 AND channel = $3 AND cycle = $4 AND seq = $5 AND status IN ('Sent', 'Failed')`,
				tenant, alertID, ch, cycle, seq, firstOf(r.Error, "the provider reported a failure"))
		}
		if err != nil {
			return fmt.Errorf("apply receipt: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil
		}
		applied = true
		var bs int64
		if err := tx.GetContext(ctx, &bs, `SELECT batch_size FROM alerts WHERE tenant_id = $1 AND id = $2`, tenant, alertID); err != nil {
			return fmt.Errorf("read batch size: %w", err)
		}
		if bs <= 0 {
			return nil
		}
		lo := (seq - 1) / bs * bs
		return storage.RecountBatch(ctx, tx, storage.BatchKey{Tenant: tenant, AlertID: alertID, Channel: ch, Cycle: cycle, Lo: lo, Hi: lo + bs})
	})
	return applied, err
}
