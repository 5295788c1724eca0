package model

import "github.com/danielgtaylor/huma/v2"

// CapMsgType is the kind of a CAP message that follows an alert's first one.
type CapMsgType string

// Schema implements huma.SchemaProvider.
func (CapMsgType) Schema(r huma.Registry) *huma.Schema {
	return EnumSchema[CapMsgType](r,
		"Update: replaces the earlier messages' information. Cancel: withdraws them.",
		"Update", "Cancel")
}

// CapUpdateRequest updates or cancels the CAP messages (EAS, mobile
// broadcast) an alert sent.
type CapUpdateRequest struct {
	MsgType     CapMsgType `json:"msgType"`
	Headline    string     `json:"headline,omitempty" maxLength:"160" doc:"New headline (Update); the alert's subject when empty." example:"Evacuation extended to zone B"`
	Description string     `json:"description,omitempty" maxLength:"5000" doc:"New description (Update); the alert's body when empty."`
	Instruction string     `json:"instruction,omitempty" maxLength:"2000" doc:"What people should do now." example:"Stay indoors."`
	Note        string     `json:"note,omitempty" maxLength:"1000" doc:"Why the alert is updated or cancelled (CAP note)." example:"Issued in error."`
}

// CapUpdateResponse says which workflow sends the update.
type CapUpdateResponse struct {
	AlertID    int64      `json:"alertId" example:"42"`
	MsgType    CapMsgType `json:"msgType"`
	Sequence   int        `json:"sequence" doc:"The update's number among the alert's updates and cancels (1, 2, ...)." example:"1"`
	WorkflowID string     `json:"workflowId" doc:"The workflow delivering it." example:"alert-1001-42-k3x7q2ab-cap-1"`
	Channels   []string   `json:"channels" doc:"The CAP channels (eas, mobileBroadcast) whose delivered messages it references." example:"[\"eas\"]"`
}
