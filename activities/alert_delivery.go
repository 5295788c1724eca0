package activities

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/tocsin/tocsin/alert"
	"github.com/tocsin/tocsin/channels"
	"github.com/tocsin/tocsin/channels/catalog"
	"github.com/tocsin/tocsin/channels/etn"
	"github.com/tocsin/tocsin/internal/alertmsg"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/shorturls"
)

func (a *Activities) rendererFor(ctx context.Context, ref AlertRef) (*alertRenderer, error) {
	st := a.state()
	if r := st.renderer(ref); r != nil {
		return r, nil
	}
	al, s, err := loadAlert(ctx, a.DB, ref)
	if err != nil {
		return nil, err
	}
	rd, err := alert.NewRenderer(ref.Tenant, ref.AlertID, s, a.Config.PublicURL, alertmsg.LinkSecret(a.Config.SecretsKey, a.Config.JWTSecret))
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeBadAlert, err)
	}
	rd.Tag = alert.TagOf(ref.Tenant, ref.AlertID, al.WorkflowID)
	r := &alertRenderer{Renderer: rd}
	if err := a.loadAttachments(ctx, ref, r, al.Attachments); err != nil {
		return nil, err
	}
	if err := a.resolveFiles(ctx, r); err != nil {
		return nil, err
	}
	if r.attachmentFailure == nil {
		// An object store that failed is asked again by the next attempt.
		st.keepRenderer(ref, r)
	}
	return r, nil
}

// BatchInput names one delivery batch: recipients with seq in (Lo, Hi] of
// an alert, on one channel, in one cycle.
type BatchInput struct {
	AlertRef
	Channel string
	Cycle   int
	Lo, Hi  int64
	// Earlier lists the channels used before this one (Sequential order).
	Earlier []string
	// MaxAttempts is the retry policy's limit: on the last attempt
	// temporary failures are recorded as Failed instead of retried.
	MaxAttempts int
	// PriorAttempts are the batch's attempts made before this activity's
	// first (its first attempt made as a local activity): attempts count
	// on from them.
	PriorAttempts int
}

// BatchOutcome counts what a batch recorded.
type BatchOutcome struct {
	Sent, Failed, Skipped, Retrying int
}

// count adds a delivery of status to o.
func (o *BatchOutcome) count(status string) {
	switch status {
	case storage.DeliverySent, storage.DeliveryDelivered:
		o.Sent++
	case storage.DeliveryFailed:
		o.Failed++
	case storage.DeliverySkipped:
		o.Skipped++
	case storage.DeliveryRetrying:
		o.Retrying++
	}
}

