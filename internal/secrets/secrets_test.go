package secrets_test

import (
	"bytes"
	"errors"
	"testing"
	"unicode/utf8"

	"github.com/tocsin/tocsin/internal/secrets"
)

func TestSealOpen(t *testing.T) {
	t.Parallel()
	b, err := secrets.New(secrets.DevKey)
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := b.Seal([]byte("api-token"), []byte("tenant/1/voice"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(sealed, []byte("api-token")) {
		t.Fatal("the plain text is visible")
	}
	again, _ := b.Seal([]byte("api-token"), []byte("tenant/1/voice"))
	if bytes.Equal(sealed, again) {
		t.Fatal("two seals of the same value are equal: the nonce is not random")
	}
	plain, err := b.Open(sealed, []byte("tenant/1/voice"))
	if err != nil || string(plain) != "api-token" {
		t.Fatalf("%q %v", plain, err)
	}
	other, _ := secrets.New("MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=")
	tampered := append([]byte(nil), sealed...)
	tampered[len(tampered)-1] ^= 1
	for name, open := range map[string]func() ([]byte, error){
		"other place": func() ([]byte, error) { return b.Open(sealed, []byte("tenant/2/voice")) },
		"other key":   func() ([]byte, error) { return other.Open(sealed, []byte("tenant/1/voice")) },
		"tampered":    func() ([]byte, error) { return b.Open(tampered, []byte("tenant/1/voice")) },
		"short":       func() ([]byte, error) { return b.Open([]byte{1, 2}, nil) },
	} {
		if _, err := open(); !errors.Is(err, secrets.ErrOpen) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestKeysAndMask(t *testing.T) {
	t.Parallel()
	for _, k := range []string{"", "not base64!", "c2hvcnQ="} {
		if _, err := secrets.New(k); err == nil {
			t.Errorf("key %q accepted", k)
		}
	}
	cases := map[string]string{"": "", "short": "****", "sk_live_1234567890abcd": "****abcd",
		// Characters, not bytes: never half a character, and a short value
		// of multi-byte characters shows nothing.
		"schlüssel-geheimnis-ä€": "****s-ä€", "ääääääääääö": "****", "token-\xff\xfe-abcdef": "****cdef", "abcdefghij-\xff": "****ij-\uFFFD"}
	for in, want := range cases {
		got := secrets.Mask(in)
		if got != want {
			t.Errorf("Mask(%q) = %q, want %q", in, got, want)
		}
		if !utf8.ValidString(got) {
			t.Errorf("Mask(%q) = %q is not valid UTF-8", in, got)
		}
	}
}

func TestDerive(t *testing.T) {
	a, err := secrets.Derive(secrets.DevKey, "workflow ids")
	if err != nil || len(a) != 32 {
		t.Fatalf("%v %d", err, len(a))
	}
	b, _ := secrets.Derive(secrets.DevKey, "workflow ids")
	c, _ := secrets.Derive(secrets.DevKey, "another purpose")
	d, _ := secrets.Derive("MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=", "workflow ids")
	if !bytes.Equal(a, b) || bytes.Equal(a, c) || bytes.Equal(a, d) {
		t.Fatal("derived keys are not stable per key and purpose")
	}
	if _, err := secrets.Derive("c2hvcnQ=", "workflow ids"); err == nil {
		t.Fatal("derived from a short key")
	}
}

func TestMaskURLMasksEveryPartThatCanCarryACredential(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"https://sms.example/send?sk_live_abc123":                        "https://sms.example/****?****c123",
		"https://sms.example/send?sk_live_abc123=":                       "https://sms.example/****?****123=",
		"https://user:pass@sms.example/":                                 "https://****:****@sms.example/",
		"https://sk_live_abcdefghij@sms.example":                         "https://****ghij@sms.example",
		"https://p.example/v1?key=abcdefghijkl&flag&empty=&a=1":          "https://p.example/****?key=****ijkl&****&****&a=****",
		"https://p.example/cb#access_token=abcdefghijklmnop":             "https://p.example/****#****mnop",
		"https://p.example/send;token=abcdefghijklmnop/x":                "https://p.example/****mnop/****",
		"https://hooks.chat.example/services/T000/B000/XXXXXXXXXXXXYYYY": "https://hooks.chat.example/****/****/****/****YYYY",
		"https://p.example:8443":                                         "https://p.example:8443",
		"https://p.example:8443/":                                        "https://p.example:8443/",
		"http://[2001:db8::1]:8080/a?b=c#":                               "http://[2001:db8::1]:8080/****?b=****#",
		"not a URL at all":                                               "****",
		"":                                                               "",
	} {
		if got := secrets.MaskURL(in); got != want {
			t.Errorf("MaskURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestKeepURLKeepsTheStoredURLOnlyForItsOwnMask(t *testing.T) {
	t.Parallel()
	const stored = "https://p.example/v1/send?api_key=sk_live_abcdefgh"
	masked := secrets.MaskURL(stored)
	for _, c := range []struct {
		sent, stored, want string
		refused            bool
	}{
		{sent: masked, stored: stored, want: stored},
		{sent: "https://p.example/v2/send?api_key=new", stored: stored, want: "https://p.example/v2/send?api_key=new"},
		{sent: "https://elsewhere.example/****/****?api_key=****efgh", stored: stored, refused: true},
		{sent: masked + "&region=eu", stored: stored, refused: true},
		{sent: masked, stored: "", refused: true},
	} {
		got, err := secrets.KeepURL(c.sent, c.stored)
		if c.refused != errors.Is(err, secrets.ErrMaskedURL) || got != c.want {
			t.Errorf("KeepURL(%q, %q) = %q, %v", c.sent, c.stored, got, err)
		}
	}
}
