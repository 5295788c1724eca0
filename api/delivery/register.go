// Package delivery serves the operations around channel delivery that
// tocsin adds to the interface documents: each tenant's provider settings
// per channel, the status callbacks voice and ETN providers post, and the
// ETN address-point lists.
package delivery

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/tocsin/tocsin/api/model"
	"github.com/tocsin/tocsin/api/rest"
	"github.com/tocsin/tocsin/channels"
	"github.com/tocsin/tocsin/channels/etn"
	"github.com/tocsin/tocsin/channels/providers"
	"github.com/tocsin/tocsin/channels/voice"
	"github.com/tocsin/tocsin/internal/names"
	"github.com/tocsin/tocsin/internal/secrets"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/channelstate"
	"github.com/tocsin/tocsin/storage/results"
)

type handlers struct {
	d     rest.Deps
	store *providers.Store
	calls *voice.Calls
	pts   *etn.Points
	// results records calls' outcomes and CAP updates of alerts.
	results alertResults
	// callbackSchema is the schema of a status callback's body, in
	// callbackSchemas, checked once the callback's signature verifies.
	callbackSchemas huma.Registry
	callbackSchema  *huma.Schema
}

// maxCallbackBytes bounds the body of a status callback (a few hundred
// bytes in practice), read before its signature can be checked.
const maxCallbackBytes = 64 << 10

