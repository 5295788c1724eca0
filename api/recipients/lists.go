package recipients

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"reflect"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/danielgtaylor/huma/v2"

	"github.com/tocsin/tocsin/api/model"
	"github.com/tocsin/tocsin/api/rest"
	"github.com/tocsin/tocsin/internal/config"
	"github.com/tocsin/tocsin/internal/contactcsv"
	"github.com/tocsin/tocsin/internal/names"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/contacts"
)

// createFromFileDescription is a format of storage.MaxEmailsPerPerson,
// storage.MaxPhonesPerPerson, contactcsv.MaxCustomFields and
// contactcsv.MaxCustomColumns.
const createFromFileDescription = `multipart/form-data with the parts file (the CSV, laid out like the
export of GET /v2/contacts/export), name and description. Creates or updates
the contacts in the file and a distribution list holding them, all in one
transaction: a rejected file changes nothing.

Rows are matched to contacts by id (the export's id column), else by
external id, else by any email address, else by any phone number; unmatched
rows create contacts. A row whose address (or external id, held by users of
several directories) several contacts hold matches several contacts: it is
a row problem naming the column. Matched contacts take the row's non-empty
cells; email addresses and phone numbers are added, never removed, custom
fields merged key by key, and an existing external id is kept. Only
firstName and lastName columns are required.

Rows with a problem (bad email, unparsable phone, a language or time zone
that usersCreate refuses, a name, external id or role with a control,
bidirectional or invisible character, missing name, duplicate of an
earlier row, wrong number of fields, more than %d email addresses, %d
phone numbers or %d custom fields for the contact with those it has, a
custom field that would give the tenant's contacts more than %d different
keys...) are skipped and listed in errors; the rest are imported. An error
quotes at most the first 40 characters of its cell, so the answer stays
under about 1 MiB whatever the file. The file is rejected with a 400 when it is not CSV,
its header lacks required columns or names unknown ones, or a row is longer
than 1 MiB (1,048,576 bytes, line breaks included: the line it starts on is
named; a line break or a closing quote is missing), and with a 413 when
it is larger than the import limit (TOCSIN_IMPORT_SIZE_LIMIT_BYTES, 1 GiB by
default) or has more than 1,000,000 data rows.`

// createFromFileInput reads nothing but the path: the handler streams the
// multipart body itself, so a large file is never copied into memory.
type createFromFileInput struct {
	TenantID    int64 `path:"tenantId" doc:"The tenant; it must be the token's."`
	contentType string
	body        io.Reader
}

// Resolve implements huma.Resolver: it keeps the request body for the
// handler, read under an idle deadline rather than the server's deadline
// for the whole body, which a large import outlasts.
func (in *createFromFileInput) Resolve(ctx huma.Context) []error {
	in.contentType = ctx.Header("Content-Type")
	in.body = &idleDeadline{r: ctx.BodyReader(), set: ctx.SetReadDeadline}
	return nil
}

// importIdleTimeout is how long an import's body may send nothing before
// the connection is closed.
const importIdleTimeout = 60 * time.Second

// idleDeadline moves the connection's read deadline forward as the body
// arrives (at most once a second), so an import may take as long as it
// needs while a client that stops sending is still cut off.
type idleDeadline struct {
	r    io.Reader
	set  func(time.Time) error
	next time.Time
}

func (d *idleDeadline) Read(p []byte) (int, error) {
	if now := time.Now(); now.After(d.next) {
		_ = d.set(now.Add(importIdleTimeout))
		d.next = now.Add(time.Second)
	}
	return d.r.Read(p)
}

// bodyBuffer is the read buffer between the connection and the multipart
// reader: large reads, so a big file takes few system calls.
const bodyBuffer = 256 << 10

// uploadRequestBody documents the multipart body of createFromFile and has
// the server hand the body over as a stream (rest.StreamBody), so a large
// file never sits whole in memory.
func uploadRequestBody(api huma.API) func(*huma.Operation) {
	return func(op *huma.Operation) {
		op.Metadata[rest.StreamBody] = true
		op.Metadata[rest.ImportBody] = true
		schema := api.OpenAPI().Components.Schemas.Schema(reflect.TypeOf(model.CreateDistributionListFromFileRequest{}), true, "")
		op.RequestBody = &huma.RequestBody{
			Required: true,
			Content: map[string]*huma.MediaType{
				"multipart/form-data": {
					Schema:   schema,
					Encoding: map[string]*huma.Encoding{"file": {ContentType: "text/csv"}},
				},
			},
		}
	}
}

// Limits of the form fields.
const (
	maxListName        = 200
	maxListDescription = 2000
)

// errFileTooLarge is the error a sizeLimit reader returns past its limit.
var errFileTooLarge = errors.New("the file is larger than the import limit")

