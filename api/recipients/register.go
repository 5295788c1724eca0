// Package recipients serves where alerts find their recipients: contacts, distribution lists from CSV files, the group tree and shortened URLs.
package recipients

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/tocsin/tocsin/api/rest"
	"github.com/tocsin/tocsin/internal/contactcsv"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/contacts"
)

var area = rest.Area{Scope: "tamarack", Tags: []string{"Recipients"}}

// handlers holds what the operations use.
type handlers struct {
	d rest.Deps
}

// Register adds the recipients operations to api.
func Register(api huma.API, d rest.Deps) {
	h := &handlers{d: d}
	rest.Register(api, area.Op("findContacts", http.MethodPost, "/v2/contacts/find", 0, "Find contacts",
		fmt.Sprintf(findContactsDescription, contacts.MaxPageGroups, contacts.MaxPageLists, contacts.MaxCountedMemberships, contacts.MaxPageCustomBytes)), h.findContacts)
	rest.Register(api, area.Op("exportContacts", http.MethodGet, "/v2/contacts/export", 0, "Export every contact as CSV",
		fmt.Sprintf(exportDescription, contactcsv.MaxCustomColumns), http.StatusConflict).DocumentedBy(csvResponse).WithoutHead(), h.exportContacts)

	rest.Register(api, area.Op("createFromFile", http.MethodPost, "/v4/{tenantId}/distributionLists/createFromFile", http.StatusCreated, "Create a distribution list from a CSV file",
		fmt.Sprintf(createFromFileDescription, storage.MaxEmailsPerPerson, storage.MaxPhonesPerPerson, contactcsv.MaxCustomFields, contactcsv.MaxCustomColumns), http.StatusConflict, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType).DocumentedBy(uploadRequestBody(api)), h.createFromFile)
	rest.Register(api, area.Op("getDistributionLists", http.MethodGet, "/v4/{tenantId}/distributionLists", 0, "List distribution lists", ""), h.listLists)
	rest.Register(api, area.Op("getDistributionListRecipients", http.MethodGet, "/v4/{tenantId}/distributionLists/{listId}", 0, "Get a distribution list with a page of its recipients",
		"Sort properties: id (the default, which stays fast for lists of a million), lastName, firstName."), h.getList)
	rest.Register(api, area.Op("deleteDistributionList", http.MethodDelete, "/v4/{tenantId}/distributionLists/{listId}", http.StatusNoContent, "Delete a distribution list",
		"Deletes the list and its memberships; the contacts stay."), h.deleteList)

	rest.Register(api, rest.Area{Scope: "elm", Tags: area.Tags}.Op("getGroupTreeNodes", http.MethodGet, "/v2.1/groups/tree", 0, "Page through the group tree",
		groupTreeDescription), h.groupTree)

	rest.Register(api, area.Op("createShortenedUrl", http.MethodPost, "/v2/public/shortenedUrl", 0, "Shorten a URL",
		shortenDescription), h.createShortenedURL)
	rest.Register(api, rest.Area{Public: true, Tags: area.Tags}.Op("followShortenedUrl", http.MethodGet, "/s/{code}", http.StatusFound, "Follow a short link",
		"Public: needs no token. Answers 302 to the target and counts the click; 404 for an unknown code, 410 for an expired one. HEAD is not served (405): link checkers would count as clicks.", http.StatusGone).WithoutHead(), h.followShortenedURL)
}

// failure turns a storage error into a problem: 503 when PostgreSQL cannot
// be reached, otherwise a logged 500 that reveals nothing.
func (h *handlers) failure(ctx context.Context, err error) error {
	var ne net.Error
	if errors.Is(err, driver.ErrBadConn) || errors.As(err, &ne) || errors.Is(err, context.DeadlineExceeded) {
		return rest.Unavailable("postgresql", errors.New("no connection"))
	}
	if h.d.Logger != nil {
		h.d.Logger.ErrorContext(ctx, "recipients: storage failed", "tenant", rest.Tenant(ctx), "err", err)
	}
	return rest.Problem(http.StatusInternalServerError, "internal error")
}
