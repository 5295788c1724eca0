package alert

import "testing"

func TestIsBroadcast(t *testing.T) {
	for ch, want := range map[string]bool{"eas": true, "mobileBroadcast": true, "teamChat": true, "socialPostA": true, "socialPostB": true,
		"neighborhood": true, "email": false, "voice": false, "etn": false, "push": false, "fax": false} {
		if IsBroadcast(ch) != want {
			t.Errorf("%s: %v", ch, !want)
		}
	}
}

func TestAddressOf(t *testing.T) {
	email, phone, voice := "a@example.com", "+15550000001", "+15550000002"
	rec := &Recipient{Email: &email, Phone: &phone, VoicePhone: &voice}
	for ch, want := range map[string]string{"email": email, "text": phone, "voice": voice, "etn": voice, "push": "", "fax": "", "eas": "", "pager": ""} {
		if got := AddressOf(ch, rec); got != want {
			t.Errorf("%s: %q, want %q", ch, got, want)
		}
	}
}

func TestDeliveryKeyRoundTrip(t *testing.T) {
	for _, c := range []struct {
		tenant  string
		alertID int64
		ch      string
		cycle   int
		seq     int64
	}{{"7", 42, "text", 1, 3}, {"acme-west", 1, "voice", 2, 0}, {"t", 9007199254740993, "etn", 10, 123456789}} {
		key := DeliveryKey(c.tenant, c.alertID, c.ch, c.cycle, c.seq)
		tenant, alertID, ch, cycle, seq, err := ParseDeliveryKey(key)
		if err != nil || tenant != c.tenant || alertID != c.alertID || ch != c.ch || cycle != c.cycle || seq != c.seq {
			t.Errorf("%s: %q %d %q %d %d %v", key, tenant, alertID, ch, cycle, seq, err)
		}
	}
	if got := DeliveryKey("7", 42, "text", 1, 3); got != "alert-7-42:text:1:3" {
		t.Errorf("key %q", got)
	}
	for _, bad := range []string{"", "alert-7-42", "alert-7-42:text:1", "alert--42:text:1:3", "alert-7-x:text:1:3", "call-7-42:text:1:3", "alert-7-42:text:a:3", "alert-7-42:text:1:3:4"} {
		if _, _, _, _, _, err := ParseDeliveryKey(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}
