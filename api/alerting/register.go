// Package alerting serves the alert operations: create, preview, find, status and delivery results.
package alerting

import (
	"net/http"
	"reflect"

	"github.com/danielgtaylor/huma/v2"

	"github.com/tocsin/tocsin/api/model"
	"github.com/tocsin/tocsin/api/rest"
	"github.com/tocsin/tocsin/storage/files"
	"github.com/tocsin/tocsin/storage/results"
)

type handler struct {
	d       rest.Deps
	api     huma.API
	results resultStore
	files   attachmentStore
	backlog backlogEstimate
}

var (
	resultsTags  = []string{"Alerts", "Alert results"}
	contactsTags = []string{"Alerts", "Alert results", "Contacts"}
	responseTags = []string{"Alert responses"}
	statusDoc    = "The alert's lifecycle: Scheduled (waiting for its send time) -> Queued -> Processing (recipients resolved, deliveries running) -> Sent (every recipient of the first cycle has a final result on every channel, at least one delivery succeeded) or Failed (no recipients, nothing delivered, or the workflow failed). Progress counts come from per-batch totals."
	createDoc    = "Validates the alert completely (unknown contacts, groups, lists or files, empty recipients, bad areas, unknown channels or variables and oversize messages are 400s naming the field), stores it together with the request to start its SendAlert workflow (`alert-<tenant>-<id>`) and answers 201; the workflow is started right after commit, so an accepted alert is delivered even when Temporal or the worker is down for a while. A NonEmergency alert is refused while too many NonEmergency alerts wait to be delivered: 429 with Retry-After when its tenant has more than TOCSIN_BACKLOG_TENANT_LIMIT of them, 503 with Retry-After when all tenants together have more than TOCSIN_BACKLOG_LIMIT. Emergency alerts are always accepted. A retry with the same `jobId` or `Idempotency-Key` answers 200 with the first alert (`replayed: true`, header `Idempotent-Replayed: true`)."
)