// importLimit is the largest file an import accepts.
func importLimit(c config.Config) int64 {
	if c.ImportSizeLimit <= 0 {
		return 1 << 62
	}
	return c.ImportSizeLimit
}

// bodyReader remembers the first error reading the request body, so that a
// malformed body is told apart from a failing database.
type bodyReader struct {
	r   io.Reader
	err error
}

func (b *bodyReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err != nil && err != io.EOF && b.err == nil {
		b.err = err
	}
	return n, err
}

// sizeLimit fails with errFileTooLarge once more than n bytes were read.
type sizeLimit struct {
	r io.Reader
	n int64
}

func (s *sizeLimit) Read(p []byte) (int, error) {
	if s.n < 0 {
		return 0, errFileTooLarge
	}
	n, err := s.r.Read(p)
	s.n -= int64(n)
	if s.n < 0 {
		return n, errFileTooLarge
	}
	return n, err
}

func readField(p *multipart.Part, name string, limit int) (string, error) {
	b, err := io.ReadAll(io.LimitReader(p, int64(limit)*4+1))
	if err != nil {
		return "", err
	}
	if !utf8.Valid(b) {
		return "", rest.Invalid("body", name, "not UTF-8 text", nil)
	}
	if bytes.IndexByte(b, 0) >= 0 {
		return "", rest.Invalid("body", name, "contains a NUL character", nil)
	}
	v := strings.TrimSpace(string(b))
	if utf8.RuneCountInString(v) > limit {
		return "", rest.Invalid("body", name, fmt.Sprintf("longer than %d characters", limit), nil)
	}
	return v, nil
}

func (h *handlers) createFromFile(ctx context.Context, in *createFromFileInput) (*rest.Output[model.CreateDistributionListFromFileResponse], error) {
	mt, params, err := mime.ParseMediaType(in.contentType)
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return nil, rest.Problem(http.StatusUnsupportedMediaType, "the body must be multipart/form-data with the parts file, name and description")
	}
	tenant := rest.Tenant(ctx)
	body := &bodyReader{r: in.body}
	mr := multipart.NewReader(bufio.NewReaderSize(body, bodyBuffer), params["boundary"])
	var (
		name, description string
		haveName          bool
		im                *contacts.Import
		given             = map[string]bool{}
	)
	defer func() {
		if im != nil {
			im.Rollback()
		}
	}()
	malformed := func(err error) error {
		if errors.Is(err, errFileTooLarge) || errors.Is(body.err, errFileTooLarge) {
			return rest.Problem(http.StatusRequestEntityTooLarge, fmt.Sprintf("the file is larger than the import limit of %d bytes", importLimit(h.d.Config)))
		}
		return rest.Problem(http.StatusBadRequest, "the body is not valid multipart/form-data: "+err.Error())
	}
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, malformed(err)
		}
		partName, err := rest.PartName(part)
		if err != nil {
			return nil, err
		}
		if given[partName] {
			return nil, rest.Invalid("body", partName, "given more than once", nil)
		}
		given[partName] = true
		switch partName {
		case "name":
			if name, err = readField(part, partName, maxListName); err != nil {
				return nil, fieldError(err, malformed)
			}
			if name != "" {
				if name, err = names.Check(name); err != nil {
					return nil, rest.Invalid("body", partName, err.Error(), name)
				}
			}
			haveName = true
			if im == nil && name != "" {
				if taken, err := contacts.ListNameTaken(ctx, h.d.DB, tenant, name); err != nil {
					return nil, h.failure(ctx, err)
				} else if taken {
					return nil, rest.Conflict(fmt.Sprintf("a distribution list named %q exists", name))
				}
			}
		case "description":
			if description, err = readField(part, partName, maxListDescription); err != nil {
				return nil, fieldError(err, malformed)
			}
		case "file":
			if im, err = contacts.BeginImport(ctx, h.d.DB, tenant, 0); err != nil {
				return nil, h.failure(ctx, err)
			}
			err := im.Stage(ctx, &sizeLimit{r: part, n: importLimit(h.d.Config)})
			var fe *contactcsv.FileError
			switch {
			case err == nil:
			case errors.As(err, &fe):
				return nil, rest.Invalid("body", "file", fe.Error(), nil)
			case errors.Is(err, contacts.ErrTooManyRows):
				return nil, rest.Problem(http.StatusRequestEntityTooLarge, err.Error())
			case errors.Is(err, errFileTooLarge) || body.err != nil || errors.Is(err, io.ErrUnexpectedEOF):
				// A body that ends without its closing boundary is malformed too.
				return nil, malformed(err)
			default:
				return nil, h.failure(ctx, err)
			}
		default:
			return nil, rest.Invalid("body", partName, "unknown part; the parts are file, name and description", nil)
		}
	}
	if im == nil {
		return nil, rest.Invalid("body", "file", "the CSV file part is required", nil)
	}
	if !haveName || name == "" {
		return nil, rest.Invalid("body", "name", "the list needs a name", nil)
	}
	res, err := im.Finish(ctx, name, description)
	if errors.Is(err, storage.ErrConflict) {
		return nil, rest.Conflict(fmt.Sprintf("a distribution list named %q exists", name))
	}
	if err != nil {
		return nil, h.failure(ctx, err)
	}
	out := &rest.Output[model.CreateDistributionListFromFileResponse]{Body: model.CreateDistributionListFromFileResponse{
		DistributionList: listModel(res.List),
		Rows:             res.Rows, Created: res.Created, Updated: res.Updated, Unchanged: res.Unchanged,
		Skipped: res.Skipped, ErrorCount: res.ProblemCount,
		Errors: make([]model.DistributionListError, len(res.Problems)),
	}}
	for i, p := range res.Problems {
		out.Body.Errors[i] = model.DistributionListError{Line: p.Line, Column: p.Column, Value: p.Value, Message: p.Message}
	}
	return out, nil
}