// Register adds the delivery operations to api.
func Register(api huma.API, d rest.Deps) {
	// Provider URLs follow the outbound policy of hook targets.
	h := &handlers{d: d, store: &providers.Store{DB: d.DB, Box: d.Secrets, Guard: d.Outbound}, calls: &voice.Calls{DB: d.DB}, pts: &etn.Points{DB: d.DB},
		results: results.New(d.DB)}
	settingsArea := rest.Area{Scope: "tamarack", Tags: []string{"Channel settings"}}

	rest.Register(api, settingsArea.Op("listChannelProviderSettings", http.MethodGet, "/v2/settings/channels", 0, "List the tenant's configured channel providers",
		"Every channel the tenant configured, with secrets masked."), h.list)
	rest.Register(api, settingsArea.Op("getChannelProviderSettings", http.MethodGet, "/v2/settings/channels/{channel}", 0, "Read a channel's provider settings",
		"Secrets come back masked: \"****\" and at most their last four characters; provider and webhook URLs keep their scheme, host and port, "+
			"and each part that can carry a credential (user and password, path segments, query values, the fragment) is masked so."), h.get)
	rest.Register(api, settingsArea.Op("putChannelProviderSettings", http.MethodPut, "/v2/settings/channels/{channel}", 0, "Configure a channel's providers",
		"Replaces the channel's settings. Credentials are stored encrypted (AES-256-GCM) and never returned in full; "+
			"a masked URL sent back unchanged keeps the stored URL (any other URL holding a mask is a 400 naming it), and "+
			"a masked value sent back unchanged keeps the stored secret while the URL it is sent to keeps its destination "+
			"(the same scheme, host, port, path and query parameters); when it changed, a masked value is a 400 naming the field, and the secret must be sent again. The first provider is the primary, the second the fallback."), h.put)
	rest.Register(api, settingsArea.Op("deleteChannelProviderSettings", http.MethodDelete, "/v2/settings/channels/{channel}", http.StatusNoContent, "Remove a channel's provider settings",
		"Alerts on the channel then fail for the tenant's recipients with \"no provider\"."), h.delete)

	// The callback's body is taken raw and checked only once its signature
	// verifies, so an unsigned caller learns nothing from the answer.
	h.callbackSchemas = api.OpenAPI().Components.Schemas
	h.callbackSchema = h.callbackSchemas.Schema(reflect.TypeFor[model.VoiceStatusCallback](), true, "VoiceStatusCallback")
	callbackOp := rest.Area{Public: true, Tags: []string{"Provider callbacks"}}.Op("receiveCallStatus", http.MethodPost, "/v2/callbacks/{channel}/{tenantId}", http.StatusNoContent, "A voice or ETN provider reports a call's outcome",
		"Voice and ETN providers post each call's status here (the statusCallback of the call request), as JSON. The request must carry "+
			"`X-Tocsin-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of \"<t>.<raw body>\" keyed with the provider's signingSecret>`; "+
			"a missing or wrong signature, or a timestamp more than five minutes away, is a 401, the same 401 whether the tenant has the channel configured or not "+
			"and whatever the body holds: the body is checked (a 400 naming the field) only once the signature verifies. Busy and unanswered calls with attempts left are dialled again after the retry interval; "+
			"a callback about an earlier attempt is acknowledged and ignored.", http.StatusUnauthorized).DocumentedBy(h.documentCallbackBody)
	callbackOp.MaxBodyBytes = maxCallbackBytes
	callbackOp.SignedBody = true
	rest.Register(api, callbackOp, h.callback)

	rest.Register(api, rest.Area{Scope: "tamarack", Tags: []string{"Alerts"}}.Op("createAlertCapUpdate", http.MethodPost, "/v2/alerts/{alertId}/capUpdates", http.StatusAccepted, "Update or cancel an alert's CAP messages",
		"Sends a CAP 1.2 Update or Cancel on each CAP channel (eas, mobileBroadcast) the alert was delivered on, "+
			"referencing every message of the alert delivered there (sender,identifier,sent). A workflow delivers it; "+
			"the documents are kept with the alert's other CAP messages. 409 when the alert has no delivered CAP message.", http.StatusConflict), h.capUpdate)

	etnArea := rest.Area{Scope: "tamarack", Tags: []string{"ETN address points"}}
	importPoints := etnArea.Op("importEtnAddressPoints", http.MethodPut, "/v2/settings/etn/addressPointLists/{listName}", 0, "Import an ETN address-point list",
		"Replaces the named list with the CSV body (text/csv). The header row names the columns, in any order: phone (E.164), latitude, longitude (required; decimal numbers), "+
			"name, address, externalId (optional), case-insensitive. As in the contacts import, an unknown column or one named twice rejects the file (a 400 naming it): "+
			"a typo would otherwise lose data, and a repeated phone or latitude would call the wrong place. Another content type is a 415. "+
			"Rows with errors are left out and reported with the line they start on (the header is line 1; empty lines and line breaks inside quoted fields count); "+
			"a row longer than 1 MiB (1,048,576 bytes) rejects the file (a 400 naming its line), so does a NUL character or bytes that are not UTF-8 (a 400 naming their line), "+
			"and so does a file none of whose rows is a point (a 400 listing the first row problems). At most 200,000 points per list; a body over 32 MiB is a 413. "+
			"The rows are read and stored as they arrive, in one transaction: a file refused on any line leaves the list as it was. ETN alerts call the list's numbers inside their area.",
		http.StatusUnsupportedMediaType, http.StatusRequestEntityTooLarge)
	importPoints.MaxBodyBytes = maxPointsBytes
	rest.Register(api, importPoints.DocumentedBy(documentPointsBody), h.importPoints)
	rest.Register(api, etnArea.Op("listEtnAddressPointLists", http.MethodGet, "/v2/settings/etn/addressPointLists", 0, "List the tenant's ETN address-point lists",
		"Answers a page of the tenant's address-point lists with their points and when each was imported. Sortable by listName (default), points and importedAt."), h.listPoints)
	rest.Register(api, etnArea.Op("deleteEtnAddressPointList", http.MethodDelete, "/v2/settings/etn/addressPointLists/{listName}", http.StatusNoContent, "Delete an ETN address-point list", ""), h.deletePoints)
}

type channelPath struct {
	Channel string `path:"channel" enum:"voice,etn,push,myAlertsApp,fax,eas,mobileBroadcast,teamChat,socialPostA,socialPostB,neighborhood" doc:"The channel."`
}

// recode copies src into dst through their JSON form, which the API's
// settings and the stored ones share.
func recode(src, dst any) error {
	b, err := json.Marshal(src)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, dst)
}

func response(e providers.Entry) (model.ChannelProviderSettingsResponse, error) {
	var m model.ChannelProviderSettings
	if err := recode(e.Settings.Masked(), &m); err != nil {
		return model.ChannelProviderSettingsResponse{}, fmt.Errorf("encode settings: %w", err)
	}
	return model.ChannelProviderSettingsResponse{Channel: string(e.Channel), Settings: m, CreatedAt: e.CreatedAt, UpdatedAt: e.UpdatedAt}, nil
}

