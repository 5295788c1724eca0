// Package secrets encrypts provider credentials at rest with AES-256-GCM and
// masks them for display.
package secrets

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// DevKey is the base64 key used in development when TOCSIN_SECRETS_KEY is
// unset. Production refuses to start without a key of its own.
const DevKey = "dG9jc2luLWRldmVsb3BtZW50LXNlY3JldHMta2V5ISE="

// version prefixes every sealed value, so the format can change later.
const version = 1

// Box seals and opens values with one AES-256-GCM key.
type Box struct {
	aead cipher.AEAD
}

// New returns a Box for a base64-encoded 32-byte key (standard or URL
// alphabet, with or without padding).
func New(key string) (*Box, error) {
	raw, err := DecodeKey(key)
	if err != nil {
		return nil, fmt.Errorf("TOCSIN_SECRETS_KEY %w", err)
	}
	block, err := aes.NewCipher(raw)
	if err != nil {
		return nil, fmt.Errorf("secrets key: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("secrets key: %w", err)
	}
	return &Box{aead: aead}, nil
}

// DecodeKey decodes a 32-byte key from base64 (standard or URL alphabet,
// with or without padding).
func DecodeKey(key string) ([]byte, error) {
	key = strings.TrimSpace(key)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(key); err == nil {
			if len(b) != 32 {
				return nil, fmt.Errorf("must decode to 32 bytes, not %d", len(b))
			}
			return b, nil
		}
	}
	return nil, errors.New("must be base64 of 32 bytes (e.g. `openssl rand -base64 32`)")
}

// Derive returns a 32-byte key for purpose derived from the base64 key with
// HMAC-SHA256, so one configured key serves several uses without the same
// bytes doing two jobs.
func Derive(key, purpose string) ([]byte, error) {
	raw, err := DecodeKey(key)
	if err != nil {
		return nil, fmt.Errorf("TOCSIN_SECRETS_KEY %w", err)
	}
	m := hmac.New(sha256.New, raw)
	m.Write([]byte("tocsin derived key: " + purpose))
	return m.Sum(nil), nil
}

// Seal encrypts plain; aad binds the ciphertext to its place (tenant and
// channel), so a value copied to another row does not open.
func (b *Box) Seal(plain, aad []byte) ([]byte, error) {
	nonce := make([]byte, b.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("nonce: %w", err)
	}
	out := append([]byte{version}, nonce...)
	return b.aead.Seal(out, nonce, plain, aad), nil
}

// ErrOpen is returned when a sealed value does not open with the key.
var ErrOpen = errors.New("sealed value does not open with this key")

// Open decrypts a value sealed with the same key and aad.
func (b *Box) Open(sealed, aad []byte) ([]byte, error) {
	ns := b.aead.NonceSize()
	if len(sealed) < 1+ns || sealed[0] != version {
		return nil, ErrOpen
	}
	plain, err := b.aead.Open(nil, sealed[1:1+ns], sealed[1+ns:], aad)
	if err != nil {
		return nil, ErrOpen
	}
	return plain, nil
}

// Mask shows at most the last four characters of a secret, and none of a
// short one, so a stored credential can be recognised but not read.
// Characters are counted as Unicode code points, never cut inside one: the
// mask is valid UTF-8 and survives a JSON round trip, so a client can send
// it back to keep the value (invalid UTF-8 in s becomes U+FFFD).
func Mask(s string) string {
	if s == "" {
		return ""
	}
	r := []rune(s)
	if len(r) < 12 {
		return "****"
	}
	return "****" + string(r[len(r)-4:])
}
