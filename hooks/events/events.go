// Package events defines the data of every event type tocsin emits. The code
// that emits an event builds one of these types, and the event catalogue
// (getEventTypes, the OpenAPI document, the README) shows an example built
// from the same type, so a delivered payload and its documented example
// cannot differ.
package events

import (
	"time"

	"github.com/tocsin/tocsin/storage"
)

// Alert is what every alert event says about its alert.
type Alert struct {
	AlertID  int64    `json:"alertId" doc:"The alert."`
	Status   string   `json:"status" doc:"The alert's status after the event (AlertStatus)."`
	Subject  string   `json:"subject" doc:"The alert's subject."`
	Type     string   `json:"type" doc:"The alert's type (AlertType), as in the alert's settings."`
	Priority string   `json:"priority" doc:"The alert's priority."`
	Channels []string `json:"channels" doc:"The channels the alert is sent on."`
}

// AlertOf is the Alert part of an event about al, whose status is now status.
func AlertOf(al *storage.Alert, status string) Alert {
	ch := []string(al.Channels)
	if ch == nil {
		ch = []string{}
	}
	return Alert{AlertID: al.ID, Status: status, Subject: al.Subject, Type: al.Type, Priority: al.Priority, Channels: ch}
}

// AlertCreated is the data of alert.created.
type AlertCreated struct {
	Alert
	CreatedBy string `json:"createdBy" doc:"Who created the alert (the token's subject)."`
	// ScheduledFor is nil for an alert sent at once.
	ScheduledFor *time.Time `json:"scheduledFor" doc:"When a scheduled alert will be sent; null for an alert sent at once."`
}

// AlertQueued is the data of alert.queued.
type AlertQueued struct {
	Alert
	// ScheduledFor is nil for an alert sent at once.
	ScheduledFor *time.Time `json:"scheduledFor" doc:"The send time of a scheduled alert whose time came; null for an alert sent at once."`
}

// Counts are the delivery counts of an alert.
type Counts struct {
	Recipients int64 `json:"recipients" doc:"Resolved recipients."`
	Sent       int64 `json:"sent" doc:"Deliveries handed to their providers and not yet confirmed delivered."`
	Delivered  int64 `json:"delivered" doc:"Deliveries the providers confirmed."`
	Failed     int64 `json:"failed" doc:"Deliveries that failed."`
	Skipped    int64 `json:"skipped" doc:"Deliveries skipped."`
}

// AlertSent is the data of alert.sent.
type AlertSent struct {
	Alert
	Counts
}

// AlertCompleted is the data of alert.completed.
type AlertCompleted struct {
	Alert
	Counts
	Confirmed int64 `json:"confirmed" doc:"Recipients who confirmed or answered."`
}

// AlertFailed is the data of alert.failed.
type AlertFailed struct {
	Alert
	Reason string `json:"reason" doc:"Why the alert failed: \"no recipients\", \"no delivery succeeded\", or, when its workflow failed, a sentence that says so (the error itself goes to the worker's log)."`
}

// AlertCancelled is the data of alert.cancelled.
type AlertCancelled struct {
	Alert
	CancelledBy string `json:"cancelledBy" doc:"Who cancelled the alert (the token's subject)."`
	Reason      string `json:"reason" doc:"The reason given with the cancellation; empty when none was."`
}

// RecipientResponded is the data of alert.recipient.responded.
type RecipientResponded struct {
	AlertID     int64 `json:"alertId" doc:"The alert."`
	RecipientID int64 `json:"recipientId" doc:"The recipient within the alert."`
	// ContactID is nil for an ad-hoc recipient.
	ContactID *int64 `json:"contactId" doc:"The recipient's contact; null for an ad-hoc recipient."`
	Confirmed bool   `json:"confirmed" doc:"The recipient confirmed receipt (always true: every response confirms)."`
	Via       string `json:"via" doc:"How the response came: link (the recipient's response page) or the channel of the call (voice, etn)."`
	// QuestionID, OptionID and OptionText are nil for a confirmation
	// without an answer.
	QuestionID  *int64    `json:"questionId" doc:"The poll question answered; null for a confirmation only."`
	OptionID    *int64    `json:"optionId" doc:"The option chosen; null for a confirmation only."`
	OptionText  *string   `json:"optionText" doc:"The text of the option chosen; null for a confirmation only."`
	RespondedAt time.Time `json:"respondedAt" doc:"When the response came."`
}

// Verification is what both verification events say.
type Verification struct {
	UserID      string `json:"userId" doc:"The directory user."`
	DirectoryID string `json:"directoryId" doc:"The user's directory."`
	TargetType  string `json:"targetType" doc:"Email or Phone (ContactTargetType)."`
	Address     string `json:"address" doc:"The email address or E.164 phone number."`
	Status      string `json:"status" doc:"The verification status after the event (VerificationStatus)."`
}

// VerificationCompleted is the data of verification.completed.
type VerificationCompleted struct {
	Verification
}

// VerificationFailed is the data of verification.failed.
type VerificationFailed struct {
	Verification
	Reason string `json:"reason" doc:"wrong-code-attempts, expired or undeliverable."`
}