// DeliverBatch delivers one batch: it reads the batch's recipients that have
// no final result yet, renders their messages, sends them through the
// channel's Sender (throttled per tenant and channel) with a stable
// idempotency key per delivery, and writes every outcome with one statement.
// Temporary failures make it return a retryable error after recording, so
// the next attempt sends only those again. As messages leave, it records
// them (BatchProgress) in its heartbeat details, or in PostgreSQL when it
// runs as a local activity, so an attempt that follows a dead worker
// records them from there instead of sending them again.
func (a *Activities) DeliverBatch(ctx context.Context, in BatchInput) (BatchOutcome, error) {
	var out BatchOutcome
	if activity.IsActivity(ctx) && activity.GetInfo(ctx).IsLocalActivity && in.MaxAttempts > 1 {
		release, ok := a.takeLocalShare(in.Tenant)
		if !ok {
			return out, temporal.NewApplicationError("the tenant runs its share of this lane's local deliveries: the batch is delivered as an activity, where tenants take turns", ErrTypeLocalShareTaken)
		}
		defer release()
	}
	key := storage.BatchKey{Tenant: in.Tenant, AlertID: in.AlertID, Tag: in.Tag, Channel: in.Channel, Cycle: in.Cycle, Lo: in.Lo, Hi: in.Hi}
	progress := startProgress(ctx, in)
	stop := heartbeatWith(ctx, progress.details)
	defer stop()
	stopSaving := a.saveProgressEachSecond(ctx, key, progress)
	defer stopSaving()
	began := time.Now()
	attempt := 1
	if activity.IsActivity(ctx) {
		attempt = int(activity.GetInfo(ctx).Attempt)
	}
	attempt += in.PriorAttempts
	lastAttempt := in.MaxAttempts > 0 && attempt >= in.MaxAttempts
	at := alert.Attempt{Last: lastAttempt, Max: in.MaxAttempts}
	d := catalog.For(channels.Channel(in.Channel)).Descriptor
	switch d.Addressing() {
	case channels.PerDestination:
		return a.deliverBroadcast(ctx, in, lastAttempt)
	case channels.PerArea:
		r, err := a.rendererFor(ctx, in.AlertRef)
		if err != nil {
			return out, err
		}
		if len(etn.Areas(r.Settings)) > 0 {
			return a.deliverEtnArea(ctx, in, r, lastAttempt)
		}
	}
	var readDur, sendDur time.Duration
	var recs []storage.BatchRecipient
	err := storage.InBatchTx(ctx, a.DB, func(tx *sqlx.Tx) error {
		var err error
		if recs, err = storage.BatchRecipients(ctx, tx, key, in.Earlier); err != nil {
			return err
		}
		return resumeProgress(ctx, tx, key, progress)
	})
	if errors.Is(err, storage.ErrNotFound) {
		return out, temporal.NewNonRetryableApplicationError("alert not found", ErrTypeAlertNotFound, err)
	}
	if err != nil {
		return out, alertIDReused(in.AlertRef, err)
	}
	readDur = time.Since(began)
	if len(recs) == 0 {
		return out, storage.InBatchTx(ctx, a.DB, func(tx *sqlx.Tx) error {
			if progress.inTable() {
				if err := storage.DeleteBatchProgress(ctx, tx, key); err != nil {
					return err
				}
			}
			return storage.RecountBatch(ctx, tx, key)
		})
	}
	r, err := a.rendererFor(ctx, in.AlertRef)
	if err != nil {
		return out, err
	}
	var extra map[int64][]string
	perDevice := d.Addressing() == channels.PerDevice
	if d.Addresses() == channels.DeviceTokens || d.Addresses() == channels.FaxNumber {
		if extra, err = a.extraAddresses(ctx, in.Tenant, d, recs); err != nil {
			return out, err
		}
	}

	links, err := a.responseLinks(ctx, in, r, recs)
	if err != nil {
		return out, err
	}
	rows := make([]storage.DeliveryRow, 0, len(recs))
	msgs := make([]channels.Message, 0, len(recs))
	msgSeq := make([]int64, 0, len(recs))
	refs := make([]messageRef, 0, len(recs))
	shortened := 0
	for i := range recs {
		rec := &recs[i]
		addr := alert.AddressOf(in.Channel, &rec.RecipientRow)
		var addrs []string
		if extra != nil && rec.PersonID != nil {
			addrs = extra[*rec.PersonID]
			addr = strings.Join(addrs, ",")
		}
		switch {
		case rec.Skip:
			rows = append(rows, storage.DeliveryRow{Seq: rec.Seq, Address: addr, Status: storage.DeliverySkipped, Error: "reached on an earlier channel"})
		case alert.ReachedAs(in.Channel, &rec.RecipientRow) > 0:
			rows = append(rows, storage.DeliveryRow{Seq: rec.Seq, Address: addr, Status: storage.DeliverySkipped,
				Error: fmt.Sprintf("reached as recipient %d", alert.ReachedAs(in.Channel, &rec.RecipientRow))})
		case addr == "":
			rows = append(rows, storage.DeliveryRow{Seq: rec.Seq, Status: storage.DeliveryFailed, Permanent: true, Error: "no " + in.Channel + " address"})
		case r.attachmentFailure != nil && r.Attaches(in.Channel):
			o := alert.StatusOf(*r.attachmentFailure, at)
			rows = append(rows, storage.DeliveryRow{Seq: rec.Seq, Address: addr, Status: o.Status, Permanent: o.Permanent, Error: o.Error})
		default:
			m, written := r.Message(in.Channel, &rec.RecipientRow, links[rec.Seq])
			if m.Text != written {
				shortened++
			}
			r.options(&m)
			m.RecipientID = rec.Seq
			m.Key = alert.DeliveryKey(in.Tenant, in.AlertID, in.Tag, in.Channel, in.Cycle, rec.Seq)
			m.To = addr
			if !perDevice {
				msgs = append(msgs, m)
				msgSeq = append(msgSeq, rec.Seq)
				refs = append(refs, messageRef{seq: rec.Seq, to: addressHash(m.To)})
				continue
			}
			// One notification per device token; the recipient's row
			// aggregates them.
			for j, tok := range addrs {
				d := m
				d.To = tok
				if j > 0 {
					d.Key = m.Key + ":" + strconv.Itoa(j)
				}
				msgs = append(msgs, d)
				msgSeq = append(msgSeq, rec.Seq)
				refs = append(refs, messageRef{seq: rec.Seq, device: j, to: addressHash(tok)})
			}
		}
	}

	var retryErr error
	if len(msgs) > 0 {
		// What an earlier attempt recorded as sent is not sent again.
		done, left := progress.begin(msgs, refs)
		sendStart := time.Now()
		var results []channels.Result
		var err error
		if len(left) > 0 {
			results, err = a.send(channels.WithResults(ctx, progress.report), in, left)
		}
		sendDur = time.Since(sendStart)
		// resultAt is the result of msgs[i]: recorded by an earlier attempt,
		// or of this attempt's send (left[sentAt[i]]).
		sentAt := make([]int, len(msgs))
		for i, j := 0, 0; i < len(msgs); i++ {
			if _, ok := done[i]; !ok {
				sentAt[i] = j
				j++
			}
		}
		resultAt := func(i int, err error) channels.Result {
			if r, ok := done[i]; ok {
				return r
			}
			return alert.ResultAt(results, err, sentAt[i])
		}
		switch {
		case errors.Is(err, channels.ErrNoProvider):
			for i, m := range msgs {
				if r, ok := done[i]; ok {
					o := alert.StatusOf(r, at)
					rows = append(rows, storage.DeliveryRow{Seq: msgSeq[i], Address: m.To, ProviderMessageID: r.ProviderMessageID, Status: o.Status})
					continue
				}
				rows = append(rows, storage.DeliveryRow{Seq: msgSeq[i], Address: m.To, Status: storage.DeliveryFailed, Permanent: true,
					Error: "no provider is configured for the " + in.Channel + " channel"})
			}
		case err != nil && !lastAttempt:
			// What left since the last heartbeat (or save) reaches the
			// next attempt.
			stop()
			stopSaving()
			a.keepProgress(ctx, key, progress)
			if ctx.Err() != nil {
				return out, ctx.Err()
			}
			return out, fmt.Errorf("deliver %s batch (%d, %d]: %w", in.Channel, in.Lo, in.Hi, err)
		case err != nil:
			for i, m := range msgs {
				res := resultAt(i, err)
				o := alert.StatusOf(res, at)
				rows = append(rows, storage.DeliveryRow{Seq: msgSeq[i], Address: m.To, ProviderMessageID: res.ProviderMessageID,
					Status: o.Status, Permanent: o.Permanent, Error: o.Error})
			}
		default:
			for i, m := range msgs {
				res := resultAt(i, nil)
				o := alert.StatusOf(res, at)
				rows = append(rows, storage.DeliveryRow{Seq: msgSeq[i], Address: m.To, ProviderMessageID: res.ProviderMessageID,
					Status: o.Status, Permanent: o.Permanent, Error: o.Error})
			}
			if perDevice {
				rows = aggregateDevices(rows, extra, recs)
			}
		}
	}
	if note := r.attachmentsLeftOut; note != "" && r.Attaches(in.Channel) {
		// Each message that went out, or was tried, without them.
		for i := range rows {
			if rows[i].Address != "" && rows[i].Status != storage.DeliverySkipped {
				rows[i].Error = strings.TrimPrefix(rows[i].Error+"; "+note, "; ")
			}
		}
	}
	temporary := 0
	for _, row := range rows {
		if row.Status == storage.DeliveryRetrying {
			temporary++
		}
	}
	if temporary > 0 {
		retryErr = fmt.Errorf("%d temporary failures in %s batch (%d, %d]", temporary, in.Channel, in.Lo, in.Hi)
	}
	// No save of the progress may follow the delete that records the
	// results.
	stopSaving()
	if err := storage.InBatchTx(ctx, a.DB, func(tx *sqlx.Tx) error {
		if progress.inTable() {
			if err := storage.DeleteBatchProgress(ctx, tx, key); err != nil {
				return err
			}
		}
		if d.Calls {
			// Call status callbacks of this batch wait for its rows (syncCalls).
			if err := storage.LockBatch(ctx, tx, key); err != nil {
				return err
			}
		}
		if err := storage.RecordDeliveries(ctx, tx, key, rows); err != nil {
			return err
		}
		if !d.Calls {
			return nil
		}
		return syncCalls(ctx, tx, in, key, rows)
	}); err != nil {
		// The next attempt sends none of what left again: its last
		// heartbeat (or save) may be a second old.
		stop()
		a.keepProgress(ctx, key, progress)
		return out, err
	}
	if a.Logger != nil {
		a.Logger.Debug("delivery batch", "alert", in.AlertID, "channel", in.Channel, "cycle", in.Cycle, "lo", in.Lo, "hi", in.Hi,
			"messages", len(msgs), "shortened", shortened, "read_ms", readDur.Milliseconds(), "send_ms", sendDur.Milliseconds(),
			"total_ms", time.Since(began).Milliseconds())
	}
	st := a.state()
	for _, row := range rows {
		out.count(row.Status)
	}
	c := st.deliveries
	c.WithLabelValues(in.Channel, "sent").Add(float64(out.Sent))
	c.WithLabelValues(in.Channel, "failed").Add(float64(out.Failed))
	c.WithLabelValues(in.Channel, "skipped").Add(float64(out.Skipped))
	c.WithLabelValues(in.Channel, "retrying").Add(float64(out.Retrying))
	st.textShortened.Add(float64(shortened))
	return out, retryErr
}

