package alerting

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"path"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/danielgtaylor/huma/v2"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
	"github.com/minio/minio-go/v7"

	"github.com/tocsin/tocsin/alert"
	"github.com/tocsin/tocsin/api/files/fileservice"
	"github.com/tocsin/tocsin/api/model"
	"github.com/tocsin/tocsin/api/rest"
	"github.com/tocsin/tocsin/hooks/events"
	"github.com/tocsin/tocsin/internal/names"
	"github.com/tocsin/tocsin/media"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/files"
	"github.com/tocsin/tocsin/workflows"
)

// upload is an attachment received with the alert.
type upload struct {
	name, contentType string
	data              []byte
}

// create validates, stores and starts one alert. key is the client's job id
// or Idempotency-Key, and where the request gave it: when the tenant
// already has an alert with it, the request is a retry of the one that
// created that alert, which is returned with replayed true, or it reuses
// the key for another alert, which is refused (see replay). loc and prefix
// locate the alert in the request for validation failures.
func (h *handler) create(ctx context.Context, req model.SendAlertRequest, key keyGiven, att *upload, loc, prefix string) (*model.SendAlertResponse, error) {
	tenant := rest.Tenant(ctx)
	var digest []byte
	if key.key != "" {
		digest = requestDigest(req, att)
		if al, err := storage.GetAlertByClientKey(ctx, h.d.DB, tenant, key.key); err == nil {
			return replay(al, digest, key)
		} else if !errors.Is(err, storage.ErrNotFound) {
			return nil, rest.Unavailable("the database", err)
		}
	}
	p, err := h.prepare(ctx, tenant, req.Settings, loc, prefix)
	if err != nil {
		return nil, err
	}
	if err := fitsWithStored(att, p.attachments, prefix); err != nil {
		return nil, err
	}
	if err := h.admit(ctx, tenant, p.settings.Priority.Priority); err != nil {
		return nil, err
	}
	id, err := storage.NextAlertID(ctx, h.d.DB)
	if err != nil {
		return nil, rest.Unavailable("the database", err)
	}
	// The tag makes the workflow id and delivery keys this alert's alone,
	// even if the id was handed out before (the database restored from a
	// backup while Temporal and the providers remember the alerts since).
	tag := alert.NewTag()
	if err := h.checkTextOf(tenant, id, &p.settings, loc, prefix); err != nil {
		return nil, err
	}
	refs := p.attachments
	var attPrefix string
	if att != nil {
		if h.d.Objects == nil {
			return nil, rest.Unavailable("the object store", errors.New("not configured"))
		}
		attPrefix = storage.AttachmentPrefix(tenant, id, tag)
		refs = append(refs, storage.AttachmentRef{
			Name: att.name, ContentType: att.contentType, Size: int64(len(att.data)), Key: attPrefix + att.name,
		})
	}
	settings, err := settingsJSON(p.settings)
	if err != nil {
		return nil, err
	}
	attJSON, _ := json.Marshal(refs)
	if refs == nil {
		attJSON = []byte("[]")
	}
	s := p.settings
	al := &storage.Alert{
		ID: id, TenantID: tenant, CreatedBy: rest.Caller(ctx).Subject, Type: string(s.Type), Priority: string(s.Priority.Priority),
		Subject: s.Message.Subject, Channels: pq.StringArray(p.channels), Settings: settings, Attachments: attJSON,
		Status: storage.AlertQueued, WorkflowID: alert.WorkflowID(tenant, id, tag), ScheduledFor: p.sendAt,
		CreatedAt: time.Now().UTC(),
	}
	if key.key != "" {
		al.ClientKey = sql.NullString{String: key.key, Valid: true}
		al.RequestDigest = digest
	}
	if p.sendAt != nil {
		al.Status = storage.AlertScheduled
	}
	if s.Sender != nil {
		al.SenderName = s.Sender.Name
	}
	if s.Incident != nil {
		al.IncidentName = s.Incident.Name
	}
	al.FacilityNames = pq.StringArray{}
	if s.Facility != nil {
		for _, f := range s.Facility.Facilities {
			al.FacilityNames = append(al.FacilityNames, f.Name)
		}
	}
	if s.Security != nil {
		al.Hidden, al.Restricted = s.Security.Hidden, s.Security.RestrictedToSender
	}
	ev := events.AlertOf(al, al.Status)
	evs := []storage.OutboxEvent{{Type: storage.EventAlertCreated,
		Payload: events.AlertCreated{Alert: ev, CreatedBy: al.CreatedBy, ScheduledFor: p.sendAt}}}
	if al.Status == storage.AlertQueued {
		evs = append(evs, storage.OutboxEvent{Type: storage.EventAlertQueued, Payload: events.AlertQueued{Alert: ev}})
	}
	// The start request commits with the alert; the starter starts the
	// workflow right after (see dispatch.Starter), so an accepted alert is
	// started even when this process dies now.
	in := workflows.SendAlertInput{Tenant: tenant, AlertID: id, Tag: tag}
	if p.sendAt != nil {
		in.SendAt = *p.sendAt
	}
	var release func(context.Context, *sqlx.Tx) error
	if att != nil {
		if err := h.storeAttachment(ctx, tenant, attPrefix, refs[len(refs)-1], att.data); err != nil {
			return nil, err
		}
		release = files.ReleaseIn(tenant, attPrefix)
	}
	err = storage.AcceptAlert(ctx, h.d.DB, al, evs, storage.StartRequest{
		TenantID: tenant, WorkflowID: al.WorkflowID, Workflow: "SendAlert", Input: in, Priority: storage.AlertPriority(al.Priority),
	}, release)
	if err != nil && att != nil {
		h.dropAttachment(tenant, attPrefix)
	}
	if errors.Is(err, storage.ErrConflict) {
		existing, gerr := storage.GetAlertByClientKey(ctx, h.d.DB, tenant, key.key)
		if gerr != nil {
			return nil, rest.Unavailable("the database", gerr)
		}
		return replay(existing, digest, key)
	}
	if errors.Is(err, files.ErrClaimLost) {
		return nil, rest.Problem(http.StatusServiceUnavailable, fmt.Sprintf(
			"storing the alert took longer than %s (the database is busy or slow): its attachment was removed and the alert not stored; send it again",
			h.attachmentLife())).WithHeader("Retry-After", "30")
	}
	if err != nil {
		return nil, rest.Unavailable("the database", err)
	}
	h.d.WakeStarts()
	return responseOf(al, false), nil
}

