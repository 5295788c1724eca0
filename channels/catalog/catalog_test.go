package catalog

import (
	"testing"

	"github.com/tocsin/tocsin/alert"
	"github.com/tocsin/tocsin/channels"
)

var all = []channels.Channel{channels.Email, channels.Text, channels.Voice, channels.Etn, channels.Push, channels.MyAlertsApp,
	channels.Fax, channels.Eas, channels.MobileBroadcast, channels.TeamChat, channels.SocialPostA, channels.SocialPostB, channels.Neighborhood}

// TestEveryChannelIsDescribed: the table has each channel once, under its
// own name.
func TestEveryChannelIsDescribed(t *testing.T) {
	if len(table) != len(all) {
		t.Errorf("%d entries for %d channels", len(table), len(all))
	}
	for _, ch := range all {
		e, ok := table[ch]
		if !ok || e.Channel != ch {
			t.Errorf("%s: %+v", ch, e.Descriptor)
		}
	}
}

// TestDescriptorsAgreeWithAlert: the alert package's own answers (what the
// API reads deliveries with) agree with the descriptors.
func TestDescriptorsAgreeWithAlert(t *testing.T) {
	email, phone, voice := "a@example.com", "+15550000001", "+15550000002"
	rec := &alert.Recipient{Email: &email, Phone: &phone, VoicePhone: &voice}
	want := map[channels.Addresses]string{channels.RecipientEmail: email, channels.RecipientPhone: phone, channels.RecipientVoicePhone: voice}
	for _, ch := range all {
		d := For(ch)
		if got := alert.IsBroadcast(string(ch)); got != (d.Addressing == channels.PerDestination) {
			t.Errorf("%s: IsBroadcast %v, addressing %d", ch, got, d.Addressing)
		}
		if got := alert.AddressOf(string(ch), rec); got != want[d.Addresses] {
			t.Errorf("%s: AddressOf %q, descriptor says %q", ch, got, want[d.Addresses])
		}
		if (d.Addressing == channels.PerDevice) != (d.Addresses == channels.DeviceTokens && d.App != "") {
			t.Errorf("%s: PerDevice needs device tokens of an app: %+v", ch, d)
		}
		if (d.Addressing == channels.PerDestination) != (d.Addresses == channels.NoAddresses) {
			t.Errorf("%s: only destinations have no addresses: %+v", ch, d)
		}
	}
}
