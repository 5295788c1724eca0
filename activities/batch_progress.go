package activities

import (
	"context"
	"encoding/json"
	"hash/fnv"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"
	"go.temporal.io/sdk/activity"

	"github.com/tocsin/tocsin/channels"
	"github.com/tocsin/tocsin/storage"
)

// maxProgressBytes bounds what a batch records of its progress in its
// heartbeat details or in PostgreSQL, far below Temporal's 2 MB limit of a
// payload (and its 512 KB warning): about 3,000 messages with email's
// provider ids. Messages sent once it is reached are not recorded, and are
// sent again by an attempt that follows a dead worker, as before.
const maxProgressBytes = 256 << 10

// progressSaveTimeout bounds the last save of a local activity's progress,
// made when its attempt fails, even because its context ended.
const progressSaveTimeout = 5 * time.Second

// BatchProgress is what a delivery batch records in its heartbeat details,
// or in PostgreSQL when it runs as a local activity (which has no
// heartbeat details): the messages the provider took, so an attempt that
// follows one whose worker died does not send them again and records
// their results instead.
type BatchProgress struct {
	// Sent are the messages taken, in the order they were.
	Sent []SentMessage `json:"sent"`
}

// SentMessage is one message a provider took: the recipient's number in
// the alert, the device's index for a message per device token, a hash of
// the address it went to (addressHash), and what the provider answered.
type SentMessage struct {
	Seq               int64  `json:"s"`
	Device            int    `json:"d,omitempty"`
	To                uint64 `json:"t,omitempty"`
	ProviderMessageID string `json:"p,omitempty"`
	Delivered         bool   `json:"v,omitempty"`
}

// addressHash is what a SentMessage keeps of the address its message went
// to: a later attempt that finds the recipient's device or fax number
// changed (a token removed, so that another takes its index) sends to the
// new one rather than take it as sent.
func addressHash(to string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(to))
	return h.Sum64()
}

// progressSize is what m takes in the encoded details, with its comma.
func progressSize(m SentMessage) int {
	b, _ := json.Marshal(m) // never fails: numbers, a string and a bool
	return len(b) + 1
}

// result is the result m records.
func (m SentMessage) result(key string) channels.Result {
	r := channels.Result{Key: key, Outcome: channels.Sent, ProviderMessageID: m.ProviderMessageID}
	if m.Delivered {
		r.Outcome = channels.Delivered
	}
	return r
}

// messageRef names a message of a batch by its recipient, device and
// address (addressHash).
type messageRef struct {
	seq    int64
	device int
	to     uint64
}

// batchProgress keeps track of the messages of a batch that have left,
// starting from what its earlier attempts recorded.
type batchProgress struct {
	prior map[messageRef]SentMessage
	// local: this attempt is a local activity, which keeps its progress
	// in PostgreSQL (alert_batch_progress) rather than in heartbeat
	// details. fromTable: an earlier attempt may have kept its progress
	// there (this one is a local activity, or an activity that retries a
	// local one).
	local, fromTable bool

	mu   sync.Mutex
	refs map[string]messageRef // key → recipient and device of a message being sent
	sent []SentMessage
	size int
	// saved are the messages of sent that the table has; stored says the
	// table has a row of the batch, which recording its results deletes.
	saved  int
	stored bool
}

// startProgress starts the progress of an attempt from what the batch's
// earlier attempts recorded in their heartbeat details, if any (none in a
// local activity or a first attempt), and keeps it in the details this
// attempt records. An attempt made as a local activity, and one that
// retries such an attempt, also take what earlier attempts kept in
// PostgreSQL (resumeProgress).
func startProgress(ctx context.Context, in BatchInput) *batchProgress {
	if !activity.IsActivity(ctx) {
		return newProgress(BatchProgress{})
	}
	if activity.GetInfo(ctx).IsLocalActivity {
		p := newProgress(BatchProgress{})
		p.local, p.fromTable = true, true
		return p
	}
	var prior BatchProgress
	if activity.HasHeartbeatDetails(ctx) {
		if err := activity.GetHeartbeatDetails(ctx, &prior); err != nil {
			// Details of another shape: what is not recorded is sent, as before.
			prior = BatchProgress{}
		}
	}
	p := newProgress(prior)
	// The batch's first attempt was a local activity (SendAlert's
	// onceLocally), which kept its progress in the table.
	p.fromTable = in.PriorAttempts > 0
	return p
}

// newProgress starts the progress of an attempt from prior, what the
// batch's earlier attempts recorded.
func newProgress(prior BatchProgress) *batchProgress {
	p := &batchProgress{prior: map[messageRef]SentMessage{}}
	p.take(prior)
	return p
}

// take adds to the progress what earlier attempts recorded in prior,
// except messages it has already.
func (p *batchProgress) take(prior BatchProgress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.takeLocked(prior)
}

// takeLocked is take with p.mu held.
func (p *batchProgress) takeLocked(prior BatchProgress) {
	for _, m := range prior.Sent {
		ref := messageRef{m.Seq, m.Device, m.To}
		if _, ok := p.prior[ref]; ok {
			continue
		}
		p.prior[ref] = m
		p.add(m)
	}
}