// responseLinks gives each recipient of the batch who gets a message its
// personal response link as a short URL, made with one statement per batch.
// The same target keeps its code, so a retried batch sends the same links.
func (a *Activities) responseLinks(ctx context.Context, in BatchInput, r *alertRenderer, recs []storage.BatchRecipient) (map[int64]string, error) {
	links := map[int64]string{}
	if !r.NeedsLink() {
		return links, nil
	}
	var seqs []int64
	var targets []string
	for i := range recs {
		if recs[i].Skip || alert.AddressOf(in.Channel, &recs[i].RecipientRow) == "" || alert.ReachedAs(in.Channel, &recs[i].RecipientRow) > 0 {
			continue
		}
		seqs = append(seqs, recs[i].Seq)
		targets = append(targets, r.ResponseLink(recs[i].Seq))
	}
	for from := 0; from < len(targets); from += shorturls.MaxBatch {
		to := min(from+shorturls.MaxBatch, len(targets))
		codes, err := shorturls.CreateShortURLs(ctx, a.DB, in.Tenant, targets[from:to], nil)
		if err != nil {
			return nil, fmt.Errorf("response links: %w", err)
		}
		for i, c := range codes {
			links[seqs[from+i]] = alertmsg.ShortLink(a.Config.PublicURL, c)
		}
	}
	return links, nil
}

