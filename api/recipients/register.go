// Package recipients serves where alerts find their recipients: contacts, distribution lists from CSV files, the group tree and shortened URLs.
package recipients

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/tocsin/tocsin/api/rest"
)

// Register adds the recipients operations to api.
func Register(api huma.API, d rest.Deps) {
	rest.Register(api, rest.Op{ID: "findContacts", Method: http.MethodPost, Path: "/v2/contacts/find", Scope: "tamarack", Tags: []string{"Recipients"}},
		func(ctx context.Context, in *struct {
		}) (*struct{}, error) {
			return nil, rest.NotImplemented("findContacts")
		})
	rest.Register(api, rest.Op{ID: "createFromFile", Method: http.MethodPost, Path: "/v4/{tenantId}/distributionLists/createFromFile", Scope: "tamarack", Tags: []string{"Recipients"}},
		func(ctx context.Context, in *struct {
			TenantId int64 `path:"tenantId"`
		}) (*struct{}, error) {
			return nil, rest.NotImplemented("createFromFile")
		})
	rest.Register(api, rest.Op{ID: "getGroupTreeNodes", Method: http.MethodGet, Path: "/v2.1/groups/tree", Scope: "elm", Tags: []string{"Recipients"}},
		func(ctx context.Context, in *struct {
		}) (*struct{}, error) {
			return nil, rest.NotImplemented("getGroupTreeNodes")
		})
	rest.Register(api, rest.Op{ID: "createShortenedUrl", Method: http.MethodPost, Path: "/v2/public/shortenedUrl", Scope: "tamarack", Tags: []string{"Recipients"}},
		func(ctx context.Context, in *struct {
		}) (*struct{}, error) {
			return nil, rest.NotImplemented("createShortenedUrl")
		})
}
