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
	for _, c := range []Key{
		{"7", 42, "", "text", 1, 3}, {"acme-west", 1, "", "voice", 2, 0}, {"t", 9007199254740993, "", "etn", 10, 123456789},
		{"7", 42, "k3x7q2ab", "text", 1, 3}, {"acme-west", 1, "abcdefgh", "voice", 2, 0}, {"7-1", 42, "2345672a", "etn", 1, 1},
	} {
		key := DeliveryKey(c.Tenant, c.AlertID, c.Tag, c.Channel, c.Cycle, c.Seq)
		got, err := ParseDeliveryKey(key)
		if err != nil || got != c {
			t.Errorf("%s: %+v %v", key, got, err)
		}
		if got.WorkflowID() != WorkflowID(c.Tenant, c.AlertID, c.Tag) {
			t.Errorf("%s: workflow id %q", key, got.WorkflowID())
		}
	}
	// Alerts stored before tags keep their keys.
	if got := DeliveryKey("7", 42, "", "text", 1, 3); got != "alert-7-42:text:1:3" {
		t.Errorf("key %q", got)
	}
	if got := DeliveryKey("7", 42, "k3x7q2ab", "text", 1, 3); got != "alert-7-42-k3x7q2ab:text:1:3" {
		t.Errorf("tagged key %q", got)
	}
	// An old key of tenant "7-42" and alert 3 is not read as a tag.
	if k, err := ParseDeliveryKey("alert-7-42-3:text:1:3"); err != nil || k.Tenant != "7-42" || k.AlertID != 3 || k.Tag != "" {
		t.Errorf("old key with a dash in the tenant: %+v %v", k, err)
	}
	for _, bad := range []string{"", "alert-7-42", "alert-7-42:text:1", "alert--42:text:1:3", "alert-7-x:text:1:3", "call-7-42:text:1:3",
		"alert-7-42:text:a:3", "alert-7-42:text:1:3:4", "alert-k3x7q2ab:text:1:3", "alert-7-k3x7q2ab:text:1:3", "alert--42-k3x7q2ab:text:1:3"} {
		if k, err := ParseDeliveryKey(bad); err == nil {
			t.Errorf("%q parsed: %+v", bad, k)
		}
	}
}

func TestNewTagNamesAnotherWorkflow(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		tag := NewTag()
		if !IsTag(tag) || seen[tag] {
			t.Fatalf("tag %q (seen %v)", tag, seen[tag])
		}
		seen[tag] = true
		id := WorkflowID("1001", 42, tag)
		if id != "alert-1001-42-"+tag || TagOf("1001", 42, id) != tag {
			t.Fatalf("workflow id %q, tag of it %q", id, TagOf("1001", 42, id))
		}
	}
	for _, c := range []struct{ tenant, wid string }{{"1001", "alert-1001-42"}, {"1001", "wf"}, {"1001", "alert-1001-4-abcdefgh"}, {"1001", "alert-1001-42-123"}} {
		if tag := TagOf(c.tenant, 42, c.wid); tag != "" {
			t.Errorf("TagOf(%q) = %q", c.wid, tag)
		}
	}
}
