// Package recipients serves where alerts find their recipients: contacts, distribution lists from CSV files, the group tree and shortened URLs.
package recipients

import (
	"context"
	"database/sql/driver"
	"errors"
	"net"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/tocsin/tocsin/api/rest"
)

var tags = []string{"Recipients"}

// handlers holds what the operations use.
type handlers struct {
	d rest.Deps
}

// Register adds the recipients operations to api.
func Register(api huma.API, d rest.Deps) {
	h := &handlers{d: d}
	rest.Register(api, rest.Op{ID: "findContacts", Method: http.MethodPost, Path: "/v2/contacts/find", Scope: "tamarack", Tags: tags,
		Summary:     "Find contacts",
		Description: findContactsDescription,
	}, h.findContacts)
	register(api, rest.Op{ID: "exportContacts", Method: http.MethodGet, Path: "/v2/contacts/export", Scope: "tamarack", Tags: tags,
		Summary:     "Export every contact as CSV",
		Description: exportDescription,
	}, csvResponse, h.exportContacts)

	register(api, rest.Op{ID: "createFromFile", Method: http.MethodPost, Path: "/v4/{tenantId}/distributionLists/createFromFile", Scope: "tamarack", Tags: tags,
		Summary:     "Create a distribution list from a CSV file",
		Description: createFromFileDescription,
		Status:      http.StatusCreated,
		Errors:      []int{http.StatusConflict, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType},
	}, uploadRequestBody(api), h.createFromFile)
	rest.Register(api, rest.Op{ID: "getDistributionLists", Method: http.MethodGet, Path: "/v4/{tenantId}/distributionLists", Scope: "tamarack", Tags: tags,
		Summary: "List distribution lists",
	}, h.listLists)
	rest.Register(api, rest.Op{ID: "getDistributionListRecipients", Method: http.MethodGet, Path: "/v4/{tenantId}/distributionLists/{listId}", Scope: "tamarack", Tags: tags,
		Summary:     "Get a distribution list with a page of its recipients",
		Description: "Sort properties: id (the default, which stays fast for lists of a million), lastName, firstName.",
	}, h.getList)
	rest.Register(api, rest.Op{ID: "deleteDistributionList", Method: http.MethodDelete, Path: "/v4/{tenantId}/distributionLists/{listId}", Scope: "tamarack", Tags: tags,
		Summary:     "Delete a distribution list",
		Description: "Deletes the list and its memberships; the contacts stay.",
		Status:      http.StatusNoContent,
	}, h.deleteList)

	rest.Register(api, rest.Op{ID: "getGroupTreeNodes", Method: http.MethodGet, Path: "/v2.1/groups/tree", Scope: "elm", Tags: tags,
		Summary:     "Page through the group tree",
		Description: groupTreeDescription,
	}, h.groupTree)

	rest.Register(api, rest.Op{ID: "createShortenedUrl", Method: http.MethodPost, Path: "/v2/public/shortenedUrl", Scope: "tamarack", Tags: tags,
		Summary:     "Shorten a URL",
		Description: shortenDescription,
	}, h.createShortenedURL)
	rest.Register(api, rest.Op{ID: "followShortenedUrl", Method: http.MethodGet, Path: "/s/{code}", Public: true, Tags: tags,
		Summary:     "Follow a short link",
		Description: "Public: needs no token. Answers 302 to the target and counts the click; 404 for an unknown code, 410 for an expired one.",
		Status:      http.StatusFound,
		Errors:      []int{http.StatusGone},
	}, h.followShortenedURL)
}

// register is rest.Register for operations whose request or response is not
// JSON: adjust completes the documented operation after huma has derived it
// from the Go types (so huma does not try to read or validate such a body).
func register[I, O any](api huma.API, o rest.Op, adjust func(*huma.Operation), h func(context.Context, *I) (*O, error)) {
	rest.Register(api, o, h)
	item := api.OpenAPI().Paths[o.Path]
	op := map[string]*huma.Operation{http.MethodGet: item.Get, http.MethodPost: item.Post}[o.Method]
	adjust(op)
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
