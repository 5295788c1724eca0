package alert

import (
	"errors"
	"testing"

	"github.com/tocsin/tocsin/channels"
)

func TestStatusOf(t *testing.T) {
	mid, last := Attempt{Max: 5}, Attempt{Last: true, Max: 5}
	tests := []struct {
		name string
		res  channels.Result
		at   Attempt
		want Outcome
	}{
		{"sent", channels.Result{Outcome: channels.Sent}, mid, Outcome{Status: DeliverySent}},
		{"sent on the last attempt", channels.Result{Outcome: channels.Sent}, last, Outcome{Status: DeliverySent}},
		{"delivered", channels.Result{Outcome: channels.Delivered}, mid, Outcome{Status: DeliveryDelivered}},
		{"permanent failure", channels.Result{Outcome: channels.Failed, Permanent: true, Error: "no such user"}, mid,
			Outcome{Status: DeliveryFailed, Permanent: true, Error: "no such user"}},
		{"permanent failure on the last attempt", channels.Result{Outcome: channels.Failed, Permanent: true, Error: "no such user"}, last,
			Outcome{Status: DeliveryFailed, Permanent: true, Error: "no such user"}},
		{"temporary failure", channels.Result{Outcome: channels.Failed, Error: "busy"}, mid, Outcome{Status: DeliveryRetrying, Error: "busy"}},
		{"temporary failure on the last attempt", channels.Result{Outcome: channels.Failed, Error: "busy"}, last,
			Outcome{Status: DeliveryFailed, Error: "gave up after 5 attempts: busy"}},
		{"no result", channels.Result{Outcome: channels.Failed, Error: NoResult}, mid, Outcome{Status: DeliveryRetrying, Error: NoResult}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := StatusOf(tt.res, tt.at); got != tt.want {
				t.Errorf("%+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestResultAt(t *testing.T) {
	results := []channels.Result{{Outcome: channels.Sent, ProviderMessageID: "m1"}}
	if r := ResultAt(results, nil, 0); r.Outcome != channels.Sent || r.ProviderMessageID != "m1" {
		t.Errorf("result 0: %+v", r)
	}
	if r := ResultAt(results, nil, 1); r.Outcome != channels.Failed || r.Permanent || r.Error != NoResult {
		t.Errorf("missing result: %+v", r)
	}
	if r := ResultAt(results, errors.New("down"), 0); r.Outcome != channels.Failed || r.Permanent || r.Error != "down" {
		t.Errorf("batch error: %+v", r)
	}
}

func TestTotals(t *testing.T) {
	a := Totals{Total: 10, Retrying: 1, Sent: 5, Delivered: 2, Failed: 1, Skipped: 1}
	b := Totals{Total: 4, Pending: 1, Sent: 3}
	tests := []struct {
		name        string
		got, want   Totals
		final, succ int64
	}{
		{"nothing", Sum(), Totals{}, 0, 0},
		{"one", Sum(a), a, 9, 7},
		{"two", Sum(a, b), Totals{Total: 14, Pending: 1, Retrying: 1, Sent: 8, Delivered: 2, Failed: 1, Skipped: 1}, 12, 10},
		{"pending recipients", b.WithPending(10, 4, false), Totals{Total: 10, Pending: 7, Sent: 3}, 3, 3},
		{"no pending once every row exists", b.WithPending(4, 4, false), b, 3, 3},
		{"more rows than recipients", b.WithPending(2, 4, false), b, 3, 3},
		{"a failed alert has nothing pending", b.WithPending(10, 4, true), b, 3, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("%+v, want %+v", tt.got, tt.want)
			}
			if tt.got.Final() != tt.final || tt.got.Succeeded() != tt.succ {
				t.Errorf("final %d succeeded %d, want %d %d", tt.got.Final(), tt.got.Succeeded(), tt.final, tt.succ)
			}
		})
	}
}