// attachmentLife is how long the request may take from storing an alert's
// attachment to storing the alert: an upload's maximum life.
func (h *handler) attachmentLife() time.Duration {
	if life := h.d.Config.FileUploadMaxLife; life > 0 {
		return life
	}
	return fileservice.DefaultMaxLife
}

// storeAttachment claims prefix, the attachment's (storage.AttachmentPrefix),
// then writes the attachment's object under it. From then on the object
// belongs to the claim until the transaction that stores the alert
// releases it (files.ReleaseIn); a refused alert removes the object and
// the claim (dropAttachment), and when the process dies in between, the
// worker's orphan sweep removes the object once the claim expires
// (attachmentLife).
func (h *handler) storeAttachment(ctx context.Context, tenant, prefix string, ref storage.AttachmentRef, data []byte) error {
	c := files.UploadClaim{Tenant: tenant, Prefix: prefix}
	if err := h.files.Claim(ctx, c, h.attachmentLife()); err != nil {
		return rest.Unavailable("the database", err)
	}
	if _, err := h.d.Objects.Client.PutObject(ctx, h.d.Objects.Bucket, ref.Key, bytes.NewReader(data), ref.Size,
		minio.PutObjectOptions{ContentType: ref.ContentType}); err != nil {
		h.dropAttachment(tenant, prefix)
		return rest.Unavailable("the object store", err)
	}
	return nil
}

