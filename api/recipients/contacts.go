package recipients

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humafiber"

	"github.com/tocsin/tocsin/api/model"
	"github.com/tocsin/tocsin/api/rest"
	"github.com/tocsin/tocsin/internal/contactcsv"
	"github.com/tocsin/tocsin/internal/names"
	"github.com/tocsin/tocsin/storage/contacts"
)

// findContactsDescription is a format of contacts.MaxPageGroups,
// contacts.MaxPageLists, contacts.MaxCountedMemberships and
// contacts.MaxPageCustomBytes.
const findContactsDescription = `Returns one page of the tenant's contacts (directory users included)
matching every filter given in the body; an empty or absent body matches all.
Sort properties: lastName, firstName, externalId, createdAt, updatedAt, id
(default lastName, firstName; id breaks ties). Every filter is served by an
index, and totalCount stops counting early when many match (see
totalCountExact), so searches stay fast for tenants with a million
contacts. A contact lists
at most %d of its groups (by path; beyond that those of the lowest ids) and
%d of its distribution lists (by name; beyond that the newest), and
groupCount and distributionListCount count them up to %d (see
groupCountExact and distributionListCountExact), and carries the custom
fields of its contacts, in order, up to %d bytes (the first contact's
always; see customFieldsOmitted), so a page stays bounded whoever is on it.`

// exportDescription is a format of contactcsv.MaxCustomColumns.
const exportDescription = `Streams every contact of the tenant as CSV (text/csv; UTF-8; CRLF line
ends), one consistent snapshot read from a database cursor. The header row
names the columns id, externalId, firstName, middleName, lastName, language,
timeZone, emails, mobilePhones, homePhones, workPhones, otherPhones, faxPhones,
roles, chatUsers, then custom.<key> for each custom field the contacts hold,
every one, in alphabetical order (imports hold a tenant to %d different
keys; a tenant whose contacts hold more, written before that limit, is
answered 409 rather than given a file that leaves some out). List cells separate their items with ';'; chat users are
platform:userId. A phone's column is its type; a number whose flags differ
from its column's (mobile: texts and calls; home, work, other: calls; fax:
neither) carries the flags that are on in brackets: +15551234567 [text],
[call], [text call] or [none]. A cell starting with =, +, -, @, tab or carriage return (after
any leading single quotes) is prefixed with a single quote so spreadsheets do
not run it as a formula; createFromFile removes that quote again, so phone
numbers such as '+15551234567 come back as +15551234567. This file is what
createFromFile reads. HEAD is not served (405): the answer is a stream.`

type findContactsInput struct {
	rest.PageParams
	Body *model.FindContactRequest
}

func (h *handlers) findContacts(ctx context.Context, in *findContactsInput) (*rest.Output[model.PagedContactResponse], error) {
	var f contacts.Filter
	if b := in.Body; b != nil {
		f = contacts.Filter{
			Name: names.Normal(b.Name), ExternalID: names.Normal(b.ExternalID), GroupID: b.GroupID, IncludeSubgroups: true,
			DistributionListID: b.DistributionListID, CustomFields: b.CustomFields, Role: names.Normal(b.Role),
		}
		if b.IncludeSubgroups != nil {
			f.IncludeSubgroups = *b.IncludeSubgroups
		}
		if b.Email != "" {
			f.Email = strings.ToLower(strings.TrimSpace(b.Email))
		}
		if b.Phone != "" {
			n, ok := contactcsv.NormalizePhone(b.Phone)
			if !ok {
				return nil, rest.Invalid("body", "phone", "not a phone number in E.164 form (+ country code and number)", b.Phone)
			}
			f.Phone = n
		}
	}
	order, err := rest.OrderBy(in.Sort, contacts.SortColumns, contacts.DefaultOrder, contacts.TieBreak)
	if err != nil {
		return nil, err
	}
	people, total, err := contacts.Find(ctx, h.d.DB.DB, rest.Tenant(ctx), f, order, in.Limit(), in.Offset())
	if err != nil {
		return nil, h.failure(ctx, err)
	}
	return rest.Answer(model.PagedContactResponse{Paging: rest.NewPaging(in.PageParams, total), Items: rest.Items(people, contactModel)}), nil
}

