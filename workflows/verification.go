package workflows

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/tocsin/tocsin/activities"
	dirstore "github.com/tocsin/tocsin/storage/directory"
)

// Signals of the Verification workflow.
const (
	// SignalVerificationResend carries a VerificationResend: send a new code.
	SignalVerificationResend = "resend"
	// SignalVerificationSettled carries a VerificationSettled: the code was
	// verified or killed by wrong attempts.
	SignalVerificationSettled = "settled"
)

// Limits of the Verification workflow.
const (
	// VerificationIdle is how long a run waits for a resend before it ends.
	VerificationIdle = time.Hour
	// verificationMaxResends bounds one run's history; past it the workflow
	// continues as new.
	verificationMaxResends = 50
)

// LocalCodeChange names the versions of Verification's shape
// (workflow.GetVersion): 1 sends a code as a local activity, inside the
// workflow task that asked for it (one round trip less while a person
// waits); 2 gives that local activity one attempt only and runs its
// retries as an activity, so a failing email or text provider never holds
// the workflow task through the retries' backoff. Histories written before
// replay their own version (the default sends the code as an activity).
const LocalCodeChange = "local-code"

// VerificationInput names the address being verified.
type VerificationInput struct {
	Tenant  string
	Person  int64
	Kind    dirstore.Kind
	Address string
	// TTL is the lifetime of each code.
	TTL time.Duration
	// PendingSeq is a resend carried over by continue-as-new.
	PendingSeq int
}

// VerificationResend asks for the code of resend Seq to be sent.
type VerificationResend struct {
	Seq int
}

// VerificationSettled says the code of resend Seq reached Status.
type VerificationSettled struct {
	Seq    int
	Status string
}

// VerificationResult is the last status the run saw and how many codes it sent.
type VerificationResult struct {
	Status  string
	Resends int
}

// VerificationWorkflowID is the business id of the verification of an
// address: verify-<tenant>-<user>-<hash>, where hash is a keyed hash
// (HMAC-SHA256 under idKey, 96 bits in hex) of the address and its row id
// (addressID), so the id is stable (starts and signals find the same run)
// but puts no email address or phone number into Temporal's UI and
// visibility store, and cannot be reversed by hashing candidate addresses
// without the key. An address removed and added again has a new row id,
// so its verification is a run of its own: the old run's resend numbers,
// which the new ones start below, do not hide them.
func VerificationWorkflowID(idKey []byte, tenant string, person int64, address string, addressID int64) string {
	m := hmac.New(sha256.New, idKey)
	m.Write([]byte(tenant + "\x00" + strconv.FormatInt(person, 10) + "\x00" + address + "\x00" + strconv.FormatInt(addressID, 10)))
	return "verify-" + tenant + "-" + strconv.FormatInt(person, 10) + "-" + hex.EncodeToString(m.Sum(nil)[:12])
}

