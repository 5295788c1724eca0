package secrets_test

import (
	"bytes"
	"testing"

	"github.com/tocsin/tocsin/internal/secrets"
)

func TestSealOpen(t *testing.T) {
	b, err := secrets.New("k1")
	if err != nil {
		t.Fatal(err)
	}
	other, _ := secrets.New("k2")
	sealed, err := b.Seal([]byte("whsec_abc"), []byte("tenant-1"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(sealed, []byte("whsec_abc")) {
		t.Fatal("plaintext visible in the ciphertext")
	}
	cases := []struct {
		name string
		box  *secrets.Box
		ad   string
		ok   bool
	}{
		{"same key and owner", b, "tenant-1", true},
		{"another owner", b, "tenant-2", false},
		{"another key", other, "tenant-1", false},
	}
	for _, c := range cases {
		got, err := c.box.Open(sealed, []byte(c.ad))
		if c.ok != (err == nil) || (c.ok && string(got) != "whsec_abc") {
			t.Errorf("%s: %q %v", c.name, got, err)
		}
	}
	if _, err := b.Open([]byte("x"), nil); err == nil {
		t.Error("opened garbage")
	}
	if _, err := secrets.New(""); err == nil {
		t.Error("accepted an empty key")
	}
}
