package directory

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"testing"

	"github.com/tocsin/tocsin/internal/secrets"
)

func TestCodesAreRandomDigitsAndOnlyHashed(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for range 200 {
		c, err := NewCode()
		if err != nil {
			t.Fatal(err)
		}
		if len(c) != CodeDigits || len(bytes.Trim([]byte(c), "0123456789")) != 0 {
			t.Fatalf("code %q", c)
		}
		seen[c] = true
	}
	if len(seen) < 190 {
		t.Fatalf("only %d distinct codes of 200", len(seen))
	}
	key, err := CodeKey(secrets.DevKey)
	if err != nil {
		t.Fatal(err)
	}
	s1, _ := NewSalt()
	s2, _ := NewSalt()
	if bytes.Equal(s1, s2) || bytes.Equal(HashCode(key, s1, "123456"), HashCode(key, s2, "123456")) {
		t.Fatal("salts do not vary the hash")
	}
	if !bytes.Equal(HashCode(key, s1, "123456"), HashCode(key, s1, "123456")) || bytes.Equal(HashCode(key, s1, "123456"), HashCode(key, s1, "123457")) {
		t.Fatal("hash is not a function of salt and code")
	}
	if bytes.Contains(HashCode(key, s1, "123456"), []byte("123456")) {
		t.Fatal("the hash contains the code")
	}
}

// A stored hash and salt alone do not give the code back: hashing every
// code with the salt finds none, and another secrets key gives another
// hash.
func TestCodeHashNeedsTheSecretsKey(t *testing.T) {
	t.Parallel()
	key, err := CodeKey(secrets.DevKey)
	if err != nil {
		t.Fatal(err)
	}
	other, err := CodeKey(base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32)))
	if err != nil {
		t.Fatal(err)
	}
	salt, _ := NewSalt()
	const code = "482913"
	stored := HashCode(key, salt, code)
	if bytes.Equal(HashCode(other, salt, code), stored) {
		t.Fatal("another secrets key gives the same hash")
	}
	for n := range 1_000_000 {
		guess := fmt.Sprintf("%0*d", CodeDigits, n)
		if sum := sha256.Sum256(append(salt[:len(salt):len(salt)], guess...)); bytes.Equal(sum[:], stored) {
			t.Fatalf("the code %s comes back from its salt and hash without the key", guess)
		}
	}
}
