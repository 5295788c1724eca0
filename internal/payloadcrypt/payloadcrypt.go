// Package payloadcrypt keeps personal data out of Temporal's plain sight: a
// payload codec that encrypts every payload tocsin's Temporal clients write
// (workflow and activity inputs and results, signals, queries, failure
// messages) with AES-256-GCM, under keys from configuration that can rotate.
//
// An encrypted payload carries the id of the key that sealed it in its
// metadata. One key encrypts; every key in the ring decrypts, so a rotated-out
// key stays in the ring until no history needs it.
package payloadcrypt

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
	"regexp"
	"strings"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"google.golang.org/protobuf/proto"

	"github.com/tocsin/tocsin/internal/secrets"
)

// Metadata of an encrypted payload.
const (
	// Encoding is the value of the "encoding" metadata of an encrypted payload.
	Encoding = "binary/encrypted"
	// MetadataKeyID names the key that sealed the payload.
	MetadataKeyID = "encryption-key-id"
	// MetadataCipher names the cipher.
	MetadataCipher = "encryption-cipher"
	cipherName     = "AES-256-GCM"
)

// DevKey is the development payload key, and DevKeys the key ring
// development uses when TOCSIN_PAYLOAD_KEYS is unset. Production refuses both.
const (
	DevKey  = "dG9jc2luLWRldmVsb3BtZW50LXBheWxvYWQta2V5ISE="
	DevKeys = "dev:" + DevKey
)

var (
	// ErrUnknownKey is returned for a payload sealed with a key id that is
	// not in the ring.
	ErrUnknownKey = errors.New("payload encrypted with a key that is not configured")
	// ErrTampered is returned for a payload that does not open: changed, cut
	// short, or sealed with another key under the same id.
	ErrTampered = errors.New("payload does not decrypt: altered, or sealed with another key of the same id")
)

var keyIDPattern = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// Codec encrypts and decrypts Temporal payloads; it is a
// converter.PayloadCodec.
type Codec struct {
	current string
	keys    map[string]cipher.AEAD
}

var _ converter.PayloadCodec = (*Codec)(nil)

// New builds a codec from a key ring and the id of the key that encrypts.
// keys is a comma-separated list of id:key pairs, each key base64 of 32
// random bytes (e.g. `openssl rand -base64 32`); ids are 1 to 64 letters,
// digits, dots, dashes or underscores. current names the encrypting key;
// empty means the first key listed.
func New(keys, current string) (*Codec, error) {
	c := &Codec{keys: map[string]cipher.AEAD{}}
	for _, entry := range strings.Split(keys, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		id, raw, ok := strings.Cut(entry, ":")
		id = strings.TrimSpace(id)
		if !ok || !keyIDPattern.MatchString(id) {
			return nil, errors.New("TOCSIN_PAYLOAD_KEYS: each entry must be id:base64key with an id of letters, digits, '.', '-' or '_'")
		}
		if _, dup := c.keys[id]; dup {
			return nil, fmt.Errorf("TOCSIN_PAYLOAD_KEYS: key id %q appears twice", id)
		}
		key, err := secrets.DecodeKey(raw)
		if err != nil {
			return nil, fmt.Errorf("TOCSIN_PAYLOAD_KEYS: key %q: %w", id, err)
		}
		block, err := aes.NewCipher(key)
		if err != nil {
			return nil, fmt.Errorf("TOCSIN_PAYLOAD_KEYS: key %q: %w", id, err)
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, fmt.Errorf("TOCSIN_PAYLOAD_KEYS: key %q: %w", id, err)
		}
		c.keys[id] = aead
		if c.current == "" {
			c.current = id
		}
	}
	if len(c.keys) == 0 {
		return nil, errors.New("TOCSIN_PAYLOAD_KEYS holds no key")
	}
	if current = strings.TrimSpace(current); current != "" {
		if _, ok := c.keys[current]; !ok {
			return nil, fmt.Errorf("TOCSIN_PAYLOAD_KEY_ID %q is not a key id of TOCSIN_PAYLOAD_KEYS", current)
		}
		c.current = current
	}
	return c, nil
}

// CurrentKeyID is the id of the key that encrypts.
func (c *Codec) CurrentKeyID() string { return c.current }

// Encode encrypts each payload, whole (data and metadata), under the current key.
func (c *Codec) Encode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	aead := c.keys[c.current]
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		plain, err := proto.Marshal(p)
		if err != nil {
			return nil, fmt.Errorf("encode payload: %w", err)
		}
		nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plain)+aead.Overhead())
		if _, err := rand.Read(nonce); err != nil {
			return nil, fmt.Errorf("encode payload: nonce: %w", err)
		}
		out[i] = &commonpb.Payload{
			Metadata: map[string][]byte{
				converter.MetadataEncoding: []byte(Encoding),
				MetadataKeyID:              []byte(c.current),
				MetadataCipher:             []byte(cipherName),
			},
			Data: aead.Seal(nonce, nonce, plain, []byte(c.current)),
		}
	}
	return out, nil
}

// Decode decrypts each encrypted payload with the key its metadata names.
// Payloads that were never encrypted (written before the codec was in use)
// pass through unchanged.
func (c *Codec) Decode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		if string(p.GetMetadata()[converter.MetadataEncoding]) != Encoding {
			out[i] = p
			continue
		}
		id := string(p.Metadata[MetadataKeyID])
		aead, ok := c.keys[id]
		if !ok {
			return nil, fmt.Errorf("key id %q: %w (add it to TOCSIN_PAYLOAD_KEYS)", id, ErrUnknownKey)
		}
		if len(p.Data) < aead.NonceSize()+aead.Overhead() {
			return nil, fmt.Errorf("key id %q: %w", id, ErrTampered)
		}
		ns := aead.NonceSize()
		plain, err := aead.Open(nil, p.Data[:ns], p.Data[ns:], []byte(id))
		if err != nil {
			return nil, fmt.Errorf("key id %q: %w", id, ErrTampered)
		}
		var orig commonpb.Payload
		if err := proto.Unmarshal(plain, &orig); err != nil {
			return nil, fmt.Errorf("key id %q: decrypted payload: %w", id, err)
		}
		out[i] = &orig
	}
	return out, nil
}

// DataConverter is the SDK's default data converter with every payload
// passing through the codec.
func (c *Codec) DataConverter() converter.DataConverter {
	return converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), c)
}

// FailureConverter moves failure messages and stack traces into an
// encrypted payload, so an error that quotes an address is not in clear
// either.
func (c *Codec) FailureConverter() converter.FailureConverter {
	return temporal.NewDefaultFailureConverter(temporal.DefaultFailureConverterOptions{
		DataConverter: c.DataConverter(), EncodeCommonAttributes: true,
	})
}
