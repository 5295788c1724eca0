package voice

import "testing"

// TestLegacyNumbersClampAsBefore: numbers of a message stored with a
// Metadata map keep the values the code that wrote them dialled with: out of
// range (zero and negative too) they clamp to the option's bounds; missing
// or not a number, they take its default.
func TestLegacyNumbersClampAsBefore(t *testing.T) {
	for _, c := range []struct {
		v                                   string
		retry, repeat, maxAttempts, attempt int
	}{
		{"0", 30, 1, 1, 1},
		{"-5", 30, 1, 1, 1},
		{"", 300, 1, 1, 1},
		{"x", 300, 1, 1, 1},
		{"100000", 3600, 10, 10, 100},
		{"3", 30, 3, 3, 3},
	} {
		o := legacyOptions(map[string]string{"voice.retryIntervalSeconds": c.v, "voice.repeat": c.v,
			"voice.maxAttempts": c.v, "voice.attempt": c.v})
		if got := [4]int{o.retryInterval(), o.repeat(), o.maxAttempts(), o.attempt()}; got != [4]int{c.retry, c.repeat, c.maxAttempts, c.attempt} {
			t.Errorf("%q: retry, repeat, maxAttempts, attempt = %v, want %v", c.v, got, [4]int{c.retry, c.repeat, c.maxAttempts, c.attempt})
		}
	}
}
