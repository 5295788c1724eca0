package alert

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tocsin/tocsin/channels"
)

// AddressOf is a recipient's address on a channel, the one of its row
// that channels.Channel.Addresses names ("" when none).
func AddressOf(ch string, rec *Recipient) string {
	switch channels.Channel(ch).Addresses() {
	case channels.RecipientEmail:
		return deref(rec.Email)
	case channels.RecipientPhone:
		return deref(rec.Phone)
	case channels.RecipientVoicePhone:
		return deref(rec.VoicePhone)
	}
	return ""
}

// DeliveryKey is the idempotency key of one delivery: the same on every
// retry of it, different for another recipient, channel or cycle.
func DeliveryKey(tenant string, alertID int64, ch string, cycle int, seq int64) string {
	return "alert-" + tenant + "-" + strconv.FormatInt(alertID, 10) + ":" + ch + ":" + strconv.Itoa(cycle) + ":" + strconv.FormatInt(seq, 10)
}

// ParseDeliveryKey splits a delivery key.
func ParseDeliveryKey(key string) (tenant string, alertID int64, ch string, cycle int, seq int64, err error) {
	head, rest, ok := strings.Cut(key, ":")
	parts := strings.Split(rest, ":")
	if !ok || !strings.HasPrefix(head, "alert-") || len(parts) != 3 {
		return "", 0, "", 0, 0, fmt.Errorf("malformed delivery key")
	}
	i := strings.LastIndex(head, "-")
	tenant = head[len("alert-"):i]
	alertID, err1 := strconv.ParseInt(head[i+1:], 10, 64)
	cycle, err2 := strconv.Atoi(parts[1])
	seq, err3 := strconv.ParseInt(parts[2], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || tenant == "" {
		return "", 0, "", 0, 0, fmt.Errorf("malformed delivery key")
	}
	return tenant, alertID, parts[0], cycle, seq, nil
}

// IsBroadcast reports whether ch is delivered once per alert and
// destination rather than once per recipient (channels.PerDestination).
func IsBroadcast(ch string) bool {
	return channels.Channel(ch).Addressing() == channels.PerDestination
}