// settingsOf answers e as the channel's settings.
func settingsOf(e providers.Entry) (*rest.Output[model.ChannelProviderSettingsResponse], error) {
	r, err := response(e)
	if err != nil {
		return nil, err
	}
	return rest.Answer(r), nil
}

func (h *handlers) list(ctx context.Context, _ *struct{}) (*rest.Output[model.ChannelProviderSettingsList], error) {
	entries, err := h.store.List(ctx, rest.Tenant(ctx))
	if err != nil {
		return nil, err
	}
	out := &rest.Output[model.ChannelProviderSettingsList]{Body: model.ChannelProviderSettingsList{Items: []model.ChannelProviderSettingsResponse{}}}
	for _, e := range entries {
		r, err := response(e)
		if err != nil {
			return nil, err
		}
		out.Body.Items = append(out.Body.Items, r)
	}
	return out, nil
}

func (h *handlers) get(ctx context.Context, in *channelPath) (*rest.Output[model.ChannelProviderSettingsResponse], error) {
	e, err := h.store.Get(ctx, rest.Tenant(ctx), channels.Channel(in.Channel))
	if errors.Is(err, storage.ErrNotFound) {
		return nil, rest.NotFound(in.Channel + " settings")
	}
	if err != nil {
		return nil, err
	}
	return settingsOf(e)
}

func (h *handlers) put(ctx context.Context, in *struct {
	Channel string `path:"channel" enum:"voice,etn,push,myAlertsApp,fax,eas,mobileBroadcast,teamChat,socialPostA,socialPostB,neighborhood" doc:"The channel."`
	Body    model.ChannelProviderSettings
}) (*rest.Output[model.ChannelProviderSettingsResponse], error) {
	var s providers.Settings
	if err := recode(in.Body, &s); err != nil {
		return nil, fmt.Errorf("decode settings: %w", err)
	}
	e, _, err := h.store.Put(ctx, rest.Tenant(ctx), channels.Channel(in.Channel), s)
	var fe *providers.FieldError
	if errors.As(err, &fe) {
		return nil, rest.Invalid("body", fe.Field, fe.Message, nil)
	}
	if err != nil {
		return nil, err
	}
	return settingsOf(e)
}

func (h *handlers) delete(ctx context.Context, in *channelPath) (*struct{}, error) {
	err := h.store.Delete(ctx, rest.Tenant(ctx), channels.Channel(in.Channel))
	if errors.Is(err, storage.ErrNotFound) {
		return nil, rest.NotFound(in.Channel + " settings")
	}
	return nil, err
}

func (h *handlers) callback(ctx context.Context, in *struct {
	Channel   string `path:"channel" enum:"voice,etn" doc:"The channel of the call."`
	TenantID  string `path:"tenantId" doc:"The tenant whose call it is." example:"1001"`
	Signature string `header:"X-Tocsin-Signature" doc:"t=<unix seconds>,v1=<hex HMAC-SHA256 of \"<t>.<raw body>\" with the provider's signingSecret>." example:"t=1767225600,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd"`
	// RawBody is the signed body, a VoiceStatusCallback (see
	// documentCallbackBody): huma neither parses nor checks it, so that
	// nothing about it is answered before the signature verifies.
	RawBody []byte
}) (*struct{}, error) {
	// Whatever fails before the signature verifies (a tenant or channel
	// without settings, an unsigned or forged request) is this one answer.
	unsigned := rest.Problem(http.StatusUnauthorized, "the X-Tocsin-Signature header does not verify")
	tenant, err := url.PathUnescape(in.TenantID)
	if err != nil {
		return nil, unsigned
	}
	ch := channels.Channel(in.Channel)
	var keys []string
	e, err := h.store.Get(ctx, tenant, ch)
	switch {
	case errors.Is(err, storage.ErrNotFound) || errors.Is(err, secrets.ErrOpen):
		// No secret to verify with: nothing verifies.
	case err != nil:
		return nil, err
	default:
		for _, p := range e.Settings.Providers {
			keys = append(keys, p.SigningSecret)
		}
	}
	body := bytes.TrimSpace(in.RawBody)
	if err := voice.Verify(keys, in.Signature, body, time.Now()); err != nil {
		return nil, unsigned
	}
	if err := h.checkCallback(body); err != nil {
		return nil, err
	}
	call, err := voice.Accept(ctx, h.calls, tenant, ch, body)
	switch {
	case errors.Is(err, voice.ErrBadCallback):
		return nil, rest.Invalid("body", "status", strings.TrimPrefix(err.Error(), voice.ErrBadCallback.Error()+": "), nil)
	case errors.Is(err, voice.ErrUnknownCall):
		return nil, rest.NotFound("call")
	case errors.Is(err, voice.ErrStaleCallback):
		return nil, nil
	case err != nil:
		return nil, err
	}
	if err := applyCall(ctx, h.results, call); err != nil {
		return nil, rest.Unavailable("the database", err)
	}
	if ch == channels.Etn && call.Final() {
		if err := (&etn.Slots{DB: h.d.DB}).Release(ctx, tenant, call.Key); err != nil {
			return nil, err
		}
	}
	return nil, nil
}