// dropAttachment removes the attachment of a refused alert, then its
// claim, with a context of its own (the request's may have ended). When
// the object store fails,
// the claim stays, and the orphan sweep removes what is left once it
// expires.
func (h *handler) dropAttachment(tenant, prefix string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := h.d.Objects.RemovePrefix(ctx, prefix); err != nil {
		h.d.Logger.Warn("remove the attachment of a refused alert", "err", err)
		return
	}
	if err := h.files.Release(ctx, tenant, prefix); err != nil {
		h.d.Logger.Warn("release the claim on a refused alert's attachment", "err", err)
	}
}

// admit refuses a NonEmergency alert while the backlog of NonEmergency
// alerts accepted and not final is too deep: the tenant's (429) or every
// tenant's (503). Emergency alerts are always admitted. Well below the
// limits a recent count stands in for a new one (backlogEstimate).
func (h *handler) admit(ctx context.Context, tenant string, priority alert.PriorityType) error {
	cfg := h.d.Config
	if priority == alert.PriorityEmergency || (cfg.BacklogTenantLimit <= 0 && cfg.BacklogLimit <= 0) {
		return nil
	}
	now := time.Now()
	if h.backlog.admit(tenant, cfg.BacklogTenantLimit, cfg.BacklogLimit, now) {
		return nil
	}
	ofTenant, overall, err := storage.AlertBacklog(ctx, h.d.DB, tenant, cfg.BacklogTenantLimit, cfg.BacklogLimit)
	if err != nil {
		return rest.Unavailable("the database", err)
	}
	tenantFull := cfg.BacklogTenantLimit > 0 && ofTenant >= cfg.BacklogTenantLimit
	full := cfg.BacklogLimit > 0 && overall >= cfg.BacklogLimit
	h.backlog.record(tenant, ofTenant, overall, !tenantFull && !full, now)
	retry := strconv.Itoa(max(1, int(math.Ceil(cfg.BacklogRetryAfter.Seconds()))))
	switch {
	case tenantFull:
		return rest.Problem(http.StatusTooManyRequests, fmt.Sprintf(
			"%d NonEmergency alerts of this tenant are already waiting to be delivered; retry later (Emergency alerts are still accepted)", cfg.BacklogTenantLimit)).
			WithHeader("Retry-After", retry)
	case full:
		return rest.Problem(http.StatusServiceUnavailable, fmt.Sprintf(
			"%d NonEmergency alerts are already waiting to be delivered; retry later (Emergency alerts are still accepted)", cfg.BacklogLimit)).
			WithHeader("Retry-After", retry)
	}
	return nil
}

// requestDigest identifies the alert a request with a key asks for, so
// that a retry is told from another alert that reuses the key: the SHA-256
// of the request's canonical JSON (the SendAlertRequest as decoded, written
// back by encoding/json, so whitespace and the order of properties do not
// count) without its jobId, which is the key and may be given in another
// place on a retry, followed by the name, content type and bytes of the
// file uploaded with it.
func requestDigest(req model.SendAlertRequest, att *upload) []byte {
	req.JobID = ""
	sum := sha256.New()
	// A decoded request always encodes: it holds no channel, function or
	// cyclic value.
	_ = json.NewEncoder(sum).Encode(req)
	if att != nil {
		fmt.Fprintf(sum, "attachment %q %q %d\n", att.name, att.contentType, len(att.data))
		sum.Write(att.data)
	}
	return sum.Sum(nil)
}

