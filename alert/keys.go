package alert

import (
	"crypto/rand"
	"encoding/base32"
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

// ReachedAs is the earlier recipient (seq) whose message on channel ch
// reaches rec's address there, or 0 when the address is rec's own.
func ReachedAs(ch string, rec *Recipient) int64 {
	var n *int64
	switch channels.Channel(ch).Addresses() {
	case channels.RecipientEmail:
		n = rec.EmailReachedAs
	case channels.RecipientPhone:
		n = rec.PhoneReachedAs
	case channels.RecipientVoicePhone:
		n = rec.VoicePhoneReachedAs
	}
	if n == nil {
		return 0
	}
	return *n
}

// TagLen is the length of an alert's tag.
const TagLen = 8

// NewTag returns a new alert's tag: 8 random characters of lower-case
// base32 (a-z, 2-7), at least one of them a letter, so it never reads as
// an alert id. The tag goes into the alert's workflow id and delivery keys,
// so an alert id handed out again (the database restored from a backup
// while Temporal and the providers remember the alerts sent since) names
// another workflow and other keys.
func NewTag() string {
	for {
		var b [5]byte
		_, _ = rand.Read(b[:]) // never fails (crypto/rand)
		tag := strings.ToLower(base32.StdEncoding.EncodeToString(b[:]))
		if IsTag(tag) {
			return tag
		}
	}
}

// IsTag reports whether s has the shape of a tag NewTag returns.
func IsTag(s string) bool {
	if len(s) != TagLen {
		return false
	}
	letter := false
	for _, c := range s {
		switch {
		case c >= 'a' && c <= 'z':
			letter = true
		case c < '2' || c > '7':
			return false
		}
	}
	return letter
}

// WorkflowID is the business id of an alert's SendAlert workflow,
// alert-<tenant>-<id>-<tag>, and the head of its delivery keys. Alerts
// stored before tags came have none: alert-<tenant>-<id>. It is computed
// once, when the alert is created, and stored with it (storage.Alert's
// WorkflowID); everything else uses the stored id or TagOf it.
func WorkflowID(tenant string, alertID int64, tag string) string {
	id := "alert-" + tenant + "-" + strconv.FormatInt(alertID, 10)
	if tag != "" {
		id += "-" + tag
	}
	return id
}

// TagOf returns the tag in the stored workflow id of tenant's alert
// alertID: "" for an alert stored before tags came (or a workflow id of
// another shape).
func TagOf(tenant string, alertID int64, workflowID string) string {
	tag, ok := strings.CutPrefix(workflowID, WorkflowID(tenant, alertID, "")+"-")
	if !ok || !IsTag(tag) {
		return ""
	}
	return tag
}

// DeliveryKey is the idempotency key of one delivery: the same on every
// retry of it, different for another recipient, channel or cycle, and for
// another alert of the same id (tag): alert-<tenant>-<id>-<tag>:<channel>:<cycle>:<seq>.
func DeliveryKey(tenant string, alertID int64, tag, ch string, cycle int, seq int64) string {
	return WorkflowID(tenant, alertID, tag) + ":" + ch + ":" + strconv.Itoa(cycle) + ":" + strconv.FormatInt(seq, 10)
}

// Key is a parsed delivery key.
type Key struct {
	Tenant  string
	AlertID int64
	// Tag is "" in the keys of alerts stored before tags came.
	Tag     string
	Channel string
	Cycle   int
	Seq     int64
}

// WorkflowID is the workflow id of the alert whose delivery k is: the one
// its alert has stored when the key is that alert's.
func (k Key) WorkflowID() string { return WorkflowID(k.Tenant, k.AlertID, k.Tag) }

// ParseDeliveryKey splits a delivery key, with a tag or of an alert stored
// before tags came.
func ParseDeliveryKey(key string) (Key, error) {
	bad := fmt.Errorf("malformed delivery key")
	head, rest, ok := strings.Cut(key, ":")
	parts := strings.Split(rest, ":")
	if !ok || !strings.HasPrefix(head, "alert-") || len(parts) != 3 {
		return Key{}, bad
	}
	var k Key
	head = head[len("alert-"):]
	if i := strings.LastIndex(head, "-"); i >= 0 && IsTag(head[i+1:]) {
		head, k.Tag = head[:i], head[i+1:]
	}
	i := strings.LastIndex(head, "-")
	if i <= 0 {
		return Key{}, bad
	}
	k.Tenant, k.Channel = head[:i], parts[0]
	var err1, err2, err3 error
	k.AlertID, err1 = strconv.ParseInt(head[i+1:], 10, 64)
	k.Cycle, err2 = strconv.Atoi(parts[1])
	k.Seq, err3 = strconv.ParseInt(parts[2], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return Key{}, bad
	}
	return k, nil
}

// IsBroadcast reports whether ch is delivered once per alert and
// destination rather than once per recipient (channels.PerDestination).
func IsBroadcast(ch string) bool {
	return channels.Channel(ch).Addressing() == channels.PerDestination
}
