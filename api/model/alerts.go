package model

import (
	"time"

	"github.com/tocsin/tocsin/api/rest"
)

// SendAlertRequest submits an alert.
type SendAlertRequest struct {
	Settings AlertSettings `json:"settings"`
	JobID    string        `json:"jobId,omitempty" maxLength:"200" doc:"Client job id: a retry with the same jobId (or Idempotency-Key header) and the same alert returns the first alert instead of creating another; the same key with a different alert is a 422, and two alerts of one bulk send with the same key a 400. Keys starting with bulk: are reserved for the keys a bulk send makes from its Idempotency-Key (a 400)." example:"job-2024-11-02-001"`
}

// PreviewAlertRequest checks an alert and renders it without sending anything.
type PreviewAlertRequest struct {
	Settings          AlertSettings `json:"settings"`
	SampleRecipientID int64         `json:"sampleRecipientId,omitempty" minimum:"1" doc:"Contact whose values fill the variables; the first resolved recipient when absent." example:"12"`
}

// SendAlertResponse answers an accepted alert.
type SendAlertResponse struct {
	AlertID      int64       `json:"alertId" example:"42"`
	Status       AlertStatus `json:"status"`
	WorkflowID   string      `json:"workflowId" doc:"The SendAlert workflow in the Temporal UI: alert-<tenant>-<id>-<tag>, the tag random and chosen when the alert is stored (alerts stored before tags came have none)." example:"alert-1001-42-k3x7q2ab"`
	JobID        string      `json:"jobId,omitempty" doc:"The client's job id or Idempotency-Key."`
	ScheduledFor *time.Time  `json:"scheduledFor,omitempty" doc:"When a Later alert will be sent."`
	Replayed     bool        `json:"replayed" doc:"True when this answers a retry: the alert was created by an earlier request with the same key."`
	CreatedAt    time.Time   `json:"createdAt"`
}

// SendAlertResult is the outcome of one alert of a bulk send.
type SendAlertResult struct {
	Index    int                      `json:"index" doc:"Position of the alert in the request, from 0." example:"0"`
	Accepted bool                     `json:"accepted"`
	Alert    *SendAlertResponse       `json:"alert,omitempty" doc:"The accepted alert."`
	Status   int                      `json:"status" doc:"The HTTP status this alert alone would have had." example:"201"`
	Detail   string                   `json:"detail,omitempty" doc:"Why it was refused."`
	Errors   []rest.ValidationFailure `json:"errors,omitempty" doc:"The failing fields, located inside body.alerts[index]: at most 20, bounded as the errors of any problem are."`
	// MoreErrors counts the failures left out of Errors.
	MoreErrors int `json:"moreErrors,omitempty" doc:"How many further failing fields were found but not listed." example:"0"`
}

// BulkSendAlertRequest submits several alerts.
type BulkSendAlertRequest struct {
	Alerts []SendAlertRequest `json:"alerts" nullable:"false" minItems:"1" maxItems:"100" doc:"The alerts, 1 to 100."`
}

// BulkSendAlertResponse lists the outcome of every alert: one refused alert
// does not stop the others.
type BulkSendAlertResponse struct {
	Accepted int               `json:"accepted" example:"2"`
	Rejected int               `json:"rejected" example:"0"`
	Results  []SendAlertResult `json:"results"`
}

// FindAlertRequest filters alerts; every filter is optional and they combine with AND.
type FindAlertRequest struct {
	IDs          []int64           `json:"ids,omitempty" maxItems:"500"`
	Statuses     []AlertStatus     `json:"statuses,omitempty" maxItems:"6"`
	Completion   []AlertSentStatus `json:"completion,omitempty" maxItems:"4"`
	Types        []AlertType       `json:"types,omitempty" maxItems:"3"`
	Priorities   []PriorityType    `json:"priorities,omitempty" maxItems:"2"`
	Subject      string            `json:"subject,omitempty" maxLength:"200" doc:"Subject contains this, case-insensitive."`
	From         string            `json:"from,omitempty" maxLength:"100" doc:"Sender name contains this, case-insensitive."`
	Incident     string            `json:"incident,omitempty" maxLength:"200" doc:"Incident name contains this, case-insensitive."`
	FacilityName string            `json:"facilityName,omitempty" maxLength:"200" doc:"A facility name equals this, case-insensitive."`
	CreatedBy    string            `json:"createdBy,omitempty" maxLength:"200" doc:"The user who sent it (token subject)."`
	Hidden       *bool             `json:"hidden,omitempty" doc:"true: only hidden alerts; false or absent: only visible ones."`
	After        *time.Time        `json:"after,omitempty" doc:"Created at or after."`
	Before       *time.Time        `json:"before,omitempty" doc:"Created before."`
}