// replay answers a request whose key is that of al, an alert stored
// before: al, replayed, when the request is the one that created it (the
// same digest); else a 422 naming where the request gave the key, as the
// IETF Idempotency-Key draft answers a key reused for another request.
// A keyed alert stored before digests were kept cannot be compared and is
// refused too: replaying it could answer an Emergency alert with a drill.
func replay(al *storage.Alert, digest []byte, key keyGiven) (*model.SendAlertResponse, error) {
	if al.RequestDigest != nil && bytes.Equal(al.RequestDigest, digest) {
		return responseOf(al, true), nil
	}
	msg := fmt.Sprintf("is already the key of alert %d, which a different request created: a retry must send the same alert again; give another alert a key of its own", al.ID)
	if al.RequestDigest == nil {
		msg = fmt.Sprintf("is already the key of alert %d, stored before tocsin kept what request created an alert, so this request cannot be told to be its retry: read alert %d to see whether it is the alert meant, and give another alert a key of its own", al.ID, al.ID)
	}
	loc, field, _ := strings.Cut(key.at, ".")
	p := rest.Problem(http.StatusUnprocessableEntity, "the idempotency key is already used by another alert", rest.Failure(loc, field, msg, key.key))
	p.Type = rest.ProblemTypeBase + "idempotency-key-reused"
	return nil, p
}

func responseOf(al *storage.Alert, replayed bool) *model.SendAlertResponse {
	return &model.SendAlertResponse{
		AlertID: al.ID, Status: model.AlertStatus(al.Status), WorkflowID: al.WorkflowID, JobID: al.ClientKey.String,
		ScheduledFor: al.ScheduledFor, Replayed: replayed, CreatedAt: al.CreatedAt,
	}
}

type createInput struct {
	IdempotencyKey string `header:"Idempotency-Key" maxLength:"200" doc:"A retry with the same key and the same alert returns the first alert instead of creating another (like jobId); the same key with a different alert is a 422. Keys starting with bulk: are reserved (a 400)."`
	Body           model.SendAlertRequest
}

type createOutput struct {
	Status   int
	Replayed string `header:"Idempotent-Replayed" doc:"true when the answer is the alert an earlier request with the same key created."`
	Body     *model.SendAlertResponse
}

func (h *handler) createAlerts(ctx context.Context, in *createInput) (*createOutput, error) {
	key, err := idempotencyKey(keyGiven{"header.Idempotency-Key", in.IdempotencyKey}, keyGiven{"body.jobId", in.Body.JobID})
	if err != nil {
		return nil, err
	}
	res, err := h.create(ctx, in.Body, key, nil, "body", "")
	if err != nil {
		return nil, err
	}
	return created(res), nil
}

// keyGiven is an idempotency key as a request gave it, and where.
type keyGiven struct{ at, key string }

// bulkKeyPrefix starts the keys bulkKey makes; no key a client writes
// starts with it.
const bulkKeyPrefix = "bulk:"

// checkReserved refuses a key the client wrote with bulkKeyPrefix: it
// could replay an alert of a bulk send keyed by its Idempotency-Key.
func (g keyGiven) checkReserved() error {
	if !strings.HasPrefix(g.key, bulkKeyPrefix) {
		return nil
	}
	loc, field, _ := strings.Cut(g.at, ".")
	return rest.Invalid(loc, field, "keys starting with "+bulkKeyPrefix+" are reserved for the alerts a bulk send keys from its Idempotency-Key", g.key)
}

// idempotencyKey is the one key the places of a request give, and the
// first place that gives it. Two different keys are a 400 naming the
// second place: whichever counted, a retry that gives only the other would
// create the alert again.
func idempotencyKey(given ...keyGiven) (keyGiven, error) {
	var first keyGiven
	for _, g := range given {
		if err := g.checkReserved(); err != nil {
			return keyGiven{}, err
		}
		switch {
		case g.key == "":
		case first.key == "":
			first = g
		case g.key != first.key:
			loc, field, _ := strings.Cut(g.at, ".")
			return keyGiven{}, rest.Invalid(loc, field, "differs from "+first.at+": give the key in one place, or the same key in both", g.key)
		}
	}
	return first, nil
}

func created(res *model.SendAlertResponse) *createOutput {
	out := &createOutput{Status: http.StatusCreated, Body: res}
	if res.Replayed {
		out.Status, out.Replayed = http.StatusOK, "true"
	}
	return out
}