// FileUploaded is the data of file.uploaded.
type FileUploaded struct {
	FileName    string   `json:"fileName" doc:"The file's full name."`
	Kind        string   `json:"kind" doc:"image or audio."`
	ContentType string   `json:"contentType" doc:"The content type of the original."`
	SizeBytes   int64    `json:"sizeBytes" doc:"The size of the original."`
	SHA256      string   `json:"sha256" doc:"SHA-256 of the original, in hex."`
	Assets      []string `json:"assets" doc:"The stored versions."`
}

// FileDeleted is the data of file.deleted.
type FileDeleted struct {
	FileName string `json:"fileName" doc:"The file's full name."`
	Kind     string `json:"kind" doc:"image or audio."`
}

// SubscriptionTest is the data of subscription.test.
type SubscriptionTest struct {
	SubscriptionID int64  `json:"subscriptionId" doc:"The subscription the test was sent to."`
	Message        string `json:"message" doc:"A fixed text."`
}

// TestMessage is the message of every subscription.test event.
const TestMessage = "This is a test event from tocsin."

// Info describes one event type.
type Info struct {
	Name        string
	Description string
	// Example is an example of the event's data, of the type the emitters
	// pass for it.
	Example any
}

// Catalogue lists every event type tocsin emits, in name order.
func Catalogue() []Info {
	at := time.Date(2026, 3, 1, 12, 5, 0, 0, time.UTC)
	sched := time.Date(2026, 3, 1, 14, 0, 0, 0, time.UTC)
	alert := func(status string) Alert {
		return Alert{AlertID: 4711, Status: status, Subject: "Water main break on Elm St", Type: "Default", Priority: "Emergency",
			Channels: []string{"email", "text", "voice"}}
	}
	counts := Counts{Recipients: 1250, Sent: 8, Delivered: 1240, Failed: 2}
	contact, question, option, optionText := int64(88), int64(1), int64(2), "I am safe"
	verification := Verification{UserID: "123", DirectoryID: "staff", TargetType: "Email", Address: "ada@example.com", Status: "Verified"}
	failed := verification
	failed.TargetType, failed.Address, failed.Status = "Phone", "+15551234567", "Failed"
	return []Info{
		{storage.EventAlertCancelled, "A scheduled alert was cancelled before its send time (cancelAlert). Nothing of it is sent; no other event of the alert follows.",
			AlertCancelled{Alert: alert("Cancelled"), CancelledBy: "dispatcher-7", Reason: "sent to the wrong campus"}},
		{storage.EventAlertCompleted, "An alert reached its end: every cycle ran and the broadcast duration passed, or its workflow stopped on an error after the alert was Sent or Failed. Status is Sent or Failed.",
			AlertCompleted{Alert: alert("Sent"), Counts: counts, Confirmed: 310}},
		{storage.EventAlertCreated, "An alert was created (by a send, a bulk send or an attachment upload). Status is Queued, or Scheduled with scheduledFor.",
			AlertCreated{Alert: alert("Queued"), CreatedBy: "dispatcher-7"}},
		{storage.EventAlertFailed, "An alert failed as a whole: no recipients, no delivery succeeded, or its workflow failed.",
			AlertFailed{Alert: alert("Failed"), Reason: "no recipients"}},
		{storage.EventAlertQueued, "An alert was queued for delivery: at once when it is sent now, or when a scheduled alert's time came. " +
			"Its recipients are resolved after this event; alert.sent and alert.completed count them.",
			AlertQueued{Alert: alert("Queued"), ScheduledFor: &sched}},
		{storage.EventRecipientResponded, "A recipient confirmed an alert or answered its poll (through the response link or a call).",
			RecipientResponded{AlertID: 4711, RecipientID: 17, ContactID: &contact, Confirmed: true, Via: "link",
				QuestionID: &question, OptionID: &option, OptionText: &optionText, RespondedAt: at}},
		{storage.EventAlertSent, "Every delivery of an alert was handed to its providers (status Sent).",
			AlertSent{Alert: alert("Sent"), Counts: Counts{Recipients: 1250, Sent: 1248, Failed: 2}}},
		{storage.EventFileDeleted, "A file and all its stored versions were deleted.",
			FileDeleted{FileName: "sirens/tornado.wav", Kind: "audio"}},
		{storage.EventFileUploaded, "A file (image or audio) was stored, with its encoded versions.",
			FileUploaded{FileName: "sirens/tornado.wav", Kind: "audio", ContentType: "audio/wav", SizeBytes: 882044,
				SHA256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", Assets: []string{"original", "voice"}}},
		{storage.EventSubscriptionTest, "A test event, sent only to the subscription named in a test request (getSubscriptionTest).",
			SubscriptionTest{SubscriptionID: 12, Message: TestMessage}},
		{storage.EventVerificationDone, "An email address or phone number of a directory user was verified with its code.",
			VerificationCompleted{Verification: verification}},
		{storage.EventVerificationFailed, "A verification code expired, its attempts were used up, or it could not be delivered.",
			VerificationFailed{Verification: failed, Reason: "expired"}},
	}
}
