// Package alerting serves the alert operations: create, preview, find, status and delivery results.
package alerting

import (
	"fmt"
	"net/http"
	"reflect"

	"github.com/danielgtaylor/huma/v2"

	"github.com/tocsin/tocsin/api/model"
	"github.com/tocsin/tocsin/api/rest"
	"github.com/tocsin/tocsin/storage/channelstate"
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
	alertsArea    = rest.Area{Scope: "tamarack", Tags: []string{"Alerts"}}
	resultsArea   = rest.Area{Scope: "tamarack", Tags: []string{"Alerts", "Alert results"}}
	contactsArea  = rest.Area{Scope: "tamarack", Tags: []string{"Alerts", "Alert results", "Contacts"}}
	responsesArea = rest.Area{Public: true, Tags: []string{"Alert responses"}}
	statusDoc     = "The alert's lifecycle: Scheduled (waiting for its send time) -> Queued -> Processing (recipients resolved, deliveries running) -> Sent (every recipient of the first cycle has a final result on every channel, at least one delivery succeeded) or Failed (no recipients and no broadcast or ETN area to reach, nothing delivered, or the workflow failed); Scheduled -> Cancelled by cancelAlert. An alert whose areas hold no contact still broadcasts and calls the ETN numbers inside them. Progress counts come from per-batch totals."
	createDoc     = "Validates the alert completely (unknown contacts, groups, lists or files, including the audio files and fax documents of channel blocks, which must also be of the kind their channel uses, empty recipients, bad areas, unknown channels or variables and oversize messages are 400s naming the field), stores it together with the request to start its SendAlert workflow (`alert-<tenant>-<id>-<tag>`, the tag random) and answers 201; the workflow is started right after commit, so an accepted alert is delivered even when Temporal or the worker is down for a while. A NonEmergency alert is refused while too many NonEmergency alerts wait to be delivered: 429 with Retry-After when its tenant already has TOCSIN_BACKLOG_TENANT_LIMIT of them, 503 with Retry-After when all tenants together have TOCSIN_BACKLOG_LIMIT. Emergency alerts are always accepted. A retry with the same `jobId` or `Idempotency-Key` and the same alert answers 200 with the first alert (`replayed: true`, header `Idempotent-Replayed: true`); the same key with a different alert (another body, or another attachment) is a 422 naming where the key was given (`header.Idempotency-Key`, `body.jobId`, or, in createAlertWithAttachment, `body.alert.jobId` for the jobId inside the alert part: the first of these the request gives), and nothing is sent."
)