// multipartAlert is the form of createAlertWithAttachment.
type multipartAlert struct {
	Alert      string        `form:"alert" required:"true" doc:"The alert: a SendAlertRequest as a JSON string."`
	Attachment huma.FormFile `form:"attachment" required:"false" contentType:"application/octet-stream" doc:"A file attached to the alert's email; stored in the object store. It and the stored files of content.attachments take 10 MiB together at most (more is a 400 naming this part). The part's Content-Type, which the email's part is sent with, must be a media type (type/subtype with parameters, not a range such as */* or image/*, no control character; written back in canonical form), else a 400 naming this part; without one, or with application/octet-stream, the type is detected from the data."`
	JobID      string        `form:"jobId" required:"false" maxLength:"200" doc:"Send-alert job id: a retry with the same jobId and the same alert and attachment returns the first alert; the same jobId with a different one is a 422."`
	Async      bool          `form:"async" required:"false" doc:"Deprecated and ignored: every alert is processed asynchronously by its workflow; subscribe to the alert.sent / alert.completed / alert.failed hook events to be notified when it reaches a final state."`
}

type createMultipartInput struct {
	IdempotencyKey string `header:"Idempotency-Key" maxLength:"200" doc:"A retry with the same key and the same alert and attachment returns the first alert (like jobId); the same key with a different one is a 422. Keys starting with bulk: are reserved (a 400)."`
	RawBody        huma.MultipartFormFiles[multipartAlert]
}

func (h *handler) createAlertWithAttachment(ctx context.Context, in *createMultipartInput) (*createOutput, error) {
	form := in.RawBody.Data()
	req, err := h.decodeAlert([]byte(form.Alert), "alert")
	if err != nil {
		return nil, err
	}
	var att *upload
	if form.Attachment.IsSet {
		limit := h.d.Config.FileSizeLimit
		if limit <= 0 || limit > MaxAttachmentBytes {
			limit = MaxAttachmentBytes
		}
		data, err := io.ReadAll(io.LimitReader(form.Attachment, limit+1))
		if err != nil {
			return nil, rest.Invalid("body", "attachment", "could not read the file: "+err.Error(), nil)
		}
		if int64(len(data)) > limit {
			return nil, rest.Problem(http.StatusRequestEntityTooLarge, fmt.Sprintf("the attachment is larger than %d bytes", limit))
		}
		name := names.Normal(path.Base(strings.ReplaceAll(form.Attachment.Filename, "\\", "/")))
		if fileservice.CheckPath(name) != nil {
			name = "attachment"
		}
		ct, err := attachmentType(form.Attachment.ContentType, data)
		if err != nil {
			return nil, err
		}
		att = &upload{name: name, contentType: ct, data: data}
	}
	key, err := idempotencyKey(keyGiven{"header.Idempotency-Key", in.IdempotencyKey}, keyGiven{"body.jobId", form.JobID}, keyGiven{"body.alert.jobId", req.JobID})
	if err != nil {
		return nil, err
	}
	res, err := h.create(ctx, *req, key, att, "body", "alert")
	if err != nil {
		return nil, err
	}
	return created(res), nil
}

// attachmentType is the content type the attachment's email part is sent
// with: the one its multipart part declares, checked as a media type
// (mime.ParseMediaType, no control character) and written in canonical
// form, or the one its data shows (http.DetectContentType) when the part
// declares none or application/octet-stream. Anything else, a media
// range such as */* or image/* included, is a 400 naming the part: it goes
// into the email's MIME header as it is.
func attachmentType(declared string, data []byte) (string, error) {
	if declared == "" || declared == "application/octet-stream" {
		return http.DetectContentType(data), nil
	}
	refuse := func(why string) error {
		return rest.Invalid("body", "attachment", "the part's Content-Type is not a media type ("+why+
			"): give one such as text/plain; charset=utf-8, or application/octet-stream to have it detected", declared)
	}
	if i := strings.IndexFunc(declared, unicode.IsControl); i >= 0 {
		return "", refuse(fmt.Sprintf("control character %q", declared[i]))
	}
	mt, params, err := mime.ParseMediaType(declared)
	if err != nil {
		return "", refuse(err.Error())
	}
	if !strings.Contains(mt, "/") {
		return "", refuse("no type/subtype")
	}
	if media.IsRange(mt) {
		return "", refuse(mt + " is a media range, which names many types, not the file's")
	}
	ct := mime.FormatMediaType(mt, params)
	if ct == "" {
		return "", refuse("it cannot be written back")
	}
	return ct, nil
}