type listNamePath struct {
	ListName string `path:"listName" minLength:"1" maxLength:"100" doc:"The list's name, looked up in NFC." example:"wells"`
}

// maxPointsBytes bounds the body of an address-point import.
const maxPointsBytes = 32 << 20

// importPointsInput reads nothing but the path: the handler streams the
// CSV body itself, so a list is never held whole in memory.
type importPointsInput struct {
	ListName    string `path:"listName" minLength:"1" maxLength:"100" doc:"The list's name, with spaces around it left out. Compared in NFC, so two spellings of one name (é as one character, or e and a combining accent) are the same list. Taken in Unicode normalization form C (NFC); a control character, a bidirectional control or an invisible character (other than the joiners and variation selectors scripts and emoji need) is a 400 naming the field." example:"wells"`
	contentType string
	body        io.Reader
}

// Resolve implements huma.Resolver: it keeps the body's content type and
// stream for the handler.
func (in *importPointsInput) Resolve(ctx huma.Context) []error {
	in.contentType = ctx.Header("Content-Type")
	in.body = ctx.BodyReader()
	return nil
}

// documentPointsBody documents the CSV body the handler reads itself and
// has the server hand it over as a stream (rest.StreamBody), within the
// operation's MaxBodyBytes.
func documentPointsBody(op *huma.Operation) {
	op.Metadata[rest.StreamBody] = true
	op.RequestBody = &huma.RequestBody{Required: true, Content: map[string]*huma.MediaType{
		"text/csv": {Schema: &huma.Schema{Type: huma.TypeString, Format: "binary"}},
	}}
}

// importPoints streams the rows of the body into the list: each point is
// copied to the database as its row is read, and the list swapped for them
// at the end, so that a file refused on its last line leaves the list as
// it was.
func (h *handlers) importPoints(ctx context.Context, in *importPointsInput) (*rest.Output[model.EtnAddressPointImportResult], error) {
	if mt, _, err := mime.ParseMediaType(in.contentType); err != nil || mt != "text/csv" {
		return nil, rest.Problem(http.StatusUnsupportedMediaType, "the body must be text/csv")
	}
	name, err := url.PathUnescape(in.ListName)
	if err != nil {
		return nil, rest.Invalid("path", "listName", "must be a name", in.ListName)
	}
	if name, err = rest.Name("path", "listName", name, "must be a name"); err != nil {
		return nil, err
	}
	// A chunked body is cut here; a declared length over the limit is
	// refused before the handler runs.
	rd, err := etn.NewReader(http.MaxBytesReader(nil, io.NopCloser(in.body), maxPointsBytes))
	if err != nil {
		return nil, refusedPoints(err)
	}
	n, err := h.pts.Replace(ctx, rest.Tenant(ctx), name, rd.Points())
	if rd.Err() != nil {
		return nil, refusedPoints(rd.Err())
	}
	if err != nil {
		return nil, err
	}
	if n == 0 {
		// A file none of whose rows is a point (a header alone, numbers
		// without their +) would empty a list emergency calls go to.
		fails := []rest.ValidationFailure{rest.Failure("body", "csv", "no row is an address point: the list is left as it was (delete the list to remove it)", nil)}
		for i, b := range rd.Problems() {
			if i == 10 {
				break
			}
			fails = append(fails, rest.Failure("body", "csv", fmt.Sprintf("line %d: %s", b.Line, b.Message), nil))
		}
		return nil, rest.Problem(http.StatusBadRequest, "validation failed", fails...)
	}
	out := model.EtnAddressPointImportResult{ListName: name, Imported: n, Rejected: rd.Rejected(), Errors: []model.EtnAddressPointRowError{}}
	for _, b := range rd.Problems() {
		out.Errors = append(out.Errors, model.EtnAddressPointRowError{Line: b.Line, Message: b.Message})
	}
	return rest.Answer(out), nil
}

