package activities

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/tocsin/tocsin/alert"
	"github.com/tocsin/tocsin/channels"
	"github.com/tocsin/tocsin/channels/etn"
	"github.com/tocsin/tocsin/hooks/events"
	"github.com/tocsin/tocsin/storage"
)

// Error types the alert workflows treat as non-retryable.
const (
	ErrTypeAlertNotFound = "AlertNotFound"
	ErrTypeBadAlert      = "BadAlert"
	// ErrTypeAlertIDReused: the alert's id is another alert's now (the
	// database was restored from a backup taken before the alert was
	// stored, and the id handed out again). The workflow started for the
	// alert ends, and leaves the other alert as it is.
	ErrTypeAlertIDReused = "AlertIDReused"
)

// IsAlertIDReused reports whether err is, or is caused by, an activity's
// error of type ErrTypeAlertIDReused.
func IsAlertIDReused(err error) bool {
	var app *temporal.ApplicationError
	return errors.As(err, &app) && app.Type() == ErrTypeAlertIDReused
}

// alertIDReused turns storage.ErrAlertIDReused, the error of a statement
// that named ref's alert by its tag and found another alert of its id,
// into the error of type ErrTypeAlertIDReused that ends ref's workflow;
// other errors are returned as they are. The error is non-retryable and
// benign: the SDK does not log it as an activity's failure (several
// batches may meet it at once); the workflow logs it once.
func alertIDReused(ref AlertRef, err error) error {
	if !errors.Is(err, storage.ErrAlertIDReused) {
		return err
	}
	return temporal.NewApplicationErrorWithOptions(
		fmt.Sprintf("alert %d of tenant %s is another alert now, not the one of workflow %s: its id was handed out again after a database restore",
			ref.AlertID, ref.Tenant, alert.WorkflowID(ref.Tenant, ref.AlertID, ref.Tag)),
		ErrTypeAlertIDReused,
		temporal.ApplicationErrorOptions{NonRetryable: true, Cause: err, Category: temporal.ApplicationErrorCategoryBenign})
}

// AlertRef names an alert.
type AlertRef struct {
	Tenant  string
	AlertID int64
	// Tag is the alert's tag, in its delivery keys (alert.DeliveryKey); ""
	// for alerts stored before tags came and in the inputs of activities
	// scheduled before.
	Tag string
}

// AlertPlan is what the SendAlert workflow needs to deliver an alert. It is
// computed by an activity from the worker's settings, so a workflow replays
// the same plan.
type AlertPlan struct {
	Recipients   int64
	Channels     []string
	Sequential   bool
	BatchSize    int
	Parallelism  int
	MaxAttempts  int
	Cycles       int
	CycleEvery   time.Duration
	BroadcastEnd time.Time
	// Failed is set when the alert failed before delivery (no recipients).
	Failed bool
	// Cancelled is set when the alert was cancelled before its send time:
	// nothing of it is to be done.
	Cancelled bool
}

// checkAlert ends an activity of ref's alert, before it does anything,
// when the alert's id is another alert's now (ErrTypeAlertIDReused) or the
// alert is gone (ErrTypeAlertNotFound). Activities that read the alert
// anyway check with that read instead (loadAlert, storage.BatchRecipients).
func (a *Activities) checkAlert(ctx context.Context, ref AlertRef) error {
	err := storage.CheckAlert(ctx, a.DB, ref.Tenant, ref.AlertID, ref.Tag)
	if errors.Is(err, storage.ErrNotFound) {
		return temporal.NewNonRetryableApplicationError("alert not found", ErrTypeAlertNotFound, err)
	}
	return alertIDReused(ref, err)
}

// loadAlert reads ref's alert and its settings: only the alert of ref's
// tag, never another given its id after a restore (ErrTypeAlertIDReused).
func loadAlert(ctx context.Context, q sqlx.QueryerContext, ref AlertRef) (*storage.Alert, *alert.Settings, error) {
	al, err := storage.GetTaggedAlert(ctx, q, ref.Tenant, ref.AlertID, ref.Tag)
	if errors.Is(err, storage.ErrAlertIDReused) {
		return nil, nil, alertIDReused(ref, err)
	}
	if errors.Is(err, storage.ErrNotFound) {
		// The API starts the workflow just before it commits the alert:
		// retry a little before giving up.
		if activity.IsActivity(ctx) && activity.GetInfo(ctx).Attempt < 5 {
			return nil, nil, fmt.Errorf("alert %d not visible yet", ref.AlertID)
		}
		return nil, nil, temporal.NewNonRetryableApplicationError("alert not found", ErrTypeAlertNotFound, err)
	}
	if err != nil {
		return nil, nil, err
	}
	var s alert.Settings
	if err := json.Unmarshal(al.Settings, &s); err != nil {
		return nil, nil, temporal.NewNonRetryableApplicationError("alert settings unreadable", ErrTypeBadAlert, err)
	}
	return al, &s, nil
}

