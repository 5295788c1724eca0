package model

import "github.com/danielgtaylor/huma/v2"

// AlertType is the kind of alert: Default (a message), Poll (recipients
// answer questions through a personal link) or Conference (the message
// carries a ConferenceInvitation).
type AlertType string

// The alert types.
const (
	AlertTypeDefault    AlertType = "Default"
	AlertTypePoll       AlertType = "Poll"
	AlertTypeConference AlertType = "Conference"
)

// Schema implements huma.SchemaProvider.
func (AlertType) Schema(r huma.Registry) *huma.Schema {
	return EnumSchema[AlertType](r,
		"Default: a message. Poll: recipients answer the survey's questions through a personal link. Conference: the message invites recipients to a conference call.",
		AlertTypeDefault, AlertTypePoll, AlertTypeConference)
}

// AlertStatus is where an alert stands in its lifecycle.
type AlertStatus string

// The alert lifecycle states.
const (
	AlertScheduled  AlertStatus = "Scheduled"
	AlertQueued     AlertStatus = "Queued"
	AlertProcessing AlertStatus = "Processing"
	AlertSent       AlertStatus = "Sent"
	AlertFailed     AlertStatus = "Failed"
	AlertCancelled  AlertStatus = "Cancelled"
)

// Schema implements huma.SchemaProvider.
func (AlertStatus) Schema(r huma.Registry) *huma.Schema {
	return EnumSchema[AlertStatus](r,
		"The alert's lifecycle. Scheduled: accepted, waiting for its send time. Queued: accepted, its workflow is about to resolve recipients. "+
			"Processing: recipients resolved, deliveries in progress. Sent: every recipient has a final result on every channel of the first cycle and at least one delivery succeeded. "+
			"Failed: nothing could be delivered (no recipients and no broadcast or ETN area to reach, every delivery failed, or the workflow failed). "+
			"Cancelled: a scheduled alert cancelled (cancelAlert) before its send time; nothing of it was sent. "+
			"Transitions: Scheduled -> Queued -> Processing -> Sent | Failed; Queued -> Failed when recipients cannot be resolved; Scheduled -> Cancelled. "+
			"Later cycles (resends to recipients who have not confirmed) and receipts do not change Sent or Failed; completedAt marks the end of the alert's workflow.",
		AlertScheduled, AlertQueued, AlertProcessing, AlertSent, AlertFailed, AlertCancelled)
}

// AlertSentStatus is the completion of a sent alert, as the alertCompletion
// filter of the sent-alerts list uses it.
type AlertSentStatus string

// The completion states.
const (
	SentStatusProcessing AlertSentStatus = "Processing"
	SentStatusSent       AlertSentStatus = "Sent"
	SentStatusFailed     AlertSentStatus = "Failed"
	SentStatusCancelled  AlertSentStatus = "Cancelled"
)

// Schema implements huma.SchemaProvider.
func (AlertSentStatus) Schema(r huma.Registry) *huma.Schema {
	return EnumSchema[AlertSentStatus](r,
		"Completion of an alert: Processing (Scheduled, Queued or Processing), Sent, Failed, or Cancelled.",
		SentStatusProcessing, SentStatusSent, SentStatusFailed, SentStatusCancelled)
}

// SentStatusOf maps a lifecycle status to its completion.
func SentStatusOf(s AlertStatus) AlertSentStatus {
	switch s {
	case AlertSent:
		return SentStatusSent
	case AlertFailed:
		return SentStatusFailed
	case AlertCancelled:
		return SentStatusCancelled
	default:
		return SentStatusProcessing
	}
}

// PriorityType is the priority of an alert.
type PriorityType string

// The priorities.
const (
	PriorityEmergency    PriorityType = "Emergency"
	PriorityNonEmergency PriorityType = "NonEmergency"
)

// Schema implements huma.SchemaProvider.
func (PriorityType) Schema(r huma.Registry) *huma.Schema {
	return EnumSchema[PriorityType](r,
		"Emergency alerts may override quiet settings (loud tone on devices); NonEmergency alerts do not.",
		PriorityEmergency, PriorityNonEmergency)
}