// refusedPoints is the answer to an address-point list that cannot be read
// to its end: a 413 past the body limit, else a 400 saying why.
func refusedPoints(err error) error {
	if errors.As(err, new(*http.MaxBytesError)) {
		return rest.Problem(http.StatusRequestEntityTooLarge, fmt.Sprintf("the request body is larger than this operation's limit of %d bytes", maxPointsBytes))
	}
	return rest.Invalid("body", "csv", err.Error(), nil)
}

func (h *handlers) listPoints(ctx context.Context, in *struct{ rest.PageParams }) (*rest.Output[model.EtnAddressPointListsResponse], error) {
	order, err := rest.SortBy(in.Sort, channelstate.PointListSorting)
	if err != nil {
		return nil, err
	}
	lists, total, err := h.pts.Lists(ctx, rest.Tenant(ctx), order, in.Limit(), in.Offset())
	if err != nil {
		return nil, err
	}
	out := model.EtnAddressPointListsResponse{Paging: rest.NewPaging(in.PageParams, total), Items: []model.EtnAddressPointList{}}
	for _, l := range lists {
		out.Items = append(out.Items, model.EtnAddressPointList{ListName: l.Name, Points: l.Points, ImportedAt: l.ImportedAt})
	}
	return rest.Answer(out), nil
}

func (h *handlers) deletePoints(ctx context.Context, in *listNamePath) (*struct{}, error) {
	name, err := url.PathUnescape(in.ListName)
	if err != nil {
		return nil, rest.NotFound("list")
	}
	// In NFC, as names are stored; a list named before the rule of names
	// is still deleted by its name.
	if err := h.pts.Delete(ctx, rest.Tenant(ctx), names.Normal(name)); errors.Is(err, storage.ErrNotFound) {
		return nil, rest.NotFound("list")
	} else if err != nil {
		return nil, err
	}
	return nil, nil
}

// checkCallback checks a verified callback's body against the
// VoiceStatusCallback schema, as the server and huma check the bodies they
// parse (the operation is marked SignedBody): a body that is not JSON,
// holds a NUL character or invalid UTF-8, gives a property twice or breaks
// the schema is a 400 naming the field.
func (h *handlers) checkCallback(body []byte) error {
	if len(body) == 0 {
		return rest.Invalid("body", "", "a status callback (JSON) is required", nil)
	}
	if p := h.d.CheckJSONBody(body, h.callbackSchema); p != nil {
		return p
	}
	var parsed any
	if err := json.Unmarshal(body, &parsed); err != nil {
		return rest.Invalid("body", "", "not JSON: "+err.Error(), nil)
	}
	res := &huma.ValidateResult{}
	pb := huma.NewPathBuffer(make([]byte, 0, 64), 0)
	pb.Push("body")
	huma.Validate(h.callbackSchemas, h.callbackSchema, pb, huma.ModeWriteToServer, parsed, res)
	if len(res.Errors) > 0 {
		return rest.NewError(http.StatusUnprocessableEntity, "validation failed", res.Errors...)
	}
	var cb model.VoiceStatusCallback
	if err := rest.UnmarshalJSON(body, &cb); err != nil {
		return rest.NewError(http.StatusBadRequest, "validation failed", &huma.ErrorDetail{Location: "body", Message: err.Error()})
	}
	return nil
}

// documentCallbackBody documents the callback's body as the JSON
// VoiceStatusCallback it is, in place of the octet-stream RawBody stands
// for. It stays optional for huma, so that an empty body is answered like
// any other once the signature is checked.
func (h *handlers) documentCallbackBody(op *huma.Operation) {
	op.RequestBody.Content = map[string]*huma.MediaType{"application/json": {Schema: h.callbackSchema}}
	op.RequestBody.Required = false
}
