package directory

import (
	"bytes"
	"testing"
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
	s1, _ := NewSalt()
	s2, _ := NewSalt()
	if bytes.Equal(s1, s2) || bytes.Equal(HashCode(s1, "123456"), HashCode(s2, "123456")) {
		t.Fatal("salts do not vary the hash")
	}
	if !bytes.Equal(HashCode(s1, "123456"), HashCode(s1, "123456")) || bytes.Equal(HashCode(s1, "123456"), HashCode(s1, "123457")) {
		t.Fatal("hash is not a function of salt and code")
	}
	if bytes.Contains(HashCode(s1, "123456"), []byte("123456")) {
		t.Fatal("the hash contains the code")
	}
}