// Verification sends verification codes for one address, one per resend
// signal, and ends each code: verified or killed (a settled signal from the
// API), undeliverable (the send activity failed for good) or expired (its
// timer fired first). A resend while a code is live replaces it. The run ends
// when its last code ended and no resend came within VerificationIdle.
func Verification(ctx workflow.Context, in VerificationInput) (VerificationResult, error) {
	ctx = codeOptions(ctx)
	var a *activities.Activities
	logger := workflow.GetLogger(ctx)
	resendCh := workflow.GetSignalChannel(ctx, SignalVerificationResend)
	settledCh := workflow.GetSignalChannel(ctx, SignalVerificationSettled)
	wfID := workflow.GetInfo(ctx).WorkflowExecution.ID
	var res VerificationResult
	seq, next := 0, in.PendingSeq

	// newest drains pending resend signals and returns the highest seq above seq.
	newest := func(cur int) int {
		var r VerificationResend
		for resendCh.ReceiveAsync(&r) {
			if r.Seq > cur {
				cur = r.Seq
			}
		}
		return cur
	}
	for {
		if n := newest(next); n > seq {
			next = n
		}
		if next <= seq {
			// Wait for a resend, or end when none comes.
			timerCtx, cancel := workflow.WithCancel(ctx)
			sel := workflow.NewSelector(ctx)
			idle := false
			sel.AddReceive(resendCh, func(c workflow.ReceiveChannel, _ bool) {
				var r VerificationResend
				c.Receive(ctx, &r)
				if r.Seq > next {
					next = r.Seq
				}
			})
			sel.AddFuture(workflow.NewTimer(timerCtx, VerificationIdle), func(workflow.Future) { idle = true })
			sel.Select(ctx)
			cancel()
			if idle {
				if n := newest(next); n > seq {
					next = n
					continue
				}
				return res, nil
			}
			if next <= seq {
				continue
			}
		}
		if res.Resends >= verificationMaxResends {
			in.PendingSeq = next
			return res, workflow.NewContinueAsNewError(ctx, Verification, in)
		}
		seq = next
		res.Resends++
		ended := activities.VerificationEnd{Tenant: in.Tenant, Person: in.Person, Kind: in.Kind, Address: in.Address, Seq: seq}
		var sent activities.CodeSent
		code := activities.VerificationCode{
			Tenant: in.Tenant, Person: in.Person, Kind: in.Kind, Address: in.Address, Seq: seq, WorkflowID: wfID, TTL: in.TTL,
		}
		var send workflow.Future
		switch workflow.GetVersion(ctx, LocalCodeChange, workflow.DefaultVersion, 2) {
		case 2:
			send = executeOnceLocally(ctx, a.SendVerificationCode, code, code)
		case 1:
			send = workflow.ExecuteLocalActivity(codeLocalOptions(ctx), a.SendVerificationCode, code)
		default:
			send = workflow.ExecuteActivity(ctx, a.SendVerificationCode, code)
		}
		err := send.Get(ctx, &sent)
		if err != nil {
			logger.Warn("verification code not delivered", "seq", seq, "error", err)
			ended.Reason = "undeliverable"
			if err := workflow.ExecuteActivity(ctx, a.FailVerification, ended).Get(ctx, nil); err != nil {
				return res, err
			}
			res.Status = "Failed"
			continue
		}
		if !sent.Sent {
			// Superseded by a newer resend, or the address is gone.
			continue
		}
		res.Status = "Pending"

		// Wait until the code ends or a newer resend replaces it.
		timerCtx, cancel := workflow.WithCancel(ctx)
		expiry := workflow.NewTimer(timerCtx, in.TTL+time.Second)
		for done := false; !done; {
			sel := workflow.NewSelector(ctx)
			sel.AddReceive(resendCh, func(c workflow.ReceiveChannel, _ bool) {
				var r VerificationResend
				c.Receive(ctx, &r)
				if r.Seq > seq {
					next, done = r.Seq, true
				}
			})
			sel.AddReceive(settledCh, func(c workflow.ReceiveChannel, _ bool) {
				var s VerificationSettled
				c.Receive(ctx, &s)
				if s.Seq == seq {
					res.Status, done = s.Status, true
				}
			})
			sel.AddFuture(expiry, func(workflow.Future) {
				done = true
				var st string
				for try := 0; ; try++ {
					if err := workflow.ExecuteActivity(ctx, a.ExpireVerification, ended).Get(ctx, &st); err != nil {
						logger.Error("expire verification", "seq", seq, "error", err)
						return
					}
					// The database's clock decides; should it lag, look again shortly.
					if st != "Pending" || try >= 3 {
						break
					}
					_ = workflow.Sleep(ctx, 5*time.Second)
				}
				res.Status = st
			})
			sel.Select(ctx)
		}
		cancel()
	}
}

// The default BatchBounds of a nonce prune: 1,000 rows of each nonce
// table a statement, at most 50,000 a run.
const (
	NonceBatch   = 1000
	NonceBatches = 50
)

// NonceRetention deletes the reserved nonces and the nonce rate limit's
// counts of every tenant once they are older than dirstore.NonceRetention
// (activities.PruneNonces), batch after batch while a batch comes back
// full. A Temporal schedule runs it every hour, so the rows of tenants and
// addresses that reserve no more nonces go too.
func NonceRetention(ctx workflow.Context, in BatchBounds) (dirstore.PrunedNonces, error) {
	b := in.or(BatchBounds{Batch: NonceBatch, Batches: NonceBatches})
	var a *activities.Activities
	return inBatches(ctx, a.PruneNonces, b, func(total *dirstore.PrunedNonces, p dirstore.PrunedNonces) bool {
		total.Nonces, total.Counts = total.Nonces+p.Nonces, total.Counts+p.Counts
		return p.Nonces >= int64(b.Batch) || p.Counts >= int64(b.Batch)
	})
}