// ScheduleType says when an alert is sent.
type ScheduleType string

// The schedule types.
const (
	ScheduleNow   ScheduleType = "Now"
	ScheduleLater ScheduleType = "Later"
)

// Schema implements huma.SchemaProvider.
func (ScheduleType) Schema(r huma.Registry) *huma.Schema {
	return EnumSchema[ScheduleType](r, "Now: send when accepted. Later: send at ScheduleSettings.sendAt (a durable timer waits for it).", ScheduleNow, ScheduleLater)
}

// PriorityOrder says how the channels of an alert are used.
type PriorityOrder string

// The channel orders.
const (
	OrderSimultaneous PriorityOrder = "Simultaneous"
	OrderSequential   PriorityOrder = "Sequential"
)

// Schema implements huma.SchemaProvider.
func (PriorityOrder) Schema(r huma.Registry) *huma.Schema {
	return EnumSchema[PriorityOrder](r,
		"Simultaneous: every channel is delivered at once. Sequential: channels are used one after another in PipelineSettings.sequence order, and a recipient reached on an earlier channel is Skipped on the later ones.",
		OrderSimultaneous, OrderSequential)
}

// AlertSettingsVariableSource says where a custom message variable takes its value.
type AlertSettingsVariableSource string

// The variable sources.
const (
	VariableStatic      AlertSettingsVariableSource = "Static"
	VariableCustomField AlertSettingsVariableSource = "CustomField"
)

// Schema implements huma.SchemaProvider.
func (AlertSettingsVariableSource) Schema(r huma.Registry) *huma.Schema {
	return EnumSchema[AlertSettingsVariableSource](r,
		"Static: the variable's value is the same for every recipient. CustomField: the value is the recipient's custom field named by field (value is the fallback when the recipient has none).",
		VariableStatic, VariableCustomField)
}

// DeliveryChannel names a delivery channel.
type DeliveryChannel string

// Schema implements huma.SchemaProvider.
func (DeliveryChannel) Schema(r huma.Registry) *huma.Schema {
	return EnumSchema[DeliveryChannel](r, "A delivery channel.",
		"email", "text", "voice", "etn", "push", "myAlertsApp", "fax", "eas", "mobileBroadcast", "teamChat", "socialPostA", "socialPostB", "neighborhood")
}

// DeliveryStatus is the state of one delivery to one recipient on one channel in one cycle.
type DeliveryStatus string

// The delivery states. Sent, Delivered, Failed and Skipped are final.
const (
	DeliveryPending   DeliveryStatus = "Pending"
	DeliveryRetrying  DeliveryStatus = "Retrying"
	DeliverySent      DeliveryStatus = "Sent"
	DeliveryDelivered DeliveryStatus = "Delivered"
	DeliveryFailed    DeliveryStatus = "Failed"
	DeliverySkipped   DeliveryStatus = "Skipped"
)

// Schema implements huma.SchemaProvider.
func (DeliveryStatus) Schema(r huma.Registry) *huma.Schema {
	return EnumSchema[DeliveryStatus](r,
		"Pending: not attempted yet. Retrying: a temporary provider error, another attempt follows. Sent: the provider accepted it. "+
			"Delivered: the provider's receipt confirmed delivery. Failed: permanently refused, no address on the channel, or attempts used up. "+
			"Skipped: not attempted, because the recipient was reached on an earlier channel (Sequential order; error \"reached on an earlier channel\"), or because an earlier recipient of the alert is sent to this address on this channel (an ad-hoc entry that shares an address with a person or an earlier entry; error \"reached as recipient N\"). Sent, Delivered, Failed and Skipped are final; a receipt may still turn Sent into Delivered or Failed.",
		DeliveryPending, DeliveryRetrying, DeliverySent, DeliveryDelivered, DeliveryFailed, DeliverySkipped)
}