// AlertSummary is an alert in a list.
type AlertSummary struct {
	ID             int64             `json:"id" example:"42"`
	Type           AlertType         `json:"type"`
	Priority       PriorityType      `json:"priority"`
	Subject        string            `json:"subject" example:"Campus closed today"`
	Status         AlertStatus       `json:"status"`
	SentStatus     AlertSentStatus   `json:"sentStatus"`
	From           string            `json:"from,omitempty" doc:"Sender name." example:"Campus Safety"`
	Incident       string            `json:"incident,omitempty"`
	FacilityNames  []string          `json:"facilityNames"`
	Channels       []DeliveryChannel `json:"channels"`
	Hidden         bool              `json:"hidden"`
	CreatedBy      string            `json:"createdBy"`
	RecipientCount int64             `json:"recipientCount"`
	CreatedAt      time.Time         `json:"createdAt"`
	ScheduledFor   *time.Time        `json:"scheduledFor,omitempty"`
	SentAt         *time.Time        `json:"sentAt,omitempty"`
	CompletedAt    *time.Time        `json:"completedAt,omitempty"`
}

// PagedAlertSettingsResponse is a page of alerts.
type PagedAlertSettingsResponse Page[AlertSummary]

// AlertChannelMessage is the message one channel sends, rendered.
type AlertChannelMessage struct {
	Channel    DeliveryChannel `json:"channel"`
	Recipients *int64          `json:"recipients,omitempty" doc:"Recipients with an address on this channel, as recipients.perChannel counts them; absent while the alert's recipients are not resolved."`
	Subject    string          `json:"subject,omitempty"`
	Body       string          `json:"body"`
	HTML       string          `json:"html,omitempty"`
	Encoding   string          `json:"encoding,omitempty" enum:"GSM-7,UCS-2" doc:"Text messages: the SMS encoding the body needs."`
	Segments   int             `json:"segments,omitempty" doc:"Text messages: SMS segments the body takes." example:"1"`
	Characters int             `json:"characters" doc:"Length of the body in characters."`
}

// SearchSummary counts the recipients an alert resolves to. A preview
// resolves them as the alert would at that moment, with the same rule, so
// for the same directory it shows what the alert's own counts then show.
type SearchSummary struct {
	Total      int64                   `json:"total" doc:"Distinct recipients: a person reached through several sources, or also given as an ad-hoc entry with one of their addresses, is one; ad-hoc entries that share an email or phone are one, unless the later one gives an address the alert's channels do not reach already, which makes it a recipient of its own." example:"1200"`
	AdHoc      int64                   `json:"adHoc" doc:"Of them, ad-hoc recipients: the ad-hoc entries that are no contact among the recipients and no earlier entry, or that give an address the alert's channels do not reach otherwise."`
	PerChannel []ChannelRecipientCount `json:"perChannel" doc:"Recipients with an address of their own per enabled channel (an address an earlier recipient is sent to counts once): an email (email), a phone that takes texts (text) or calls (voice, etn), a fax number (fax), a device of the app (push, myAlertsApp). An alert with areas counts on etn the numbers it calls inside them (contacts' and address points', distinct; before its first batch, those inside the areas at the time asked). The broadcast-style channels (eas, mobileBroadcast, teamChat, socialPostA, socialPostB, neighborhood) reach the tenant's destinations rather than recipients and count 0."`
}

// ChannelRecipientCount is the number of recipients reachable on a channel.
type ChannelRecipientCount struct {
	Channel DeliveryChannel `json:"channel"`
	Count   int64           `json:"count" example:"1180"`
}

// SingleAlertSettingsResponse is one alert with its settings; for a preview,
// the rendered messages and recipient counts (id and status are absent).
type SingleAlertSettingsResponse struct {
	ID                int64                 `json:"id,omitempty" doc:"Absent in a preview." example:"42"`
	Status            AlertStatus           `json:"status,omitempty" doc:"Absent in a preview."`
	SentStatus        AlertSentStatus       `json:"sentStatus,omitempty" doc:"Absent in a preview."`
	CreatedBy         string                `json:"createdBy,omitempty"`
	CreatedAt         *time.Time            `json:"createdAt,omitempty"`
	ScheduledFor      *time.Time            `json:"scheduledFor,omitempty"`
	Settings          AlertSettings         `json:"settings" doc:"The settings, with the tenant's defaults applied."`
	Attachments       []AlertAttachment     `json:"attachments"`
	Recipients        *SearchSummary        `json:"recipients,omitempty" doc:"Who the alert reaches. For an alert, its resolved recipients; absent while they are not resolved (a Scheduled alert, or a Queued one for a moment), and, for an alert with areas on etn whose first batch has not stored the numbers it calls, when counting those inside its areas took longer than 5s: they are resolved when it is sent, from the directory as it is then, and previewing its settings counts them as of now. For a preview, who the alert would reach now (always present)."`
	Messages          []AlertChannelMessage `json:"messages" doc:"The message of each enabled channel as it is sent, with variables filled from a sample recipient (when replaceMessageVariables is true; with none before the recipients are resolved) and the response link, where messages carry one, as a short link whose code is XXXXXXXX: the text's encoding, segments and characters are those of the text that recipient receives. A social post (socialPostA, socialPostB) shows the post as the network gets it: no subject, the body being the subject and text as one, cut at a word boundary to the network's length, then the link (network A) and the hashtags."`
	SampleRecipientID int64                 `json:"sampleRecipientId,omitempty" doc:"The contact whose values filled the variables."`
}

