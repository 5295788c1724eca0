package voice

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tocsin/tocsin/channels"
)

// SignatureHeader carries the signature of a status callback:
// "t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>" with the signing secret>".
const SignatureHeader = "X-Tocsin-Signature"

// SignatureTolerance is how far a callback's timestamp may be from now.
const SignatureTolerance = 5 * time.Minute

// Sign returns the SignatureHeader value for body at time t.
func Sign(secret string, body []byte, t time.Time) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	return "t=" + ts + ",v1=" + mac(secret, ts, body)
}

func mac(secret, ts string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts))
	m.Write([]byte("."))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// ErrSignature is returned for a callback whose signature does not verify.
var ErrSignature = errors.New("callback signature does not verify")

// Verify checks header against body with any of secrets (a channel may have
// a primary and a fallback provider) and rejects timestamps outside
// SignatureTolerance of now. Its work does not tell how many secrets there
// are: it computes macsPerVerify HMACs whatever they are, none, one or
// two, and compares each in constant time.
func Verify(secrets []string, header string, body []byte, now time.Time) error {
	return verify(mac, secrets, header, body, now)
}

// macsPerVerify is how many HMACs Verify computes for a well-formed header:
// as many as a channel has signing secrets at most (a primary and a
// fallback provider). A missing or empty secret is stood in for by
// dummySecret, whose HMAC counts for nothing.
const macsPerVerify = 2

// dummySecret is a random secret of this process, never a provider's.
var dummySecret = func() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic("voice: no randomness for the dummy signing secret: " + err.Error())
	}
	return hex.EncodeToString(b)
}()

// verify is Verify computing each HMAC with sum.
func verify(sum func(secret, ts string, body []byte) string, secrets []string, header string, body []byte, now time.Time) error {
	var ts string
	var sigs []string
	for _, part := range strings.Split(header, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			continue
		}
		switch k {
		case "t":
			ts = v
		case "v1":
			sigs = append(sigs, v)
		}
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || len(sigs) == 0 {
		return fmt.Errorf("%w: malformed %s header", ErrSignature, SignatureHeader)
	}
	if d := now.Sub(time.Unix(sec, 0)); d > SignatureTolerance || d < -SignatureTolerance {
		return fmt.Errorf("%w: timestamp outside the tolerance", ErrSignature)
	}
	verified := 0
	for i := 0; i < max(macsPerVerify, len(secrets)); i++ {
		secret, counts := dummySecret, 0
		if i < len(secrets) && secrets[i] != "" {
			secret, counts = secrets[i], 1
		}
		want := []byte(sum(secret, ts, body))
		for _, s := range sigs {
			verified |= subtle.ConstantTimeCompare([]byte(s), want) & counts
		}
	}
	if verified == 1 {
		return nil
	}
	return ErrSignature
}

// Receive verifies a status callback's signature with the tenant's signing
// secrets, decodes it and records it. The API's callback operation and tests
// call it alike.
func Receive(ctx context.Context, calls *Calls, secrets []string, tenant string, ch channels.Channel, header string, body []byte) (Call, error) {
	if err := Verify(secrets, header, body, time.Now()); err != nil {
		return Call{}, err
	}
	return Accept(ctx, calls, tenant, ch, body)
}

// Accept decodes a status callback whose signature verified and records it.
func Accept(ctx context.Context, calls *Calls, tenant string, ch channels.Channel, body []byte) (Call, error) {
	var cb Callback
	if err := json.Unmarshal(body, &cb); err != nil {
		return Call{}, fmt.Errorf("%w: %v", ErrBadCallback, err)
	}
	if cb.Reference == "" || cb.CallID == "" {
		return Call{}, fmt.Errorf("%w: reference and callId are required", ErrBadCallback)
	}
	return calls.Record(ctx, tenant, ch, cb)
}
