package activities

import (
	"testing"

	"github.com/tocsin/tocsin/alert"
	"github.com/tocsin/tocsin/storage"
)

func TestAggregateDevices(t *testing.T) {
	p1, p2 := int64(11), int64(12)
	recs := []storage.BatchRecipient{{RecipientRow: storage.RecipientRow{Seq: 1, PersonID: &p1}}, {RecipientRow: storage.RecipientRow{Seq: 2, PersonID: &p2}}}
	extra := map[int64][]string{11: {"a", "b"}, 12: {"c", "d"}}
	tests := []struct {
		name   string
		rows   []storage.DeliveryRow
		status map[int64]string
	}{
		{"any token sent makes the recipient sent", []storage.DeliveryRow{
			{Seq: 1, Status: storage.DeliveryFailed, Error: "DeviceNotRegistered"}, {Seq: 1, Status: storage.DeliverySent},
			{Seq: 2, Status: storage.DeliverySent}, {Seq: 2, Status: storage.DeliverySent},
		}, map[int64]string{1: storage.DeliverySent, 2: storage.DeliverySent}},
		{"a temporary failure beats a permanent one", []storage.DeliveryRow{
			{Seq: 1, Status: storage.DeliveryFailed, Permanent: true, Error: "gone"}, {Seq: 1, Status: storage.DeliveryRetrying, Error: "rate"},
			{Seq: 2, Status: storage.DeliveryFailed, Permanent: true}, {Seq: 2, Status: storage.DeliveryFailed, Permanent: true},
		}, map[int64]string{1: storage.DeliveryRetrying, 2: storage.DeliveryFailed}},
		{"skipped rows pass through", []storage.DeliveryRow{{Seq: 1, Status: storage.DeliverySkipped}},
			map[int64]string{1: storage.DeliverySkipped}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := aggregateDevices(tt.rows, extra, recs)
			if len(got) != len(tt.status) {
				t.Fatalf("%d rows, want %d: %+v", len(got), len(tt.status), got)
			}
			for _, r := range got {
				if r.Status != tt.status[r.Seq] {
					t.Errorf("seq %d: %s, want %s", r.Seq, r.Status, tt.status[r.Seq])
				}
				if r.Status != storage.DeliverySkipped && r.Address != map[int64]string{1: "a,b", 2: "c,d"}[r.Seq] {
					t.Errorf("seq %d address %q", r.Seq, r.Address)
				}
			}
		})
	}
}

// TestBroadcastTextIsTheMobileBroadcastText: the mobile broadcast block's
// own text, its variables filled, is the text the provider receives.
func TestBroadcastTextIsTheMobileBroadcastText(t *testing.T) {
	s := &alert.Settings{
		Message:  alert.MessageSettings{Subject: "Storm", Body: "Hello {{firstName}}"},
		Channels: &alert.Channels{MobileBroadcast: &alert.MobileBroadcastChannel{Enabled: true, Text: "Broadcast {{alertId}}"}},
	}
	rd, err := alert.NewRenderer("7", 42, s, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	r := &alertRenderer{Renderer: rd}
	m, _ := r.Message("mobileBroadcast", &alert.Recipient{}, "")
	r.options(&m)
	if m.Text != "Broadcast 42" {
		t.Errorf("text %q, want %q", m.Text, "Broadcast 42")
	}
}
