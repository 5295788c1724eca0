// Package hooks delivers tocsin's events to subscribers' URLs: the catalogue
// of event types, Standard Webhooks signing, the SSRF policy for targets, the
// HTTP client that enforces it at every connection, and the retry schedule.
package hooks

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"time"
)

// SecretPrefix starts every signing secret, as the Standard Webhooks
// specification recommends.
const SecretPrefix = "whsec_"

// The headers of a signed delivery (Standard Webhooks).
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// NewSecret returns a fresh signing secret: "whsec_" and 32 random bytes in
// standard base64.
func NewSecret() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return SecretPrefix + base64.StdEncoding.EncodeToString(b), nil
}

// Sign returns the webhook-signature header value for a message: "v1," and
// the base64 HMAC-SHA256 of "id.timestamp.body" keyed with the secret's bytes.
func Sign(secret, id string, ts time.Time, body []byte) (string, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, SecretPrefix))
	if err != nil || len(key) == 0 {
		return "", errors.New("hooks: malformed signing secret")
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + strconv.FormatInt(ts.Unix(), 10) + "."))
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil)), nil
}
