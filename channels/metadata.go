package channels

// Metadata keys every channel understands.
const (
	// MetaAlertID is the id of the alert a message belongs to.
	MetaAlertID = "alertId"
	// MetaRecipientID is the id of the alert's recipient a message goes to.
	MetaRecipientID = "recipientId"
)
