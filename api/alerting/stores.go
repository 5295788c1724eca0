package alerting

import (
	"context"
	"encoding/json"
	"time"

	"github.com/tocsin/tocsin/channels"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/files"
	"github.com/tocsin/tocsin/storage/results"
)

// resultStore is what the alerting operations read and record about alerts
// besides the alert rows themselves.
type resultStore interface {
	FindAlerts(ctx context.Context, f results.AlertFilter, order string, limit, offset int) ([]storage.Alert, storage.Total, error)
	Defaults(ctx context.Context, tenant string) (json.RawMessage, *time.Time, error)
	SaveDefaults(ctx context.Context, tenant string, defaults json.RawMessage) error
	StatusHistory(ctx context.Context, tenant string, alertID int64) ([]results.StatusChange, error)

	Recipients(ctx context.Context, f results.RecipientFilter, order string, limit, offset int) ([]results.Recipient, storage.Total, error)
	Recipient(ctx context.Context, tenant string, alertID, seq int64) (results.Recipient, error)
	FirstRecipient(ctx context.Context, tenant string, alertID int64) (results.Recipient, error)
	RecipientsBySeq(ctx context.Context, tenant string, alertID int64, seqs []int64) ([]results.Recipient, error)
	RecipientCounts(ctx context.Context, tenant string, alertID int64, chs []channels.Descriptor) (storage.RecipientCounts, error)
	HasRecipient(ctx context.Context, tenant string, alertID, seq int64) (bool, error)

	ResponseCounts(ctx context.Context, tenant string, alertID int64) (confirmed, responded int64, err error)
	OptionCounts(ctx context.Context, tenant string, alertID int64) ([]results.OptionCount, error)
	Answers(ctx context.Context, tenant string, alertID int64, seqs []int64) ([]results.Answer, error)
	RecipientAnswers(ctx context.Context, tenant string, alertID, seq int64) ([]results.Answer, bool, error)
	Respond(ctx context.Context, r results.Response) ([]results.Answer, bool, error)

	LatestStatuses(ctx context.Context, tenant string, alertID int64, seqs []int64) ([]results.SeqStatus, error)
	RecipientDeliveries(ctx context.Context, tenant string, alertID, seq int64) ([]results.Delivery, error)
	ChannelDeliveries(ctx context.Context, tenant string, alertID int64, channel string, limit, offset int) ([]results.Delivery, storage.Total, error)
	SharedDeliveries(ctx context.Context, tenant string, alertID int64, keyHead string, broadcast []string, etnArea bool, personID *int64) ([]results.Delivery, error)
	EtnTargets(ctx context.Context, tenant string, alertID int64, limit, offset int) ([]results.EtnTarget, error)
	ApplyReceipt(ctx context.Context, d results.DeliveryRef, r results.Receipt) (bool, error)
}

var _ resultStore = (*results.Store)(nil)

// attachmentStore finds the stored files an alert attaches, and holds the
// claim on the attachment uploaded with an alert while it is stored.
type attachmentStore interface {
	Original(ctx context.Context, tenant, fullName string) (storage.AttachmentRef, error)
	Claim(ctx context.Context, c files.UploadClaim, life time.Duration) error
	Release(ctx context.Context, tenant, prefix string) error
}

var _ attachmentStore = (*files.Store)(nil)
