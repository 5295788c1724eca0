package alertmsg

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
)

// ResponsePath is where a recipient's personal response page lives; the
// token follows it.
const ResponsePath = "/v2/public/alerts/responses/"

// ShortLinkPath is where short links live: PublicURL + ShortLinkPath +
// code redirects to the code's target (storage/shorturls). A recipient's
// response link reaches them as one.
const ShortLinkPath = "/s/"

// ShortCodeLength is the number of characters of a short link's code.
const ShortCodeLength = 8

// ShortLink is the short link of code under publicURL.
func ShortLink(publicURL, code string) string {
	return strings.TrimRight(publicURL, "/") + ShortLinkPath + code
}

// SampleShortLink is a short link of the real length whose code is X's:
// what size checks count and previews show in place of a recipient's own.
func SampleShortLink(publicURL string) string {
	return ShortLink(publicURL, strings.Repeat("X", ShortCodeLength))
}

// b64 decodes strictly: no padding, no line breaks, no non-zero trailing
// bits, so one token has one spelling.
var b64 = base64.RawURLEncoding.Strict()

// ResponseToken is the token of a recipient's personal response link: the
// tenant, alert and recipient number, and the alert's tag (alert.TagOf;
// none for alerts stored before tags came), signed with secret. Nothing is
// stored for it; ParseResponseToken checks the signature, and whoever
// answers it that the tag is the stored alert's, so that a link of an
// alert whose id was handed out again (a database restored from a backup)
// answers nothing of the new alert.
func ResponseToken(secret []byte, tenant string, alertID, seq int64, tag string) string {
	payload := tenant + "." + strconv.FormatInt(alertID, 36) + "." + strconv.FormatInt(seq, 36)
	if tag != "" {
		payload += "." + tag
	}
	return b64.EncodeToString([]byte(payload)) + "." + b64.EncodeToString(sign(secret, payload))
}

// ResponseTarget is what a response token names.
type ResponseTarget struct {
	Tenant       string
	AlertID, Seq int64
	// Tag is "" in the tokens of alerts stored before tags came.
	Tag string
}

// ParseResponseToken checks a token and returns what it names.
func ParseResponseToken(secret []byte, token string) (ResponseTarget, error) {
	bad := fmt.Errorf("malformed token")
	enc, sig, ok := strings.Cut(token, ".")
	if !ok {
		return ResponseTarget{}, bad
	}
	raw, err1 := b64.DecodeString(enc)
	mac, err2 := b64.DecodeString(sig)
	if err1 != nil || err2 != nil {
		return ResponseTarget{}, bad
	}
	payload := string(raw)
	if !hmac.Equal(mac, sign(secret, payload)) {
		return ResponseTarget{}, fmt.Errorf("bad signature")
	}
	parts := strings.Split(payload, ".")
	if len(parts) != 3 && (len(parts) != 4 || parts[3] == "") {
		return ResponseTarget{}, bad
	}
	t := ResponseTarget{Tenant: parts[0]}
	if len(parts) == 4 {
		t.Tag = parts[3]
	}
	t.AlertID, err1 = strconv.ParseInt(parts[1], 36, 64)
	t.Seq, err2 = strconv.ParseInt(parts[2], 36, 64)
	if err1 != nil || err2 != nil {
		return ResponseTarget{}, bad
	}
	// Only the canonical spelling is accepted (no "+1", "007" or other
	// numbers that parse to the same values).
	if ResponseToken(secret, t.Tenant, t.AlertID, t.Seq, t.Tag) != token {
		return ResponseTarget{}, bad
	}
	return t, nil
}

func sign(secret []byte, payload string) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("tocsin-response-link\x00"))
	m.Write([]byte(payload))
	return m.Sum(nil)[:16]
}

// LinkSecret derives the key of response links from the configured secrets.
func LinkSecret(secretsKey, jwtSecret string) []byte {
	k := secretsKey
	if k == "" {
		k = jwtSecret
	}
	s := sha256.Sum256([]byte("tocsin response links\x00" + k))
	return s[:]
}