// Register adds the alerting operations to api.
func Register(api huma.API, d rest.Deps) {
	h := &handler{d: d, api: api, results: results.New(d.DB), files: files.New(d.DB, d.Objects)}
	rest.Register(api, alertsArea.Op("createAlertWithAttachment", http.MethodPost, "/v2/alertsWithAttachments", http.StatusCreated, "Send an alert with an attachment",
		createDoc+" Multipart form: `alert` is the SendAlertRequest as a JSON string (validated like the JSON body of createAlerts; failures are located at body.alert...), `attachment` an optional file stored in the object store and attached to the email (it and the stored files of content.attachments take 10 MiB together at most; its part's Content-Type must be a media type, not a range such as */*, else a 400 naming the part; without one, or with application/octet-stream, the type is detected), `jobId` the send-alert job id, and `async` is deprecated and ignored (every alert is asynchronous; subscribe to alert.sent, alert.completed and alert.failed for its final state).", http.StatusRequestEntityTooLarge, http.StatusUnprocessableEntity, http.StatusTooManyRequests).
		DocumentedBy(func(op *huma.Operation) {
			// The alert part is checked as the JSON body of createAlerts is.
			if op.Metadata == nil {
				op.Metadata = map[string]any{}
			}
			op.Metadata[rest.JSONParts] = map[string]*huma.Schema{
				"alert": api.OpenAPI().Components.Schemas.Schema(reflect.TypeOf(model.SendAlertRequest{}), true, ""),
			}
		}),
		h.createAlertWithAttachment)
	rest.Register(api, alertsArea.Op("createAlerts", http.MethodPost, "/v2/alerts", http.StatusCreated, "Send an alert",
		createDoc, http.StatusUnprocessableEntity, http.StatusTooManyRequests), h.createAlerts)
	rest.Register(api, alertsArea.Op("createAlertsPreview", http.MethodPost, "/v2/alerts/preview", 0, "Check and preview an alert without sending it",
		"The same validation as createAlerts, then the recipients resolved and counted as the alert would resolve them now (the same rule its delivery and getAlertsById use, so for the same directory the counts are the alert's) and each channel's message rendered with the variables of a sample recipient (with the SMS encoding and segment count of texts). Nothing is stored or sent. Counting the numbers inside the areas of an alert on etn is bounded to "+channelstate.ETNCountTimeout.String()+": past it the answer is a 503 with Retry-After saying that the count took too long."),
		h.createAlertsPreview)
	rest.Register(api, alertsArea.Op("findAlerts", http.MethodPost, "/v2/alerts/find", 0, "Find alerts",
		"Filters combine with AND; an empty body lists every visible alert. Sort by id, createdAt (default, descending), sentAt, subject, status, priority, type or from."),
		h.findAlerts)
	rest.Register(api, alertsArea.Op("getAlertsDefault", http.MethodPost, "/v2/alerts/defaults", 0, "The tenant's defaults for a new alert",
		"Channels, priority, delivery settings and sender applied to alerts that leave them out; change them with updateAlertsDefault. "+fillRule),
		h.getAlertsDefault)
	rest.Register(api, alertsArea.Op("updateAlertsDefault", http.MethodPut, "/v2/alerts/defaults", 0, "Change the tenant's defaults for new alerts",
		"Replaces the defaults. They fill what an alert leaves out, so only defaults that can serve any alert are stored: type must be Default (a Poll alert needs its survey questions and a Conference alert its invitation, which defaults do not hold; give those types with the alert), channels is a list of 1 to 13 distinct channels (not null), loudTone needs priority Emergency, and workflow and sender are checked as an alert's are. Anything else is a 400 naming the field, and the defaults stay as they were. "+fillRule), h.updateAlertsDefault)
	rest.Register(api, alertsArea.Op("getAlertsById", http.MethodGet, "/v2/alerts/{id}", 0, "An alert with its settings and rendered messages", ""), h.getAlertsByID)
	rest.Register(api, alertsArea.Op("getAlertsByIdStatus", http.MethodGet, "/v2/alerts/{id}/status", 0, "An alert's status and progress",
		statusDoc), h.getAlertsByIDStatus)
	rest.Register(api, alertsArea.Op("cancelAlert", http.MethodPost, "/v2/alerts/{id}/cancel", 0, "Cancel a scheduled alert", cancelDoc, http.StatusConflict), h.cancelAlert)
	rest.Register(api, resultsArea.Op("getAlertsByIdResults", http.MethodGet, "/v2/alerts/{id}/results", 0, "An alert's delivery summary",
		"Totals per delivery status over every channel and per channel, confirmations, and the answers of a Poll alert."),
		h.getAlertsByIDResults)
	rest.Register(api, contactsArea.Op("getAlertsByIdRecipients", http.MethodGet, "/v2/alerts/{id}/results/recipients", 0, "An alert's recipients",
		"Paged; sortable by lastName, firstName, responseTime and recipientId (default)."),
		h.getAlertsByIDRecipients)
	rest.Register(api, contactsArea.Op("getAlertsByIdSingleRecipient", http.MethodGet, "/v2/alerts/{alertId}/results/recipients/{recipientId}", 0, "One recipient with every delivery on every channel", ""), h.getAlertsByIDSingleRecipient)
	rest.Register(api, resultsArea.Op("getAggregatedChannelSummaryResponse", http.MethodGet, "/v2/alerts/{alertId}/results/channels/aggregatedSummary", 0, "Email, voice and text totals of an alert", ""), h.getAggregatedChannelSummary)
	rest.Register(api, resultsArea.Op("getAlertChannelResultsEmail", http.MethodGet, "/v2/alerts/{alertId}/results/channels/email", 0, "An alert's email deliveries", ""), h.getAlertChannelResultsEmail)
	rest.Register(api, resultsArea.Op("getAlertChannelResultsEtn", http.MethodGet, "/v2/alerts/{alertId}/results/channels/etn", 0, "An alert's emergency telephone notification calls", ""), h.getAlertChannelResultsEtn)
	rest.Register(api, resultsArea.Op("getAlertChannelResultsText", http.MethodGet, "/v2/alerts/{alertId}/results/channels/text", 0, "An alert's text-message deliveries", ""), h.getAlertChannelResultsText)
	rest.Register(api, resultsArea.Op("getAlertChannelResultsVoice", http.MethodGet, "/v2/alerts/{alertId}/results/channels/voice", 0, "An alert's voice calls", ""), h.getAlertChannelResultsVoice)
	rest.Register(api, resultsArea.Op("getNeighborhoodChannelStatus", http.MethodGet, "/v2/alerts/{alertId}/results/channels/social/neighborhood", 0, "An alert's neighborhood-network posts",
		"One row per account and group; sortable by AccountName (default), GroupName, Status and UpdatedAt. Empty while the neighborhood channel has no provider."),
		h.getNeighborhoodChannelStatus)
	rest.Register(api, rest.Area{Scope: "tamarack", Tags: []string{"Alerts", "User", "V3"}}.Op("getAlertsSentV3", http.MethodGet, "/v3/user/alerts/sent", 0, "Alerts sent by the current user",
		"The alerts whose sender is the token's subject. after/before filter by the time sent (the creation time while not sent yet). Sort by createdAt (default, descending), sentAt, subject, status, priority, type, from or id."),
		h.getAlertsSentV3)
	rest.Register(api, alertsArea.Op("sendBulkAlerts", http.MethodPost, "/v4/{tenantId}/alerts/bulkSend", 0, "Send several alerts",
		"Each alert is validated, stored and started on its own: one refused alert does not stop the others, even one that does not fit the SendAlertRequest schema (a missing or mistyped property, not an object). results lists every alert's outcome in order (failures located at body.alerts[i]...). Only what concerns the whole request refuses it all with a 400: alerts must hold 1 to 100 alerts (null or an empty list is a 400 naming body.alerts), the body has no other property, no object anywhere in it gives a property twice (or in two cases), and no two alerts have the same key (a 400 naming the later one's jobId, body.alerts[1].jobId: two alerts of one request are never a retry of each other). An alert's jobId makes its retry return the first alert; an Idempotency-Key header keys every alert without a jobId as bulk:<SHA-256 of the key, hex>/<index> (apart from every jobId a client writes), so a retry of the same batch (the same alerts in the same order) with the same key creates none twice: the alerts the first request accepted come back with status 200 and replayed true, the ones it refused are validated again. An alert whose key is already another alert's (a different alert at that jobId or index) is refused in its result with status 422, naming where its key was given.").DocumentedBy(documentBulkBody(api)),
		h.sendBulkAlerts)

	rest.Register(api, responsesArea.Op("getAlertResponsePage", http.MethodGet, "/v2/public/alerts/responses/{token}", 0, "A recipient's personal response page",
		"The page the {{responseLink}} of an alert's message opens: the poll's questions with a button per option, or a confirmation button. HTML."),
		h.getAlertResponsePage)
	rest.Register(api, responsesArea.Op("respondToAlert", http.MethodPost, "/v2/public/alerts/responses/{token}", 0, "Answer a poll or confirm an alert",
		"Records the recipient's answer (the last answer to a question counts) or confirmation and emits alert.recipient.responded when it changes something; the same response again changes nothing and emits nothing. A poll answer also confirms. Browsers (Accept: text/html) are redirected (303) back to the page; other clients get the recipient's answers. Once the alert is closed (see broadcastDurationMinutes), clients get 410 and browsers are redirected to the page, which says so. "+
			fmt.Sprintf("A link may change answers it already gave %d times at once, and regains one change every %d minutes (up to %d); a first answer to each question and the confirmation are not counted. "+
				"Past that, a change is a 429 with Retry-After (the seconds until the link may change an answer again) and the answers stay as they were, so the results show the last answer accepted; browsers are redirected to the page with retryAfter, which says so.",
				results.AnswerChangeBurst, int(results.AnswerChangeInterval.Minutes()), results.AnswerChangeBurst), http.StatusGone, http.StatusTooManyRequests).DocumentedBy(documentRespond),
		h.respondToAlert)
	rest.Register(api, rest.Area{Public: true, Tags: []string{"Alert results"}}.Op("receiveDeliveryReceipts", http.MethodPost, "/v2/alerts/receipts", 0, "Delivery receipts from providers",
		"Providers report what became of messages, identified by the idempotency key tocsin sent with each. Authenticated with `Authorization: Bearer <TOCSIN_RECEIPTS_TOKEN>` (refused while the setting is empty). delivered turns a Sent delivery into Delivered; failed turns it into Failed.", http.StatusUnauthorized),
		h.receiveDeliveryReceipts)

	// Models of the alert family that no operation uses directly.
	for _, t := range []any{
		model.AccessRecipe{}, model.Facility{}, model.MobileBroadcastResultSummary{}, model.ChannelDelivery{},
		model.SelectedAreaReference{}, model.IGeometryObject{},
	} {
		api.OpenAPI().Components.Schemas.Schema(reflect.TypeOf(t), true, "")
	}
}

// documentRespond documents the 303 a browser gets from respondToAlert,
// and the Retry-After of its 429.
func documentRespond(op *huma.Operation) {
	ok := op.Responses["200"]
	op.Responses["303"] = &huma.Response{
		Description: "A browser's answer (Accept: text/html): Location is the response page. The body is the recipient's answers, as with 200.",
		Headers:     ok.Headers, Content: ok.Content,
	}
	op.Responses["429"].Headers = map[string]*huma.Param{"Retry-After": {
		Description: "Seconds until the link may change an answer again.",
		Schema:      &huma.Schema{Type: huma.TypeInteger, Minimum: new(float64(1))},
	}}
}
