// Package alerting serves the alert operations: create, preview, find, status and delivery results.
package alerting

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/tocsin/tocsin/api/rest"
)

// Register adds the alerting operations to api.
func Register(api huma.API, d rest.Deps) {
	rest.Register(api, rest.Op{ID: "createAlertWithAttachment", Method: http.MethodPost, Path: "/v2/alertsWithAttachments", Scope: "tamarack", Tags: []string{"Alerts"}},
		func(ctx context.Context, in *struct {
		}) (*struct{}, error) {
			return nil, rest.NotImplemented("createAlertWithAttachment")
		})
	rest.Register(api, rest.Op{ID: "createAlerts", Method: http.MethodPost, Path: "/v2/alerts", Scope: "tamarack", Tags: []string{"Alerts"}},
		func(ctx context.Context, in *struct {
		}) (*struct{}, error) {
			return nil, rest.NotImplemented("createAlerts")
		})
	rest.Register(api, rest.Op{ID: "createAlertsPreview", Method: http.MethodPost, Path: "/v2/alerts/preview", Scope: "tamarack", Tags: []string{"Alerts"}},
		func(ctx context.Context, in *struct {
		}) (*struct{}, error) {
			return nil, rest.NotImplemented("createAlertsPreview")
		})
	rest.Register(api, rest.Op{ID: "findAlerts", Method: http.MethodPost, Path: "/v2/alerts/find", Scope: "tamarack", Tags: []string{"Alerts"}},
		func(ctx context.Context, in *struct {
		}) (*struct{}, error) {
			return nil, rest.NotImplemented("findAlerts")
		})
	rest.Register(api, rest.Op{ID: "getAlertsDefault", Method: http.MethodPost, Path: "/v2/alerts/defaults", Scope: "tamarack", Tags: []string{"Alerts"}},
		func(ctx context.Context, in *struct {
		}) (*struct{}, error) {
			return nil, rest.NotImplemented("getAlertsDefault")
		})
	rest.Register(api, rest.Op{ID: "getAlertsById", Method: http.MethodGet, Path: "/v2/alerts/{id}", Scope: "tamarack", Tags: []string{"Alerts"}},
		func(ctx context.Context, in *struct {
			Id int64 `path:"id"`
		}) (*struct{}, error) {
			return nil, rest.NotImplemented("getAlertsById")
		})
	rest.Register(api, rest.Op{ID: "getAlertsByIdStatus", Method: http.MethodGet, Path: "/v2/alerts/{id}/status", Scope: "tamarack", Tags: []string{"Alerts"}},
		func(ctx context.Context, in *struct {
			Id int64 `path:"id"`
		}) (*struct{}, error) {
			return nil, rest.NotImplemented("getAlertsByIdStatus")
		})
	rest.Register(api, rest.Op{ID: "getAlertsByIdResults", Method: http.MethodGet, Path: "/v2/alerts/{id}/results", Scope: "tamarack", Tags: []string{"Alerts"}},
		func(ctx context.Context, in *struct {
			Id int64 `path:"id"`
		}) (*struct{}, error) {
			return nil, rest.NotImplemented("getAlertsByIdResults")
		})
	rest.Register(api, rest.Op{ID: "getAlertsByIdRecipients", Method: http.MethodGet, Path: "/v2/alerts/{id}/results/recipients", Scope: "tamarack", Tags: []string{"Alerts"}},
		func(ctx context.Context, in *struct {
			Id int64 `path:"id"`
		}) (*struct{}, error) {
			return nil, rest.NotImplemented("getAlertsByIdRecipients")
		})
	rest.Register(api, rest.Op{ID: "getAlertsByIdSingleRecipient", Method: http.MethodGet, Path: "/v2/alerts/{alertId}/results/recipients/{recipientId}", Scope: "tamarack", Tags: []string{"Alerts"}},
		func(ctx context.Context, in *struct {
			AlertId     int64 `path:"alertId"`
			RecipientId int64 `path:"recipientId"`
		}) (*struct{}, error) {
			return nil, rest.NotImplemented("getAlertsByIdSingleRecipient")
		})
	rest.Register(api, rest.Op{ID: "getAggregatedChannelSummaryResponse", Method: http.MethodGet, Path: "/v2/alerts/{alertId}/results/channels/aggregatedSummary", Scope: "tamarack", Tags: []string{"Alerts"}},
		func(ctx context.Context, in *struct {
			AlertId int64 `path:"alertId"`
		}) (*struct{}, error) {
			return nil, rest.NotImplemented("getAggregatedChannelSummaryResponse")
		})
	rest.Register(api, rest.Op{ID: "getAlertChannelResultsEmail", Method: http.MethodGet, Path: "/v2/alerts/{alertId}/results/channels/email", Scope: "tamarack", Tags: []string{"Alerts"}},
		func(ctx context.Context, in *struct {
			AlertId int64 `path:"alertId"`
		}) (*struct{}, error) {
			return nil, rest.NotImplemented("getAlertChannelResultsEmail")
		})
	rest.Register(api, rest.Op{ID: "getAlertChannelResultsEtn", Method: http.MethodGet, Path: "/v2/alerts/{alertId}/results/channels/etn", Scope: "tamarack", Tags: []string{"Alerts"}},
		func(ctx context.Context, in *struct {
			AlertId int64 `path:"alertId"`
		}) (*struct{}, error) {
			return nil, rest.NotImplemented("getAlertChannelResultsEtn")
		})
	rest.Register(api, rest.Op{ID: "getAlertChannelResultsText", Method: http.MethodGet, Path: "/v2/alerts/{alertId}/results/channels/text", Scope: "tamarack", Tags: []string{"Alerts"}},
		func(ctx context.Context, in *struct {
			AlertId int64 `path:"alertId"`
		}) (*struct{}, error) {
			return nil, rest.NotImplemented("getAlertChannelResultsText")
		})
	rest.Register(api, rest.Op{ID: "getAlertChannelResultsVoice", Method: http.MethodGet, Path: "/v2/alerts/{alertId}/results/channels/voice", Scope: "tamarack", Tags: []string{"Alerts"}},
		func(ctx context.Context, in *struct {
			AlertId int64 `path:"alertId"`
		}) (*struct{}, error) {
			return nil, rest.NotImplemented("getAlertChannelResultsVoice")
		})
	rest.Register(api, rest.Op{ID: "getNeighborhoodChannelStatus", Method: http.MethodGet, Path: "/v2/alerts/{alertId}/results/channels/social/neighborhood", Scope: "tamarack", Tags: []string{"Alerts"}},
		func(ctx context.Context, in *struct {
			AlertId int64 `path:"alertId"`
		}) (*struct{}, error) {
			return nil, rest.NotImplemented("getNeighborhoodChannelStatus")
		})
	rest.Register(api, rest.Op{ID: "getAlertsSentV3", Method: http.MethodGet, Path: "/v3/user/alerts/sent", Scope: "tamarack", Tags: []string{"Alerts"}},
		func(ctx context.Context, in *struct {
		}) (*struct{}, error) {
			return nil, rest.NotImplemented("getAlertsSentV3")
		})
	rest.Register(api, rest.Op{ID: "sendBulkAlerts", Method: http.MethodPost, Path: "/v4/{tenantId}/alerts/bulkSend", Scope: "tamarack", Tags: []string{"Alerts"}},
		func(ctx context.Context, in *struct {
			TenantId int64 `path:"tenantId"`
		}) (*struct{}, error) {
			return nil, rest.NotImplemented("sendBulkAlerts")
		})
}