// PrepareAlert moves a Scheduled alert to Queued, resolves its recipients
// into alert_recipients with one INSERT ... SELECT and moves it to
// Processing (or to Failed when nobody is reached), with the events of each
// change. It is idempotent: a retry finds the recipients already resolved.
// An alert cancelled before its send time is left as it is (plan.Cancelled).
func (a *Activities) PrepareAlert(ctx context.Context, ref AlertRef) (AlertPlan, error) {
	al, s, err := loadAlert(ctx, a.DB, ref)
	if err != nil {
		return AlertPlan{}, err
	}
	spec, err := storage.NewRecipientSpec(s, al.Channels)
	if err != nil {
		return AlertPlan{}, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeBadAlert, err)
	}

	plan := planOf(a, al, s)
	err = a.DB.InTx(ctx, func(tx *sqlx.Tx) error {
		moved, err := storage.TransitionAlert(ctx, tx, ref.Tenant, ref.AlertID, []string{storage.AlertScheduled}, storage.AlertQueued, "send time reached")
		if err != nil {
			return err
		}
		if !moved {
			// Either a retry (Queued or later) or cancelled: the move from
			// Scheduled is what a cancellation races with.
			status, err := storage.AlertStatus(ctx, tx, ref.Tenant, ref.AlertID)
			if err != nil {
				return err
			}
			if status == storage.AlertCancelled {
				plan.Cancelled = true
				return nil
			}
		}
		if moved {
			if _, err := storage.EmitEvent(ctx, tx, ref.Tenant, storage.EventAlertQueued,
				events.AlertQueued{Alert: events.AlertOf(al, storage.AlertQueued), ScheduledFor: al.ScheduledFor}); err != nil {
				return err
			}
		}
		n, err := storage.ResolveRecipients(ctx, tx, ref.Tenant, ref.AlertID, spec)
		if err != nil {
			return err
		}
		plan.Recipients = n
		if plan.BatchSize, err = storage.SetBatchSize(ctx, tx, ref.Tenant, ref.AlertID, plan.BatchSize); err != nil {
			return err
		}
		if n == 0 && !reachesWithoutRecipients(al.Channels, s) {
			plan.Failed = true
			moved, err := storage.TransitionAlert(ctx, tx, ref.Tenant, ref.AlertID, []string{storage.AlertQueued}, storage.AlertFailed, "no recipients")
			if err != nil || !moved {
				return err
			}
			_, err = storage.EmitEvent(ctx, tx, ref.Tenant, storage.EventAlertFailed, events.AlertFailed{Alert: events.AlertOf(al, storage.AlertFailed), Reason: "no recipients"})
			return err
		}
		_, err = storage.TransitionAlert(ctx, tx, ref.Tenant, ref.AlertID, []string{storage.AlertQueued}, storage.AlertProcessing,
			strconv.FormatInt(n, 10)+" recipients")
		return err
	})
	if err != nil {
		return AlertPlan{}, fmt.Errorf("prepare alert %d: %w", ref.AlertID, err)
	}
	if plan.Cancelled {
		return plan, nil
	}
	if plan.Recipients >= 10000 {
		// Fresh statistics keep the result pages' plans sane for a large alert.
		if _, err := storage.Analyze(ctx, a.DB, "alert_recipients"); err != nil && a.Logger != nil {
			a.Logger.Warn("refreshing the statistics of alert recipients", "err", err)
		}
	}
	return plan, nil
}

// reachesWithoutRecipients tells whether one of chs delivers without
// resolved recipients: a broadcast to the tenant's destinations (EAS, mobile
// broadcast, team chat, social, neighborhood), or ETN calls to the numbers
// inside the alert's areas. Such an alert goes on with no recipients.
func reachesWithoutRecipients(chs []string, s *alert.Settings) bool {
	for _, ch := range chs {
		switch channels.Channel(ch).Addressing() {
		case channels.PerDestination:
			return true
		case channels.PerArea:
			if len(etn.Areas(s)) > 0 {
				return true
			}
		}
	}
	return false
}