// fitsWithStored refuses att, the attachment uploaded with an alert, when
// it and the stored files the alert attaches (stored) take more than
// MaxAttachmentBytes together: the email carries them all. prefix is
// where the alert lies in the form ("alert").
func fitsWithStored(att *upload, stored []storage.AttachmentRef, prefix string) error {
	if att == nil {
		return nil
	}
	var inStore int64
	for _, r := range stored {
		inStore += r.Size
	}
	if total := inStore + int64(len(att.data)); total > MaxAttachmentBytes {
		return rest.Invalid("body", "attachment", fmt.Sprintf(
			"the attachment (%d bytes) and the stored files of %s.settings.content.attachments (%d bytes) take %d bytes together, more than %d: an alert's attachments are 10 MiB together at most",
			len(att.data), prefix, inStore, total, MaxAttachmentBytes), nil)
	}
	return nil
}

// decodeAlert decodes and validates raw, the alert at field of the request
// body (the multipart part alert, the bulk item alerts[3]), against the
// SendAlertRequest schema, as huma does for JSON bodies: failures are
// located inside body.<field>.
func (h *handler) decodeAlert(raw []byte, field string) (*model.SendAlertRequest, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, rest.Invalid("body", field, "not JSON: "+err.Error(), nil)
	}
	reg := h.api.OpenAPI().Components.Schemas
	schema := reg.Schema(reflect.TypeOf(model.SendAlertRequest{}), false, "")
	loc := "body." + field
	pb := huma.NewPathBuffer([]byte(loc), len(loc))
	res := &huma.ValidateResult{}
	huma.Validate(reg, schema, pb, huma.ModeWriteToServer, v, res)
	if len(res.Errors) > 0 {
		return nil, rest.NewError(http.StatusBadRequest, "validation failed", res.Errors...)
	}
	var req model.SendAlertRequest
	if err := rest.DecodeJSONAt(raw, &req, field); err != nil {
		return nil, err
	}
	return &req, nil
}

type bulkInput struct {
	TenantID       int64  `path:"tenantId" doc:"The tenant; must be the token's tenant."`
	IdempotencyKey string `header:"Idempotency-Key" maxLength:"200" doc:"Keys each alert without a jobId as bulk:<SHA-256 of the key, hex>/<index>: a retry of the same batch with the same key creates none of its alerts twice (the alerts the first request accepted come back replayed)."`
	Body           bulkBody
}

// bulkBody is the body of sendBulkAlerts as it is read: huma validates the
// request (BulkSendAlertRequest) but leaves each alert raw, to be decoded
// and validated on its own (decodeAlert), so that an alert that does not
// fit the SendAlertRequest schema is refused alone. The document shows
// BulkSendAlertRequest (documentBulkBody).
type bulkBody struct {
	Alerts []json.RawMessage `json:"alerts"`
}

// Schema is BulkSendAlertRequest's schema with any value as an alert.
func (bulkBody) Schema(r huma.Registry) *huma.Schema {
	s := *r.Schema(reflect.TypeOf(model.BulkSendAlertRequest{}), false, "")
	alerts := *s.Properties["alerts"]
	alerts.Items = &huma.Schema{}
	s.Properties = map[string]*huma.Schema{"alerts": &alerts}
	return &s
}

// documentBulkBody documents the body of sendBulkAlerts as a
// BulkSendAlertRequest: the alerts its schema leaves raw are
// SendAlertRequests.
func documentBulkBody(api huma.API) func(*huma.Operation) {
	return func(op *huma.Operation) {
		op.RequestBody.Content["application/json"].Schema = api.OpenAPI().Components.Schemas.Schema(reflect.TypeOf(model.BulkSendAlertRequest{}), true, "")
	}
}

