package activities

import (
	"context"
	"encoding/json"
	"hash/fnv"
	"sync"

	"go.temporal.io/sdk/activity"

	"github.com/tocsin/tocsin/channels"
)

// maxProgressBytes bounds what a batch records of its progress in its
// heartbeat details, far below Temporal's 2 MB limit of a payload (and its
// 512 KB warning): about 3,000 messages with email's provider ids. Messages
// sent once it is reached are not recorded, and are sent again by an
// attempt that follows a dead worker, as before.
const maxProgressBytes = 256 << 10

// BatchProgress is what a delivery batch records in its heartbeat details:
// the messages the provider took, so an attempt that follows one whose
// worker died does not send them again and records their results instead.
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

	mu   sync.Mutex
	refs map[string]messageRef // key → recipient and device of a message being sent
	sent []SentMessage
	size int
}

// startProgress starts the progress of an attempt from what the batch's
// earlier attempts recorded in their heartbeat details, if any (none in a
// local activity or a first attempt), and keeps it in the details this
// attempt records.
func startProgress(ctx context.Context) *batchProgress {
	var prior BatchProgress
	if !activity.IsActivity(ctx) || activity.GetInfo(ctx).IsLocalActivity || !activity.HasHeartbeatDetails(ctx) {
		return newProgress(prior)
	}
	if err := activity.GetHeartbeatDetails(ctx, &prior); err != nil {
		// Details of another shape: what is not recorded is sent, as before.
		return newProgress(BatchProgress{})
	}
	return newProgress(prior)
}

// newProgress starts the progress of an attempt from prior, what the
// batch's earlier attempts recorded.
func newProgress(prior BatchProgress) *batchProgress {
	p := &batchProgress{prior: map[messageRef]SentMessage{}}
	for _, m := range prior.Sent {
		p.prior[messageRef{m.Seq, m.Device, m.To}] = m
		p.add(m)
	}
	return p
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

// add records m while the details stay within maxProgressBytes.
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

// keep records the progress in a heartbeat now, for an attempt about to
// fail: the SDK sends the heartbeat a failed activity holds back, so the
// next attempt does not send again what left since the last one.
func (p *batchProgress) keep(ctx context.Context) {
	if !activity.IsActivity(ctx) || activity.GetInfo(ctx).IsLocalActivity {
		return
	}
	activity.RecordHeartbeat(ctx, p.details())
}