func planOf(a *Activities, al *storage.Alert, s *alert.Settings) AlertPlan {
	p := AlertPlan{
		Channels:    append([]string(nil), al.Channels...),
		BatchSize:   a.Config.DeliveryBatchSize,
		Parallelism: a.Config.DeliveryParallelism,
		MaxAttempts: a.Config.DeliveryMaxAttempts,
		Cycles:      1,
		CycleEvery:  5 * time.Minute,
	}
	if p.BatchSize <= 0 {
		p.BatchSize = 1000
	}
	if p.Parallelism <= 0 {
		p.Parallelism = 8
	}
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = 5
	}
	if w := s.Workflow; w != nil {
		if w.Cycles > 1 && w.ConfirmationRequested {
			p.Cycles = w.Cycles
		}
		if w.CycleIntervalMinutes > 0 {
			p.CycleEvery = time.Duration(w.CycleIntervalMinutes) * time.Minute
		}
		if w.BroadcastDurationMinutes > 0 {
			start := al.CreatedAt
			if al.ScheduledFor != nil {
				start = *al.ScheduledFor
			}
			p.BroadcastEnd = start.Add(time.Duration(w.BroadcastDurationMinutes) * time.Minute)
		}
	}
	if pl := s.Pipeline; pl != nil && pl.Order == alert.OrderSequential {
		p.Sequential = true
		if len(pl.Sequence) > 0 {
			var ordered []string
			seen := map[string]bool{}
			for _, c := range pl.Sequence {
				if contains(p.Channels, string(c)) && !seen[string(c)] {
					ordered = append(ordered, string(c))
					seen[string(c)] = true
				}
			}
			for _, c := range p.Channels {
				if !seen[c] {
					ordered = append(ordered, c)
				}
			}
			p.Channels = ordered
		}
	}
	return p
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// CycleInput names a cycle of an alert.
type CycleInput struct {
	AlertRef
	Cycle int
}

// StartCycle records the cycle an alert is delivering (nothing when the
// alert is gone).
func (a *Activities) StartCycle(ctx context.Context, in CycleInput) error {
	err := storage.StartCycle(ctx, a.DB, in.Tenant, in.AlertID, in.Tag, in.Cycle)
	if errors.Is(err, storage.ErrNotFound) {
		return nil
	}
	return alertIDReused(in.AlertRef, err)
}

// totals sums the delivery counts of the alert's channels.
func totals(ctx context.Context, tx *sqlx.Tx, al *storage.Alert) (alert.Totals, error) {
	ts, err := storage.AlertTotals(ctx, tx, al)
	if err != nil {
		return alert.Totals{}, err
	}
	return alert.Sum(ts...), nil
}

// eventCounts are an alert's counts as its events report them.
func eventCounts(al *storage.Alert, t alert.Totals) events.Counts {
	return events.Counts{Recipients: al.RecipientCount, Sent: t.Sent, Delivered: t.Delivered, Failed: t.Failed, Skipped: t.Skipped}
}