// resume adds to the progress what earlier attempts kept in the table
// (raw, as storage.BatchProgress reads it; nil when nothing).
func (p *batchProgress) resume(raw []byte) {
	if raw == nil {
		return
	}
	var prior BatchProgress
	if err := json.Unmarshal(raw, &prior); err != nil {
		// A row of another shape: what is not recorded is sent, as before.
		prior = BatchProgress{}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.takeLocked(prior)
	p.stored = true
	if p.local {
		p.saved = len(p.sent)
	}
}

// begin gives, of msgs (refs names each one's recipient and device), the
// results of those an earlier attempt recorded as sent, by index in msgs,
// and the messages left to send, whose results report records from then on.
func (p *batchProgress) begin(msgs []channels.Message, refs []messageRef) (map[int]channels.Result, []channels.Message) {
	done := map[int]channels.Result{}
	left := make([]channels.Message, 0, len(msgs))
	keys := make(map[string]messageRef, len(msgs))
	for i, m := range msgs {
		if s, ok := p.prior[refs[i]]; ok {
			done[i] = s.result(m.Key)
			continue
		}
		keys[m.Key] = refs[i]
		left = append(left, m)
	}
	p.mu.Lock()
	p.refs = keys
	p.mu.Unlock()
	return done, left
}

// add records m while the details stay within maxProgressBytes; p.mu is
// held.
func (p *batchProgress) add(m SentMessage) {
	n := progressSize(m)
	if p.size+n > maxProgressBytes {
		return
	}
	p.size += n
	p.sent = append(p.sent, m)
}

// report records r when its message has left; Senders call it through
// channels.Report.
func (p *batchProgress) report(r channels.Result) {
	if r.Outcome != channels.Sent && r.Outcome != channels.Delivered {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	ref, ok := p.refs[r.Key]
	if !ok {
		return
	}
	delete(p.refs, r.Key)
	p.add(SentMessage{Seq: ref.seq, Device: ref.device, To: ref.to, ProviderMessageID: r.ProviderMessageID, Delivered: r.Outcome == channels.Delivered})
}

// details is the progress to record in the next heartbeat, nil while
// nothing is known to have left.
func (p *batchProgress) details() any {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.sent) == 0 {
		return nil
	}
	// The capped slice is never appended to in place.
	return BatchProgress{Sent: p.sent[:len(p.sent):len(p.sent)]}
}

// unsaved is the progress to save in the table, encoded, and how many
// messages it lists; nil when the table has them all already.
func (p *batchProgress) unsaved() ([]byte, int) {
	p.mu.Lock()
	n := len(p.sent)
	if n == p.saved {
		p.mu.Unlock()
		return nil, 0
	}
	// The capped slice is never appended to in place.
	sent := p.sent[:n:n]
	p.mu.Unlock()
	b, _ := json.Marshal(BatchProgress{Sent: sent}) // never fails: numbers, strings and bools
	return b, n
}

// markSaved records that the table has the first n messages of the
// progress.
func (p *batchProgress) markSaved(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.saved = max(p.saved, n)
	p.stored = true
}

// inTable says whether the table may have a row of the batch, which the
// transaction that records its results deletes.
func (p *batchProgress) inTable() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stored
}

// resumeProgress adds to p what the batch's earlier attempts kept in the
// table, when one may have (p.fromTable); it reads in tx, the transaction
// that reads the batch's recipients.
func resumeProgress(ctx context.Context, tx sqlx.QueryerContext, k storage.BatchKey, p *batchProgress) error {
	if !p.fromTable {
		return nil
	}
	raw, err := storage.BatchProgress(ctx, tx, k)
	if err != nil {
		return err
	}
	p.resume(raw)
	return nil
}

// saveProgress saves in the table what has left since the last save of a
// batch run as a local activity. A save that fails is logged: what it
// would have recorded is sent again after a dead worker, as before.
func (a *Activities) saveProgress(ctx context.Context, k storage.BatchKey, p *batchProgress) {
	if !p.local {
		return
	}
	b, n := p.unsaved()
	if b == nil {
		return
	}
	if err := storage.SaveBatchProgress(ctx, a.DB, k, b); err != nil {
		if a.Logger != nil && ctx.Err() == nil {
			a.Logger.Warn("save batch progress", "tenant", k.Tenant, "alert", k.AlertID, "channel", k.Channel,
				"cycle", k.Cycle, "lo", k.Lo, "hi", k.Hi, "err", err)
		}
		return
	}
	p.markSaved(n)
}

// saveProgressEachSecond saves the progress of a batch run as a local
// activity each second while messages leave, until stopped; no save is
// under way once the function it returns has returned (it may be called
// more than once). It does nothing for an activity, whose heartbeats
// carry the progress.
func (a *Activities) saveProgressEachSecond(ctx context.Context, k storage.BatchKey, p *batchProgress) func() {
	if !p.local {
		return func() {}
	}
	return eachSecond(ctx, func() { a.saveProgress(ctx, k, p) })
}

// keepProgress records the progress now, for an attempt about to fail: in a
// heartbeat, which the SDK sends with the failure of an activity, or in
// the table for a local activity, so the next attempt does not send again
// what left since the last one.
func (a *Activities) keepProgress(ctx context.Context, k storage.BatchKey, p *batchProgress) {
	if p.local {
		// Saved even when the attempt ends because its context did.
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), progressSaveTimeout)
		defer cancel()
		a.saveProgress(sctx, k, p)
		return
	}
	if !activity.IsActivity(ctx) {
		return
	}
	activity.RecordHeartbeat(ctx, p.details())
}

// SweepBatchProgress deletes, of every tenant, up to batch rows of
// progress that delivery batches run as local activities kept and that no
// batch will read (storage.SweepBatchProgress), and returns how many.
func (a *Activities) SweepBatchProgress(ctx context.Context, batch int) (int64, error) {
	return storage.SweepBatchProgress(ctx, a.DB, batch)
}