// AlertAttachment is a file attached to the alert's email.
type AlertAttachment struct {
	Name        string `json:"name" example:"evacuation.pdf"`
	ContentType string `json:"contentType" example:"application/pdf"`
	Size        int64  `json:"size" example:"48213"`
}

// AlertStatusChange is one transition of an alert.
type AlertStatusChange struct {
	Status AlertStatus `json:"status"`
	At     time.Time   `json:"at"`
	Detail string      `json:"detail,omitempty"`
}

// SingleAlertStatusResponse is an alert's status with its progress.
type SingleAlertStatusResponse struct {
	AlertID      int64                     `json:"alertId" example:"42"`
	Status       AlertStatus               `json:"status"`
	SentStatus   AlertSentStatus           `json:"sentStatus"`
	Completed    bool                      `json:"completed" doc:"The alert's workflow ended (completedAt says when): every cycle ran and the broadcast duration passed, the alert was cancelled, or the workflow stopped on an error (an alert already Sent stays Sent)."`
	Cycle        int                       `json:"cycle" doc:"The cycle in progress or last run (0 before delivery)." example:"1"`
	Recipients   int64                     `json:"recipients" doc:"Resolved recipients (0 until resolved)." example:"1200"`
	Deliveries   DeliverySummary           `json:"deliveries" doc:"Delivery counts over every channel and cycle."`
	Channels     []AggregatedChannelResult `json:"channels" doc:"Delivery counts per channel."`
	Error        string                    `json:"error,omitempty" doc:"Why the alert failed."`
	History      []AlertStatusChange       `json:"history" doc:"Every transition, oldest first."`
	ScheduledFor *time.Time                `json:"scheduledFor,omitempty"`
	QueuedAt     *time.Time                `json:"queuedAt,omitempty"`
	ProcessingAt *time.Time                `json:"processingAt,omitempty"`
	SentAt       *time.Time                `json:"sentAt,omitempty"`
	FailedAt     *time.Time                `json:"failedAt,omitempty"`
	CompletedAt  *time.Time                `json:"completedAt,omitempty"`
}

// AlertDefaults are a tenant's defaults for new alerts.
type AlertDefaults struct {
	Type     AlertType         `json:"type" doc:"The type of an alert that leaves it out. Only Default can be stored: a Poll alert needs its survey questions and a Conference alert its invitation, which defaults do not hold, so those types are given with the alert."`
	Priority PriorityType      `json:"priority"`
	Channels []DeliveryChannel `json:"channels" nullable:"false" minItems:"1" maxItems:"13" doc:"Channels enabled when an alert has no channel settings; distinct."`
	Workflow WorkflowSettings  `json:"workflow"`
	Sender   SenderSettings    `json:"sender"`
	LoudTone bool              `json:"loudTone" doc:"Loud tone on devices for Emergency alerts."`
}

// SingleAlertDefaultsRequest asks for the defaults, optionally for a type and priority.
type SingleAlertDefaultsRequest struct {
	Type     AlertType    `json:"type,omitempty" doc:"The type of the alert about to be created."`
	Priority PriorityType `json:"priority,omitempty" doc:"The priority of the alert about to be created."`
}

// SingleAlertDefaultsResponse carries the tenant's defaults.
type SingleAlertDefaultsResponse struct {
	Defaults        AlertDefaults    `json:"defaults"`
	PriorityOptions []PriorityOption `json:"priorityOptions"`
	ScheduleTypes   []ScheduleType   `json:"scheduleTypes"`
	Customized      bool             `json:"customized" doc:"The tenant changed the built-in defaults."`
	UpdatedAt       *time.Time       `json:"updatedAt,omitempty"`
}

// CancelAlertRequest is the optional body of cancelAlert.
type CancelAlertRequest struct {
	Reason string `json:"reason,omitempty" maxLength:"500" doc:"Why the alert is cancelled; recorded in its status history and sent with alert.cancelled."`
}