// fieldError passes validation problems through and treats other errors as
// a malformed body.
func fieldError(err error, malformed func(error) error) error {
	var p *rest.ProblemDetails
	if errors.As(err, &p) {
		return p
	}
	return malformed(err)
}

func listModel(l contacts.List) model.DistributionProfile {
	return model.DistributionProfile{ID: l.ID, Name: l.Name, Description: l.Description, MemberCount: l.MemberCount, CreatedAt: l.CreatedAt, UpdatedAt: l.UpdatedAt}
}

type listListsInput struct {
	TenantID int64 `path:"tenantId" doc:"The tenant; it must be the token's."`
	rest.PageParams
	Name string `query:"name" maxLength:"200" doc:"Only lists whose name starts with this (case-insensitive)."`
}

func (h *handlers) listLists(ctx context.Context, in *listListsInput) (*rest.Output[model.PagedDistributionProfileResponse], error) {
	order, err := rest.OrderBy(in.Sort, contacts.ListSortColumns, "lower(l.name)", "l.id")
	if err != nil {
		return nil, err
	}
	lists, total, err := contacts.Lists(ctx, h.d.DB.DB, rest.Tenant(ctx), names.Normal(in.Name), order, in.Limit(), in.Offset())
	if err != nil {
		return nil, h.failure(ctx, err)
	}
	return rest.Answer(model.PagedDistributionProfileResponse{Paging: rest.NewPaging(in.PageParams, total), Items: rest.Items(lists, listModel)}), nil
}

// ListPath is the tenant and the distribution list in the path.
type ListPath struct {
	TenantID int64 `path:"tenantId" doc:"The tenant; it must be the token's."`
	ListID   int64 `path:"listId" doc:"The distribution list."`
}

type getListInput struct {
	ListPath
	rest.PageParams
}

func (h *handlers) getList(ctx context.Context, in *getListInput) (*rest.Output[model.GetDistributionListRecipientsResponse], error) {
	order, err := rest.OrderBy(in.Sort, contacts.MemberSortColumns, "m.person_id", "m.person_id")
	if err != nil {
		return nil, err
	}
	tenant := rest.Tenant(ctx)
	l, err := contacts.GetList(ctx, h.d.DB, tenant, in.ListID)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, rest.NotFound("distribution list")
	}
	if err != nil {
		return nil, h.failure(ctx, err)
	}
	members, total, err := contacts.Members(ctx, h.d.DB.DB, tenant, in.ListID, order, in.Limit(), in.Offset())
	if err != nil {
		return nil, h.failure(ctx, err)
	}
	out := &rest.Output[model.GetDistributionListRecipientsResponse]{Body: model.GetDistributionListRecipientsResponse{
		DistributionList: listModel(l), Paging: rest.NewPaging(in.PageParams, total),
		Recipients: make([]model.ContactSummary, len(members)),
	}}
	for i, m := range members {
		out.Body.Recipients[i] = model.ContactSummary{
			ID: m.ID, ExternalID: m.ExternalID.String, DirectoryID: m.DirectoryID.String,
			Name:         model.PersonName{First: m.FirstName, Middle: m.MiddleName, Last: m.LastName},
			PrimaryEmail: m.PrimaryEmail.String, PrimaryPhone: m.PrimaryPhone.String,
		}
	}
	return out, nil
}

func (h *handlers) deleteList(ctx context.Context, in *ListPath) (*struct{}, error) {
	err := contacts.DeleteList(ctx, h.d.DB, rest.Tenant(ctx), in.ListID)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, rest.NotFound("distribution list")
	}
	if err != nil {
		return nil, h.failure(ctx, err)
	}
	return &struct{}{}, nil
}