func contactModel(p contacts.Person) model.Contact {
	c := model.Contact{
		ID: p.ID, ExternalID: p.ExternalID.String, DirectoryID: p.DirectoryID.String,
		Name:     model.PersonName{First: p.FirstName, Middle: p.MiddleName, Last: p.LastName},
		Language: p.Language, TimeZone: p.TimeZone,
		Emails: []model.ContactInformationEmailAddress{}, Phones: []model.ContactInformationPhone{},
		Devices: []model.ContactInformationDevice{}, ChatUsers: []model.ChatUser{}, Locations: []model.ContactLocation{},
		Groups: []model.DisplayGroup{}, Roles: []model.DisplayRole{}, DistributionLists: []model.Reference{},
		CustomFields: p.CustomFields(), CustomFieldsOmitted: p.CustomOmitted, CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt,
		GroupCount: p.GroupCount, GroupCountExact: p.GroupCountExact,
		DistributionListCount: p.ListCount, DistributionListCountExact: p.ListCountExact,
	}
	for _, e := range p.Emails {
		c.Emails = append(c.Emails, model.ContactInformationEmailAddress{Address: e.Address, Label: e.Label,
			VerificationStatus: model.VerificationStatus(e.Status), VerifiedAt: e.VerifiedAt})
	}
	for _, ph := range p.Phones {
		c.Phones = append(c.Phones, model.ContactInformationPhone{Number: ph.Number, Type: model.PhoneType(ph.Type), CanText: ph.CanText, CanCall: ph.CanCall,
			VerificationStatus: model.VerificationStatus(ph.Status), VerifiedAt: ph.VerifiedAt})
	}
	for _, d := range p.Devices {
		c.Devices = append(c.Devices, model.ContactInformationDevice{ID: d.ID, App: d.App, Platform: d.Platform, Token: d.Token, CreatedAt: d.CreatedAt})
	}
	for _, u := range p.ChatUsers() {
		c.ChatUsers = append(c.ChatUsers, model.ChatUser{Platform: model.ChatPlatform(u.Platform), UserID: u.UserID, DisplayName: u.DisplayName})
	}
	for _, l := range p.Locations {
		m := model.ContactLocation{ID: l.ID, Name: l.Name, GeoLocation: model.GeoLocation{Latitude: l.Latitude, Longitude: l.Longitude}}
		var a model.Address
		if json.Unmarshal(l.Address, &a) == nil && a != (model.Address{}) {
			m.Address = &a
		}
		c.Locations = append(c.Locations, m)
	}
	for _, g := range p.Groups {
		c.Groups = append(c.Groups, model.DisplayGroup{ID: g.ID, Name: g.Name, ParentID: g.ParentID, Path: g.Path, Depth: g.Depth, Since: g.Since})
	}
	for _, r := range p.Roles {
		c.Roles = append(c.Roles, model.DisplayRole{Name: r})
	}
	for _, l := range p.Lists {
		c.DistributionLists = append(c.DistributionLists, model.Reference{ID: fmt.Sprint(l.ID), Name: l.Name})
	}
	return c
}

type exportInput struct {
	BOM bool `query:"bom" doc:"Start the file with a UTF-8 byte order mark, which some spreadsheet programs need to read non-ASCII text."`
}

type exportOutput struct {
	ContentType        string `header:"Content-Type"`
	ContentDisposition string `header:"Content-Disposition"`
	CacheControl       string `header:"Cache-Control"`
	Body               func(huma.Context)
}

// exportWriteTimeout is how long one batch of the export may take to reach
// the client: the deadline moves on after every batch, so a long export of a
// client that keeps reading is not cut by the server's write timeout.
const exportWriteTimeout = 60 * time.Second

// exportMaxDuration bounds a whole export.
const exportMaxDuration = 2 * time.Hour

func csvResponse(op *huma.Operation) {
	op.Responses["200"] = &huma.Response{
		Description: "The contacts as CSV, streamed.",
		Headers: map[string]*huma.Param{
			"Content-Disposition": {Description: "attachment; filename=contacts.csv", Schema: &huma.Schema{Type: huma.TypeString}},
		},
		Content: map[string]*huma.MediaType{
			"text/csv": {Schema: &huma.Schema{Type: huma.TypeString, Description: "CSV with a header row, as described above.",
				Examples: []any{"id,externalId,firstName,middleName,lastName,language,timeZone,emails,mobilePhones,homePhones,workPhones,otherPhones,faxPhones,roles,chatUsers,custom.building\r\n1017,EMP-0042,Ada,,Lovelace,en,Europe/London,ada@example.com,'+447700900123,,,,,Floor warden,slack:U024BE7LH,A\r\n"}}},
		},
	}
}

func (h *handlers) exportContacts(ctx context.Context, in *exportInput) (*exportOutput, error) {
	// The rows are written after this handler returns, so the export gets a
	// context of its own.
	ectx, cancel := context.WithTimeout(context.WithoutCancel(ctx), exportMaxDuration)
	exp, err := contacts.BeginExport(ectx, h.d.DB, rest.Tenant(ctx))
	if errors.Is(err, contacts.ErrTooManyCustomKeys) {
		cancel()
		return nil, rest.Conflict(fmt.Sprintf("the tenant's contacts hold more than %d different custom fields, more than an export has columns for "+
			"(and an import reads): they were written before imports held them to that. An export would leave some out, so none is made; "+
			"findContacts shows every contact's custom fields", contactcsv.MaxCustomColumns))
	}
	if err != nil {
		cancel()
		return nil, h.failure(ctx, err)
	}
	logger := h.d.Logger
	tenant := rest.Tenant(ctx)
	return &exportOutput{
		ContentType:        "text/csv; charset=utf-8",
		ContentDisposition: `attachment; filename="contacts.csv"`,
		CacheControl:       "no-store",
		Body: func(hc huma.Context) {
			hc.SetStatus(http.StatusOK)
			fc := humafiber.Unwrap(hc)
			conn := fc.Context().Conn()
			fc.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
				defer cancel()
				if in.BOM {
					_, _ = w.Write([]byte{0xEF, 0xBB, 0xBF})
				}
				_, err := exp.WriteCSV(ectx, w, func() error {
					if err := w.Flush(); err != nil {
						return err
					}
					return conn.SetWriteDeadline(time.Now().Add(exportWriteTimeout))
				})
				if err != nil && logger != nil {
					logger.Warn("contacts export ended early", "tenant", tenant, "err", err)
				}
			})
		},
	}, nil
}