// send throttles and sends messages through the channel's Sender.
func (a *Activities) send(ctx context.Context, in BatchInput, msgs []channels.Message) ([]channels.Result, error) {
	snd, err := a.Senders.For(channels.Channel(in.Channel))
	if err != nil {
		return nil, err
	}
	// Channels with per-tenant provider settings are throttled once, by the
	// rate limit of those settings (channels/ratelimit); the configured
	// DeliveryRates throttle email and text, which have none.
	if perSecond := a.Config.DeliveryRates[in.Channel]; perSecond > 0 && catalog.For(channels.Channel(in.Channel)).WorkerRate {
		l := a.state().limiter(in.Tenant, in.Channel, perSecond)
		for left := len(msgs); left > 0; {
			n := min(left, l.Burst())
			if err := l.WaitN(ctx, n); err != nil {
				return nil, fmt.Errorf("throttle: %w", err)
			}
			left -= n
		}
	}
	return snd.Send(ctx, msgs)
}

// heartbeat records a heartbeat every second until stopped, so a worker
// that dies mid-batch is noticed within the heartbeat timeout. A local
// activity has none to record: the SDK heartbeats its workflow task.
func heartbeat(ctx context.Context) func() {
	return heartbeatWith(ctx, func() any { return nil })
}

// heartbeatWith is heartbeat recording details() in each heartbeat; the
// SDK holds heartbeats back for up to the worker's throttle (2 s) and then
// sends the last details given. The function it returns may be called more
// than once.
func heartbeatWith(ctx context.Context, details func() any) func() {
	if !activity.IsActivity(ctx) || activity.GetInfo(ctx).IsLocalActivity {
		return func() {}
	}
	return eachSecond(ctx, func() { activity.RecordHeartbeat(ctx, details()) })
}