// bulkKey is the idempotency key of the bulk alert i, and where it was
// given: its jobId (jobID, as the item gives it), else
// bulk:<SHA-256 of the request's Idempotency-Key>/<i>. The digest keeps
// these keys apart from every jobId and single alert's key a client writes
// itself ("K/1" sent as a jobId must not replay alert 1 of batch K).
func bulkKey(jobID, header string, i int) keyGiven {
	if jobID != "" || header == "" {
		return keyGiven{fmt.Sprintf("body.alerts[%d].jobId", i), jobID}
	}
	sum := sha256.Sum256([]byte(header))
	return keyGiven{"header.Idempotency-Key", fmt.Sprintf("%s%x/%d", bulkKeyPrefix, sum, i)}
}

// bulkKeys are the idempotency keys of the alerts of a bulk send, by index
// (bulkKey), read before any alert is validated: an alert that does not
// fit the schema still has the jobId it gives, if it gives one as a
// string under that name. Two alerts of one request with one key are a 400 naming the
// jobId of the later one (or of the earlier, when the later's key is
// the one the header gave it): two alerts of one request are never a
// retry of each other, and the second would be answered with the first.
func bulkKeys(alerts []json.RawMessage, header string) ([]keyGiven, error) {
	keys := make([]keyGiven, len(alerts))
	first := map[string]int{}
	for i, raw := range alerts {
		var item map[string]json.RawMessage
		var jobID string
		if json.Unmarshal(raw, &item) == nil {
			_ = json.Unmarshal(item["jobId"], &jobID)
		}
		keys[i] = bulkKey(jobID, header, i)
		if jobID != "" {
			if err := keys[i].checkReserved(); err != nil {
				return nil, err
			}
		}
		k := keys[i].key
		if k == "" {
			continue
		}
		j, seen := first[k]
		if !seen {
			first[k] = i
			continue
		}
		named := keys[i]
		if named.at == "header.Idempotency-Key" {
			named = keys[j]
		}
		loc, field, _ := strings.Cut(named.at, ".")
		return nil, rest.Invalid(loc, field, fmt.Sprintf(
			"alerts[%d] and alerts[%d] have the same key %q: two alerts of one request are never a retry of each other; give each its own jobId", j, i, k), k)
	}
	return keys, nil
}

func (h *handler) sendBulkAlerts(ctx context.Context, in *bulkInput) (*rest.Output[model.BulkSendAlertResponse], error) {
	keys, err := bulkKeys(in.Body.Alerts, in.IdempotencyKey)
	if err != nil {
		return nil, err
	}
	out := &rest.Output[model.BulkSendAlertResponse]{Body: model.BulkSendAlertResponse{Results: []model.SendAlertResult{}}}
	for i, raw := range in.Body.Alerts {
		r := model.SendAlertResult{Index: i}
		field := fmt.Sprintf("alerts[%d]", i)
		req, err := h.decodeAlert(raw, field)
		var res *model.SendAlertResponse
		if err == nil {
			res, err = h.create(ctx, *req, keys[i], nil, "body", field)
		}
		if err != nil {
			var pd *rest.ProblemDetails
			if !errors.As(err, &pd) {
				return nil, err
			}
			if pd.Status >= 500 && i == 0 && len(in.Body.Alerts) == 1 {
				return nil, pd
			}
			// Bounded as the problem of an alert sent alone is: an error may
			// quote what the alert holds (a variable's name of 20,000
			// characters), and a batch holds up to 100 alerts.
			pd.Bound()
			r.Status, r.Detail, r.Errors, r.MoreErrors = pd.Status, pd.Detail, pd.Errors, pd.MoreErrors
			out.Body.Rejected++
		} else {
			r.Accepted, r.Alert, r.Status = true, res, http.StatusCreated
			if res.Replayed {
				r.Status = http.StatusOK
			}
			out.Body.Accepted++
		}
		out.Body.Results = append(out.Body.Results, r)
	}
	return out, nil
}