// FinishFirstCycle moves the alert from Processing to Sent when at least one
// delivery succeeded, otherwise to Failed, with the event of the change.
func (a *Activities) FinishFirstCycle(ctx context.Context, ref AlertRef) (string, error) {
	al, _, err := loadAlert(ctx, a.DB, ref)
	if err != nil {
		return "", err
	}
	status := al.Status
	err = a.DB.InTx(ctx, func(tx *sqlx.Tx) error {
		t, err := totals(ctx, tx, al)
		if err != nil {
			return err
		}
		to, typ, detail := storage.AlertSent, storage.EventAlertSent, fmt.Sprintf("%d sent, %d failed", t.Succeeded(), t.Failed)
		if t.Succeeded() == 0 {
			to, typ = storage.AlertFailed, storage.EventAlertFailed
			detail = "no delivery succeeded"
		}
		moved, err := storage.TransitionAlert(ctx, tx, ref.Tenant, ref.AlertID, []string{storage.AlertProcessing}, to, detail)
		if err != nil || !moved {
			return err
		}
		status = to
		var ev any = events.AlertSent{Alert: events.AlertOf(al, to), Counts: eventCounts(al, t)}
		if to == storage.AlertFailed {
			ev = events.AlertFailed{Alert: events.AlertOf(al, to), Reason: detail}
		}
		_, err = storage.EmitEvent(ctx, tx, ref.Tenant, typ, ev)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("finish alert %d: %w", ref.AlertID, err)
	}
	return status, nil
}

// CompleteAlert marks the end of the alert's workflow: every cycle ran and
// the broadcast duration passed (endAlert).
func (a *Activities) CompleteAlert(ctx context.Context, ref AlertRef) error {
	al, _, err := loadAlert(ctx, a.DB, ref)
	if err != nil {
		return err
	}
	return a.DB.InTx(ctx, func(tx *sqlx.Tx) error { return endAlert(ctx, tx, ref, al) })
}

// endAlert marks the end of the alert's workflow (completed_at) and, the
// first time, emits alert.completed with its counts. What its batches kept
// of their progress and left (storage.SaveBatchProgress) goes.
func endAlert(ctx context.Context, tx *sqlx.Tx, ref AlertRef, al *storage.Alert) error {
	first, err := storage.MarkAlertCompleted(ctx, tx, ref.Tenant, ref.AlertID)
	if err != nil {
		return err
	}
	// After the mark, which a save of progress waits for or sees.
	if err := storage.DeleteAlertProgress(ctx, tx, ref.Tenant, ref.AlertID); err != nil {
		return err
	}
	if !first {
		return nil
	}
	t, err := totals(ctx, tx, al)
	if err != nil {
		return err
	}
	confirmed, err := storage.CountConfirmed(ctx, tx, ref.Tenant, ref.AlertID)
	if err != nil {
		return err
	}
	status, err := storage.AlertStatus(ctx, tx, ref.Tenant, ref.AlertID)
	if err != nil {
		return err
	}
	_, err = storage.EmitEvent(ctx, tx, ref.Tenant, storage.EventAlertCompleted, events.AlertCompleted{
		Alert: events.AlertOf(al, status), Confirmed: confirmed, Counts: eventCounts(al, t)})
	return err
}

// FailAlertInput says why an alert failed.
type FailAlertInput struct {
	AlertRef
	Reason string
}

// FailAlert ends the alert of a workflow that failed. An alert that has
// not reached Sent or Failed moves to Failed (alert.failed), with its
// end marked; one that has (a later cycle failed) keeps its status and
// has its end marked as CompleteAlert marks it (endAlert), so it shows
// completedAt. Either way what its batches kept of their progress and
// left (storage.SaveBatchProgress) goes.
func (a *Activities) FailAlert(ctx context.Context, in FailAlertInput) error {
	al, err := storage.GetTaggedAlert(ctx, a.DB, in.Tenant, in.AlertID, in.Tag)
	if errors.Is(err, storage.ErrNotFound) {
		return nil
	}
	if err != nil {
		return alertIDReused(in.AlertRef, err)
	}
	return a.DB.InTx(ctx, func(tx *sqlx.Tx) error {
		moved, err := storage.TransitionAlert(ctx, tx, in.Tenant, in.AlertID,
			[]string{storage.AlertScheduled, storage.AlertQueued, storage.AlertProcessing}, storage.AlertFailed, in.Reason)
		if err != nil {
			return err
		}
		if !moved {
			return endAlert(ctx, tx, in.AlertRef, al)
		}
		if _, err := storage.MarkAlertCompleted(ctx, tx, in.Tenant, in.AlertID); err != nil {
			return fmt.Errorf("complete failed alert: %w", err)
		}
		// After the mark, which a save of progress waits for or sees.
		if err := storage.DeleteAlertProgress(ctx, tx, in.Tenant, in.AlertID); err != nil {
			return err
		}
		_, err = storage.EmitEvent(ctx, tx, in.Tenant, storage.EventAlertFailed, events.AlertFailed{Alert: events.AlertOf(al, storage.AlertFailed), Reason: in.Reason})
		return err
	})
}

// loadAttachments reads the alert's attachments from the object store
// into r, by the object keys the alert holds, so a file uploaded since
// under a deleted one's name is not one of them. An emergency message
// goes out without what it cannot carry: a file that no longer exists is
// left out of every message that carries the attachments, which go with
// the others and say so in their deliveries (r.attachmentsLeftOut). A
// store that failed makes those deliveries a temporary failure
// (r.attachmentFailure), in words for the alert's author. The store's own
// words are logged, not recorded.
func (a *Activities) loadAttachments(ctx context.Context, ref AlertRef, r *alertRenderer, raw json.RawMessage) error {
	var refs []storage.AttachmentRef
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &refs); err != nil {
			return temporal.NewNonRetryableApplicationError("alert attachment list unreadable", ErrTypeBadAlert, err)
		}
	}
	var leftOut []string
	for _, f := range refs {
		name := cmp.Or(f.FullName, f.Name)
		var data []byte
		err := fmt.Errorf("no object store: %w", channels.ErrFileUnavailable)
		if a.Objects != nil {
			data, _, err = a.Objects.Read(ctx, f.Key, 0)
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if a.Logger != nil {
				a.Logger.Warn("read attachment", "tenant", ref.Tenant, "alert", ref.AlertID, "attachment", name, "err", err)
			}
			if errors.Is(err, channels.ErrFileMissing) {
				leftOut = append(leftOut, channels.FileProblem("attachment", name, err))
				continue
			}
			r.Attachments = nil
			r.attachmentFailure = &channels.Result{Outcome: channels.Failed, Error: channels.FileProblem("attachment", name, err)}
			return nil
		}
		r.Attachments = append(r.Attachments, channels.Attachment{Name: f.Name, ContentType: f.ContentType, Data: data})
	}
	if len(leftOut) > 0 {
		r.attachmentsLeftOut = strings.Join(leftOut, "; ") + ": sent without it"
	}
	return nil
}