// Register adds the alerting operations to api.
func Register(api huma.API, d rest.Deps) {
	h := &handler{d: d, api: api, results: results.New(d.DB), files: files.New(d.DB, d.Objects)}
	rest.Register(api, rest.Op{ID: "createAlertWithAttachment", Method: http.MethodPost, Path: "/v2/alertsWithAttachments", Scope: "tamarack", Tags: []string{"Alerts"},
		Summary: "Send an alert with an attachment", Status: http.StatusCreated, Errors: []int{http.StatusRequestEntityTooLarge, http.StatusTooManyRequests},
		Description: createDoc + " Multipart form: `alert` is the SendAlertRequest as a JSON string (validated like the JSON body of createAlerts; failures are located at body.alert...), `attachment` an optional file (at most 10 MiB) stored in the object store and attached to the email, `jobId` the send-alert job id, and `async` is deprecated and ignored (every alert is asynchronous; subscribe to alert.sent, alert.completed and alert.failed for its final state)."},
		h.createAlertWithAttachment)
	rest.Register(api, rest.Op{ID: "createAlerts", Method: http.MethodPost, Path: "/v2/alerts", Scope: "tamarack", Tags: []string{"Alerts"},
		Summary: "Send an alert", Status: http.StatusCreated, Errors: []int{http.StatusTooManyRequests}, Description: createDoc}, h.createAlerts)
	rest.Register(api, rest.Op{ID: "createAlertsPreview", Method: http.MethodPost, Path: "/v2/alerts/preview", Scope: "tamarack", Tags: []string{"Alerts"},
		Summary:     "Check and preview an alert without sending it",
		Description: "The same validation as createAlerts, then the recipient counts per channel and each channel's message rendered with the variables of a sample recipient (with the SMS encoding and segment count of texts). Nothing is stored or sent."},
		h.createAlertsPreview)
	rest.Register(api, rest.Op{ID: "findAlerts", Method: http.MethodPost, Path: "/v2/alerts/find", Scope: "tamarack", Tags: []string{"Alerts"},
		Summary: "Find alerts", Description: "Filters combine with AND; an empty body lists every visible alert. Sort by id, createdAt (default, descending), sentAt, subject, status, priority, type or from."},
		h.findAlerts)
	rest.Register(api, rest.Op{ID: "getAlertsDefault", Method: http.MethodPost, Path: "/v2/alerts/defaults", Scope: "tamarack", Tags: []string{"Alerts"},
		Summary: "The tenant's defaults for a new alert", Description: "Channels, priority, delivery settings and sender applied to alerts that leave them out; change them with updateAlertsDefault."},
		h.getAlertsDefault)
	rest.Register(api, rest.Op{ID: "updateAlertsDefault", Method: http.MethodPut, Path: "/v2/alerts/defaults", Scope: "tamarack", Tags: []string{"Alerts"},
		Summary: "Change the tenant's defaults for new alerts"}, h.updateAlertsDefault)
	rest.Register(api, rest.Op{ID: "getAlertsById", Method: http.MethodGet, Path: "/v2/alerts/{id}", Scope: "tamarack", Tags: []string{"Alerts"},
		Summary: "An alert with its settings and rendered messages"}, h.getAlertsByID)
	rest.Register(api, rest.Op{ID: "getAlertsByIdStatus", Method: http.MethodGet, Path: "/v2/alerts/{id}/status", Scope: "tamarack", Tags: []string{"Alerts"},
		Summary: "An alert's status and progress", Description: statusDoc}, h.getAlertsByIDStatus)
	rest.Register(api, rest.Op{ID: "getAlertsByIdResults", Method: http.MethodGet, Path: "/v2/alerts/{id}/results", Scope: "tamarack", Tags: resultsTags,
		Summary: "An alert's delivery summary", Description: "Totals per delivery status over every channel and per channel, confirmations, and the answers of a Poll alert."},
		h.getAlertsByIDResults)
	rest.Register(api, rest.Op{ID: "getAlertsByIdRecipients", Method: http.MethodGet, Path: "/v2/alerts/{id}/results/recipients", Scope: "tamarack", Tags: contactsTags,
		Summary: "An alert's recipients", Description: "Paged; sortable by lastName, firstName, responseTime and recipientId (default)."},
		h.getAlertsByIDRecipients)
	rest.Register(api, rest.Op{ID: "getAlertsByIdSingleRecipient", Method: http.MethodGet, Path: "/v2/alerts/{alertId}/results/recipients/{recipientId}", Scope: "tamarack", Tags: contactsTags,
		Summary: "One recipient with every delivery on every channel"}, h.getAlertsByIDSingleRecipient)
	rest.Register(api, rest.Op{ID: "getAggregatedChannelSummaryResponse", Method: http.MethodGet, Path: "/v2/alerts/{alertId}/results/channels/aggregatedSummary", Scope: "tamarack", Tags: resultsTags,
		Summary: "Email, voice and text totals of an alert"}, h.getAggregatedChannelSummary)
	rest.Register(api, rest.Op{ID: "getAlertChannelResultsEmail", Method: http.MethodGet, Path: "/v2/alerts/{alertId}/results/channels/email", Scope: "tamarack", Tags: resultsTags,
		Summary: "An alert's email deliveries"}, h.getAlertChannelResultsEmail)
	rest.Register(api, rest.Op{ID: "getAlertChannelResultsEtn", Method: http.MethodGet, Path: "/v2/alerts/{alertId}/results/channels/etn", Scope: "tamarack", Tags: resultsTags,
		Summary: "An alert's emergency telephone notification calls"}, h.getAlertChannelResultsEtn)
	rest.Register(api, rest.Op{ID: "getAlertChannelResultsText", Method: http.MethodGet, Path: "/v2/alerts/{alertId}/results/channels/text", Scope: "tamarack", Tags: resultsTags,
		Summary: "An alert's text-message deliveries"}, h.getAlertChannelResultsText)
	rest.Register(api, rest.Op{ID: "getAlertChannelResultsVoice", Method: http.MethodGet, Path: "/v2/alerts/{alertId}/results/channels/voice", Scope: "tamarack", Tags: resultsTags,
		Summary: "An alert's voice calls"}, h.getAlertChannelResultsVoice)
	rest.Register(api, rest.Op{ID: "getNeighborhoodChannelStatus", Method: http.MethodGet, Path: "/v2/alerts/{alertId}/results/channels/social/neighborhood", Scope: "tamarack", Tags: resultsTags,
		Summary: "An alert's neighborhood-network posts", Description: "One row per account and group; sortable by AccountName (default), GroupName, Status and UpdatedAt. Empty while the neighborhood channel has no provider."},
		h.getNeighborhoodChannelStatus)
	rest.Register(api, rest.Op{ID: "getAlertsSentV3", Method: http.MethodGet, Path: "/v3/user/alerts/sent", Scope: "tamarack", Tags: []string{"Alerts", "User", "V3"},
		Summary: "Alerts sent by the current user", Description: "The alerts whose sender is the token's subject. after/before filter by the time sent (the creation time while not sent yet). Sort by createdAt (default, descending), sentAt, subject, status, priority, type, from or id."},
		h.getAlertsSentV3)
	rest.Register(api, rest.Op{ID: "sendBulkAlerts", Method: http.MethodPost, Path: "/v4/{tenantId}/alerts/bulkSend", Scope: "tamarack", Tags: []string{"Alerts"},
		Summary: "Send several alerts", Description: "Each alert is validated, stored and started on its own: one refused alert does not stop the others. results lists every alert's outcome in order (failures located at body.alerts[i]...); an alert's jobId makes its retry return the first alert."},
		h.sendBulkAlerts)

	rest.Register(api, rest.Op{ID: "getAlertResponsePage", Method: http.MethodGet, Path: "/v2/public/alerts/responses/{token}", Public: true, Tags: responseTags,
		Summary: "A recipient's personal response page", Description: "The page the {{responseLink}} of an alert's message opens: the poll's questions with a button per option, or a confirmation button. HTML."},
		h.getAlertResponsePage)
	rest.Register(api, rest.Op{ID: "respondToAlert", Method: http.MethodPost, Path: "/v2/public/alerts/responses/{token}", Public: true, Tags: responseTags,
		Summary: "Answer a poll or confirm an alert", Errors: []int{http.StatusGone},
		Description: "Records the recipient's answer (the last answer to a question counts) or confirmation and emits alert.recipient.responded. A poll answer also confirms. Browsers (Accept: text/html) are redirected (303) back to the page; other clients get the recipient's answers."},
		h.respondToAlert)
	rest.Register(api, rest.Op{ID: "receiveDeliveryReceipts", Method: http.MethodPost, Path: "/v2/alerts/receipts", Public: true, Tags: []string{"Alert results"},
		Summary: "Delivery receipts from providers", Errors: []int{http.StatusUnauthorized},
		Description: "Providers report what became of messages, identified by the idempotency key tocsin sent with each. Authenticated with `Authorization: Bearer <TOCSIN_RECEIPTS_TOKEN>` (refused while the setting is empty). delivered turns a Sent delivery into Delivered; failed turns it into Failed."},
		h.receiveDeliveryReceipts)

	// Models of the alert family that no operation uses directly.
	for _, t := range []any{
		model.AccessRecipe{}, model.Facility{}, model.MobileBroadcastResultSummary{}, model.ChannelDelivery{},
		model.SelectedAreaReference{}, model.IGeometryObject{},
	} {
		api.OpenAPI().Components.Schemas.Schema(reflect.TypeOf(t), true, "")
	}
}
