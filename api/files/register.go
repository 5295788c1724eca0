// Package files serves the per-tenant file store of images and audio.
package files

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/tocsin/tocsin/api/rest"
)

// Register adds the files operations to api.
func Register(api huma.API, d rest.Deps) {
	rest.Register(api, rest.Op{ID: "uploadFileV4", Method: http.MethodPost, Path: "/v4/{tenantId}/files", Scope: "content", Tags: []string{"Files"}},
		func(ctx context.Context, in *struct {
			TenantId int64 `path:"tenantId"`
		}) (*struct{}, error) {
			return nil, rest.NotImplemented("uploadFileV4")
		})
	rest.Register(api, rest.Op{ID: "getAllFilesV4", Method: http.MethodGet, Path: "/v4/{tenantId}/files", Scope: "content", Tags: []string{"Files"}},
		func(ctx context.Context, in *struct {
			TenantId int64 `path:"tenantId"`
		}) (*struct{}, error) {
			return nil, rest.NotImplemented("getAllFilesV4")
		})
	rest.Register(api, rest.Op{ID: "getFileV4", Method: http.MethodGet, Path: "/v4/{tenantId}/files/{FileName}", Scope: "content", Tags: []string{"Files"}},
		func(ctx context.Context, in *struct {
			TenantId int64  `path:"tenantId"`
			FileName string `path:"FileName"`
		}) (*struct{}, error) {
			return nil, rest.NotImplemented("getFileV4")
		})
	rest.Register(api, rest.Op{ID: "updateFileDescriptionV4", Method: http.MethodPut, Path: "/v4/{tenantId}/files/{FileName}", Scope: "content", Tags: []string{"Files"}},
		func(ctx context.Context, in *struct {
			TenantId int64  `path:"tenantId"`
			FileName string `path:"FileName"`
		}) (*struct{}, error) {
			return nil, rest.NotImplemented("updateFileDescriptionV4")
		})
	rest.Register(api, rest.Op{ID: "deleteFileV4", Method: http.MethodDelete, Path: "/v4/{tenantId}/files/{FileName}", Scope: "content", Tags: []string{"Files"}},
		func(ctx context.Context, in *struct {
			TenantId int64  `path:"tenantId"`
			FileName string `path:"FileName"`
		}) (*struct{}, error) {
			return nil, rest.NotImplemented("deleteFileV4")
		})
}
