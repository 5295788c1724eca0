package model

import (
	"time"
)

// DeliverySummary counts deliveries by status.
type DeliverySummary struct {
	Total     int64 `json:"total" doc:"Deliveries expected: recipients times channels times cycles started." example:"2400"`
	Pending   int64 `json:"pending" doc:"Not attempted yet." example:"0"`
	Retrying  int64 `json:"retrying" example:"0"`
	Sent      int64 `json:"sent" example:"2300"`
	Delivered int64 `json:"delivered" example:"50"`
	Failed    int64 `json:"failed" example:"50"`
	Skipped   int64 `json:"skipped" example:"0"`
	Final     int64 `json:"final" doc:"Sent + Delivered + Failed + Skipped." example:"2400"`
}

// AggregatedChannelResult counts the deliveries of one channel.
type AggregatedChannelResult struct {
	Channel DeliveryChannel `json:"channel"`
	DeliverySummary
}

// AggregatedChannelResults are the email, voice and text counts.
type AggregatedChannelResults struct {
	Email AggregatedChannelResult `json:"email"`
	Voice AggregatedChannelResult `json:"voice"`
	Sms   AggregatedChannelResult `json:"sms"`
}

// AggregatedChannelSummaryResponse is the email, voice and text summary of an alert.
type AggregatedChannelSummaryResponse struct {
	AlertID int64                    `json:"alertId" example:"42"`
	Results AggregatedChannelResults `json:"results"`
	Total   DeliverySummary          `json:"total" doc:"The three channels together."`
}

// SingleDeliverySummaryResponse is the delivery summary of an alert.
type SingleDeliverySummaryResponse struct {
	AlertID    int64                     `json:"alertId" example:"42"`
	Status     AlertStatus               `json:"status"`
	Recipients int64                     `json:"recipients" example:"1200"`
	Confirmed  int64                     `json:"confirmed" doc:"Recipients who confirmed." example:"900"`
	Responded  int64                     `json:"responded" doc:"Recipients who answered a poll question." example:"0"`
	Summary    DeliverySummary           `json:"summary" doc:"Over every channel and cycle."`
	Channels   []AggregatedChannelResult `json:"channels"`
	Poll       *PollResults              `json:"poll,omitempty" doc:"Answers of a Poll alert."`
}

// ChannelResultFields are the fields every per-channel result row shares.
type ChannelResultFields struct {
	RecipientID       int64          `json:"recipientId" doc:"The recipient's number within the alert." example:"7"`
	ContactID         *int64         `json:"contactId,omitempty" doc:"The contact, when the recipient is one." example:"12"`
	Name              PersonName     `json:"name"`
	Cycle             int            `json:"cycle" example:"1"`
	Status            DeliveryStatus `json:"status"`
	Attempts          int            `json:"attempts" example:"1"`
	ProviderMessageID string         `json:"providerMessageId,omitempty"`
	Error             string         `json:"error,omitempty" doc:"As the recipient's delivery shows it (ChannelDelivery.error)."`
	SentAt            *time.Time     `json:"sentAt,omitempty"`
	DeliveredAt       *time.Time     `json:"deliveredAt,omitempty"`
	UpdatedAt         time.Time      `json:"updatedAt"`
}

// EmailResultSummary is one email delivery.
type EmailResultSummary struct {
	ChannelResultFields
	Email string `json:"email" example:"ada@example.com"`
}

// EmailResultsSummaryResponse is a page of email deliveries.
type EmailResultsSummaryResponse ChannelResultsPage[EmailResultSummary]

// phoneResult is a delivery to a phone number.
type phoneResult struct {
	ChannelResultFields
	Phone string `json:"phone" example:"+15551234567"`
}

// SmsResultSummary is one text-message delivery.
type SmsResultSummary phoneResult

// SmsResultsSummaryResponse is a page of text-message deliveries.
type SmsResultsSummaryResponse ChannelResultsPage[SmsResultSummary]

// VoiceResultSummary is one voice call.
type VoiceResultSummary struct {
	ChannelResultFields
	Phone     string `json:"phone" example:"+15551234567"`
	Confirmed bool   `json:"confirmed" doc:"The recipient confirmed (by keypress or link)."`
}

