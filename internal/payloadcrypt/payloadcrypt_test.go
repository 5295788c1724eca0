package payloadcrypt_test

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"

	"github.com/tocsin/tocsin/internal/payloadcrypt"
)

func newKey(t *testing.T) string {
	t.Helper()
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b)
}

type message struct {
	To   string
	Body string
}

func mustCodec(t *testing.T, keys, current string) *payloadcrypt.Codec {
	t.Helper()
	c, err := payloadcrypt.New(keys, current)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestRoundTripHidesThePlaintext(t *testing.T) {
	c := mustCodec(t, "k1:"+newKey(t), "")
	dc := c.DataConverter()
	in := message{To: "ada@example.com", Body: "Leave by the north stairs."}
	p, err := dc.ToPayload(in)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(p.Metadata["encoding"]); got != payloadcrypt.Encoding {
		t.Fatalf("encoding %q", got)
	}
	if got := string(p.Metadata[payloadcrypt.MetadataKeyID]); got != "k1" {
		t.Fatalf("key id %q", got)
	}
	for _, v := range p.Metadata {
		if bytes.Contains(v, []byte("json")) {
			t.Fatalf("the original encoding is visible: %q", v)
		}
	}
	if bytes.Contains(p.Data, []byte("ada@example.com")) || bytes.Contains(p.Data, []byte("north stairs")) {
		t.Fatal("ciphertext holds the plaintext")
	}
	var out message
	if err := dc.FromPayload(p, &out); err != nil {
		t.Fatal(err)
	}
	if out != in {
		t.Fatalf("round trip: %+v", out)
	}
	// Each encryption uses a fresh nonce.
	q, _ := dc.ToPayload(in)
	if bytes.Equal(p.Data, q.Data) {
		t.Fatal("two encryptions of one value are equal")
	}
}

func TestRotationOldKeysStillDecrypt(t *testing.T) {
	k1, k2 := newKey(t), newKey(t)
	old := mustCodec(t, "k1:"+k1, "")
	sealed, err := old.DataConverter().ToPayload(message{To: "+12025550123"})
	if err != nil {
		t.Fatal(err)
	}

	// The new key encrypts; the old one stays for decryption.
	rotated := mustCodec(t, "k1:"+k1+", k2:"+k2, "k2")
	if rotated.CurrentKeyID() != "k2" {
		t.Fatalf("current %s", rotated.CurrentKeyID())
	}
	var out message
	if err := rotated.DataConverter().FromPayload(sealed, &out); err != nil || out.To != "+12025550123" {
		t.Fatalf("old payload after rotation: %v %+v", err, out)
	}
	fresh, _ := rotated.DataConverter().ToPayload(message{To: "x"})
	if got := string(fresh.Metadata[payloadcrypt.MetadataKeyID]); got != "k2" {
		t.Fatalf("new payloads sealed with %q", got)
	}

	// A ring without the old key says which key is missing.
	_, err = mustCodec(t, "k2:"+k2, "").Decode([]*commonpb.Payload{sealed})
	if !errors.Is(err, payloadcrypt.ErrUnknownKey) || !strings.Contains(err.Error(), `"k1"`) {
		t.Fatalf("unknown key: %v", err)
	}
	// So does the data converter, rather than handing back garbage.
	if err := mustCodec(t, "k2:"+k2, "").DataConverter().FromPayload(sealed, &out); !errors.Is(err, payloadcrypt.ErrUnknownKey) {
		t.Fatalf("data converter with unknown key: %v", err)
	}
}

func TestTamperingFails(t *testing.T) {
	k1, k2 := newKey(t), newKey(t)
	c := mustCodec(t, "k1:"+k1+",k2:"+k2, "k1")
	sealed, err := c.Encode([]*commonpb.Payload{{Metadata: map[string][]byte{"encoding": []byte("json/plain")}, Data: []byte(`"ada@example.com"`)}})
	if err != nil {
		t.Fatal(err)
	}
	flip := func(mod func(p *commonpb.Payload)) error {
		p := &commonpb.Payload{Metadata: map[string][]byte{}, Data: bytes.Clone(sealed[0].Data)}
		for k, v := range sealed[0].Metadata {
			p.Metadata[k] = bytes.Clone(v)
		}
		mod(p)
		_, err := c.Decode([]*commonpb.Payload{p})
		return err
	}
	cases := map[string]func(p *commonpb.Payload){
		"a changed byte":  func(p *commonpb.Payload) { p.Data[len(p.Data)-20] ^= 1 },
		"a changed nonce": func(p *commonpb.Payload) { p.Data[0] ^= 1 },
		"cut short":       func(p *commonpb.Payload) { p.Data = p.Data[:10] },
		"another key id":  func(p *commonpb.Payload) { p.Metadata[payloadcrypt.MetadataKeyID] = []byte("k2") },
	}
	for name, mod := range cases {
		if err := flip(mod); !errors.Is(err, payloadcrypt.ErrTampered) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := flip(func(*commonpb.Payload) {}); err != nil {
		t.Fatalf("untouched payload: %v", err)
	}
}

func TestPlainPayloadsPassThrough(t *testing.T) {
	c := mustCodec(t, payloadcrypt.DevKeys, "")
	plain, _ := converter.GetDefaultDataConverter().ToPayload("written before encryption")
	got, err := c.Decode([]*commonpb.Payload{plain})
	if err != nil || got[0] != plain {
		t.Fatalf("%v %v", got, err)
	}
}

func TestFailureMessagesAreEncrypted(t *testing.T) {
	c := mustCodec(t, "k1:"+newKey(t), "")
	f := c.FailureConverter().ErrorToFailure(errors.New("smtp: 550 no mailbox ada@example.com"))
	if strings.Contains(f.String(), "ada@example.com") {
		t.Fatalf("failure in clear: %s", f)
	}
	back := c.FailureConverter().FailureToError(f)
	if !strings.Contains(back.Error(), "ada@example.com") {
		t.Fatalf("failure does not decode: %v", back)
	}
}

func TestKeyRingErrors(t *testing.T) {
	k := newKey(t)
	for spec, want := range map[string]string{
		"":                         "no key",
		"k1":                       "id:base64key",
		"bad id!:" + k:             "id:base64key",
		"k1:" + k + ",k1:" + k:     "twice",
		"k1:c2hvcnQ=":              "32 bytes",
		"k1:not base64 at all ***": "base64",
	} {
		if _, err := payloadcrypt.New(spec, ""); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("New(%q): %v, want %q", spec, err, want)
		}
	}
	if _, err := payloadcrypt.New("k1:"+k, "k9"); err == nil || !strings.Contains(err.Error(), "TOCSIN_PAYLOAD_KEY_ID") {
		t.Errorf("current key outside the ring: %v", err)
	}
	c := mustCodec(t, "k1:"+k+",k2:"+newKey(t), "")
	if c.CurrentKeyID() != "k1" {
		t.Errorf("default current key %s, want the first", c.CurrentKeyID())
	}
}