// eachSecond calls f every second until stopped or ctx ends. Once the
// function it returns has returned, no call of f is under way; it may be
// called more than once.
func eachSecond(ctx context.Context, f func()) func() {
	done := make(chan struct{})
	var stopped sync.Once
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				f()
			}
		}
	})
	return func() {
		stopped.Do(func() { close(done) })
		wg.Wait()
	}
}

// ErrTypeLocalShareTaken is the error of a local-activity delivery that
// found its tenant running its share of the lane's local-activity slots
// already: it sent nothing, and the workflow delivers the batch as an
// activity instead (executeOnceLocally).
const ErrTypeLocalShareTaken = "LocalShareTaken"

// takeLocalShare counts a local-activity delivery of tenant in this lane,
// unless the tenant runs half of the lane's local-activity slots (at least
// one) with deliveries already. The worker hands those slots out first
// come first served, whatever the tenant: Temporal's priority and fairness
// order the tasks of a task queue, not the local activities of the workflow
// tasks a worker runs. Without a share, one tenant's flood of small alerts
// (each delivered inside its workflow task) would hold every slot, and every
// other tenant's alert, Emergency ones in the urgent lane included, would
// wait for that whole flood. A delivery refused here runs as an activity on
// the task queue, where tenants take turns. release ends the delivery's
// count.
func (a *Activities) takeLocalShare(tenant string) (release func(), ok bool) {
	if a.LocalSlots <= 0 {
		return func() {}, true
	}
	share := max(a.LocalSlots/2, 1)
	a.localMu.Lock()
	defer a.localMu.Unlock()
	if a.localHeld[tenant] >= share {
		return nil, false
	}
	if a.localHeld == nil {
		a.localHeld = map[string]int{}
	}
	a.localHeld[tenant]++
	return func() {
		a.localMu.Lock()
		defer a.localMu.Unlock()
		if a.localHeld[tenant]--; a.localHeld[tenant] <= 0 {
			delete(a.localHeld, tenant)
		}
	}, true
}
