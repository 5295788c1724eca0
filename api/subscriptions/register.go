// Package subscriptions serves hook subscriptions: the events tocsin pushes to other systems.
package subscriptions

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/tocsin/tocsin/api/rest"
)

// Register adds the subscriptions operations to api.
func Register(api huma.API, d rest.Deps) {
	rest.Register(api, rest.Op{ID: "createSubscription", Method: http.MethodPost, Path: "/v2/settings/subscriptions", Scope: "tamarack", Tags: []string{"Subscriptions"}},
		func(ctx context.Context, in *struct {
		}) (*struct{}, error) {
			return nil, rest.NotImplemented("createSubscription")
		})
	rest.Register(api, rest.Op{ID: "getSubscriptions", Method: http.MethodGet, Path: "/v2/settings/subscriptions", Scope: "tamarack", Tags: []string{"Subscriptions"}},
		func(ctx context.Context, in *struct {
		}) (*struct{}, error) {
			return nil, rest.NotImplemented("getSubscriptions")
		})
	rest.Register(api, rest.Op{ID: "getSubscription", Method: http.MethodGet, Path: "/v2/settings/subscriptions/{id}", Scope: "tamarack", Tags: []string{"Subscriptions"}},
		func(ctx context.Context, in *struct {
			Id int64 `path:"id"`
		}) (*struct{}, error) {
			return nil, rest.NotImplemented("getSubscription")
		})
	rest.Register(api, rest.Op{ID: "updateSubscription", Method: http.MethodPut, Path: "/v2/settings/subscriptions/{id}", Scope: "tamarack", Tags: []string{"Subscriptions"}},
		func(ctx context.Context, in *struct {
			Id int64 `path:"id"`
		}) (*struct{}, error) {
			return nil, rest.NotImplemented("updateSubscription")
		})
	rest.Register(api, rest.Op{ID: "deleteSubscription", Method: http.MethodDelete, Path: "/v2/settings/subscriptions/{id}", Scope: "tamarack", Tags: []string{"Subscriptions"}},
		func(ctx context.Context, in *struct {
			Id int64 `path:"id"`
		}) (*struct{}, error) {
			return nil, rest.NotImplemented("deleteSubscription")
		})
	rest.Register(api, rest.Op{ID: "getEventTypes", Method: http.MethodGet, Path: "/v2/settings/subscriptions/eventTypes", Scope: "tamarack", Tags: []string{"Subscriptions"}},
		func(ctx context.Context, in *struct {
		}) (*struct{}, error) {
			return nil, rest.NotImplemented("getEventTypes")
		})
	rest.Register(api, rest.Op{ID: "getSubscriptionHistory", Method: http.MethodGet, Path: "/v2/settings/subscriptions/{id}/history", Scope: "tamarack", Tags: []string{"Subscriptions"}},
		func(ctx context.Context, in *struct {
			Id int64 `path:"id"`
		}) (*struct{}, error) {
			return nil, rest.NotImplemented("getSubscriptionHistory")
		})
	rest.Register(api, rest.Op{ID: "getSubscriptionTest", Method: http.MethodGet, Path: "/v2/settings/subscriptions/{id}/test", Scope: "tamarack", Tags: []string{"Subscriptions"}},
		func(ctx context.Context, in *struct {
			Id int64 `path:"id"`
		}) (*struct{}, error) {
			return nil, rest.NotImplemented("getSubscriptionTest")
		})
}