// VoiceResultsSummaryResponse is a page of voice calls.
type VoiceResultsSummaryResponse ChannelResultsPage[VoiceResultSummary]

// EtnResultSummary is one emergency telephone notification call.
type EtnResultSummary phoneResult

// EtnResultsSummaryResponse is a page of emergency telephone notification calls.
type EtnResultsSummaryResponse ChannelResultsPage[EtnResultSummary]

// MobileBroadcastResultSummary is the outcome of a wireless emergency alert broadcast.
type MobileBroadcastResultSummary struct {
	Status            DeliveryStatus `json:"status"`
	CapIdentifier     string         `json:"capIdentifier,omitempty" doc:"Identifier of the CAP message sent."`
	ProviderMessageID string         `json:"providerMessageId,omitempty"`
	Error             string         `json:"error,omitempty"`
	SentAt            *time.Time     `json:"sentAt,omitempty"`
}

// NeighborhoodAccount is an account on the neighborhood network.
type NeighborhoodAccount struct {
	ID   string `json:"id" example:"acct-1"`
	Name string `json:"name" example:"City of Springfield"`
}

// NeighborhoodGroup is a group on the neighborhood network.
type NeighborhoodGroup struct {
	ID   string `json:"id" example:"grp-9"`
	Name string `json:"name" example:"Downtown"`
}

// NeighborhoodChannelStatus is the outcome of a post to one group through one account.
type NeighborhoodChannelStatus struct {
	Account           NeighborhoodAccount `json:"account"`
	Group             *NeighborhoodGroup  `json:"group,omitempty"`
	Status            DeliveryStatus      `json:"status"`
	ProviderMessageID string              `json:"providerMessageId,omitempty" doc:"The post's id."`
	Error             string              `json:"error,omitempty"`
	SentAt            *time.Time          `json:"sentAt,omitempty"`
	UpdatedAt         time.Time           `json:"updatedAt"`
}

// PagedNeighborhoodChannelStatusResponse is a page of neighborhood posts.
type PagedNeighborhoodChannelStatusResponse Page[NeighborhoodChannelStatus]

// Recipient is one recipient of an alert with where they stand.
type Recipient struct {
	RecipientID  int64               `json:"recipientId" doc:"The recipient's number within the alert (1..n)." example:"7"`
	ContactID    *int64              `json:"contactId,omitempty" doc:"The contact; absent for ad-hoc recipients." example:"12"`
	ExternalID   string              `json:"externalId,omitempty"`
	Name         PersonName          `json:"name"`
	Email        string              `json:"email,omitempty"`
	Phone        string              `json:"phone,omitempty"`
	IsMandatory  bool                `json:"isMandatory" doc:"Selected directly (by contact id, directory user id or as an ad-hoc recipient) rather than only through a group, list or area. A recipient carried over from the earlier alert (related.actions.includeOriginalRecipients) keeps its standing there."`
	Status       DeliveryStatus      `json:"status" doc:"Best status over the recipient's channels: Delivered, Sent, Retrying, Pending, Skipped, then Failed."`
	Confirmed    bool                `json:"confirmed"`
	ConfirmedAt  *time.Time          `json:"confirmedAt,omitempty"`
	ResponseTime *time.Time          `json:"responseTime,omitempty" doc:"When the recipient last responded (answer or confirmation)."`
	Responses    []RecipientResponse `json:"responses" doc:"Poll answers."`
}

// RecipientResponse is a recipient's answer to a poll question.
type RecipientResponse struct {
	QuestionID  int       `json:"questionId" example:"1"`
	OptionID    int       `json:"optionId" example:"2"`
	OptionText  string    `json:"optionText" example:"I need help"`
	RespondedAt time.Time `json:"respondedAt"`
	Via         string    `json:"via" enum:"link,voice" doc:"How the answer arrived."`
}

// PagedRecipientResponse is a page of recipients.
type PagedRecipientResponse Page[Recipient]

// SingleRecipientResponse is one recipient with every delivery on every channel.
type SingleRecipientResponse struct {
	AlertID   int64               `json:"alertId" example:"42"`
	Recipient Recipient           `json:"recipient"`
	Channels  []ChannelDeliveries `json:"channels"`
}
