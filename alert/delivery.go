package alert

import (
	"fmt"

	"github.com/tocsin/tocsin/channels"
)

// Delivery statuses, as stored and shown (README, "DeliveryStatus"). Sent,
// Delivered, Failed and Skipped are final; Pending is a delivery without a
// row yet.
const (
	DeliveryPending   = "Pending"
	DeliveryRetrying  = "Retrying"
	DeliverySent      = "Sent"
	DeliveryDelivered = "Delivered"
	DeliveryFailed    = "Failed"
	DeliverySkipped   = "Skipped"
)

// NoResult is the error of a message the provider returned no result for.
const NoResult = "the provider returned no result"

// Attempt says which attempt of a delivery a result belongs to: the Nth of
// at most Max. On the last one a temporary failure is final.
type Attempt struct {
	Last bool
	Max  int
}

// Outcome is a delivery's status after one attempt, as recorded.
type Outcome struct {
	Status    string
	Permanent bool
	Error     string
}

// StatusOf is the one rule that turns a provider's result into a delivery
// status: Sent and Delivered as the provider says; a permanent failure is
// Failed and permanent; a temporary failure is Retrying, or Failed ("gave up
// after N attempts") on the last attempt.
func StatusOf(res channels.Result, at Attempt) Outcome {
	switch {
	case res.Outcome == channels.Sent:
		return Outcome{Status: DeliverySent, Error: res.Error}
	case res.Outcome == channels.Delivered:
		return Outcome{Status: DeliveryDelivered, Error: res.Error}
	case res.Permanent:
		return Outcome{Status: DeliveryFailed, Permanent: true, Error: res.Error}
	case at.Last:
		return Outcome{Status: DeliveryFailed, Error: fmt.Sprintf("gave up after %d attempts: %s", at.Max, res.Error)}
	default:
		return Outcome{Status: DeliveryRetrying, Error: res.Error}
	}
}

// ResultAt is the result of message i of a batch the provider answered
// with results, or with err for the whole batch: a failure with err's text,
// or NoResult when the provider returned fewer results than messages.
func ResultAt(results []channels.Result, err error, i int) channels.Result {
	switch {
	case err != nil:
		return channels.Result{Outcome: channels.Failed, Error: err.Error()}
	case i < len(results):
		return results[i]
	default:
		return channels.Result{Outcome: channels.Failed, Error: NoResult}
	}
}

// Totals count deliveries by status. Total includes Pending. The db tags
// name the columns of storage's batch counts.
type Totals struct {
	Total     int64 `db:"total"`
	Pending   int64 `db:"pending"`
	Retrying  int64 `db:"retrying"`
	Sent      int64 `db:"sent"`
	Delivered int64 `db:"delivered"`
	Failed    int64 `db:"failed"`
	Skipped   int64 `db:"skipped"`
}

// Final counts the deliveries with a final status.
func (t Totals) Final() int64 { return t.Sent + t.Delivered + t.Failed + t.Skipped }

// Succeeded counts the deliveries a provider took.
func (t Totals) Succeeded() int64 { return t.Sent + t.Delivered }

// Sum adds up totals.
func Sum(ts ...Totals) Totals {
	var s Totals
	for _, t := range ts {
		s.Total += t.Total
		s.Pending += t.Pending
		s.Retrying += t.Retrying
		s.Sent += t.Sent
		s.Delivered += t.Delivered
		s.Failed += t.Failed
		s.Skipped += t.Skipped
	}
	return s
}

// WithPending counts the recipients of the first cycle that have no row yet
// (recipients minus firstCycleRows) as pending, unless the alert failed:
// a failed alert sends nothing more.
func (t Totals) WithPending(recipients, firstCycleRows int64, alertFailed bool) Totals {
	if pending := recipients - firstCycleRows; pending > 0 && !alertFailed {
		t.Pending += pending
		t.Total += pending
	}
	return t
}
