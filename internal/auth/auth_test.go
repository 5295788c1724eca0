package auth_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math/big"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/tocsin/tocsin/internal/auth"
)

func TestMintAndVerifyHS256(t *testing.T) {
	t.Parallel()
	v, err := auth.NewVerifier(context.Background(), auth.VerifierConfig{Secret: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	want := auth.Principal{Subject: "ann", Tenant: "1001", Scopes: []string{"tamarack", "content"}}
	tok, err := auth.Mint("s3cret", want, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	got, err := v.Verify(tok)
	if err != nil {
		t.Fatal(err)
	}
	if got.Subject != "ann" || got.Tenant != "1001" || !got.HasScope("content") || got.HasScope("elm") {
		t.Fatalf("%+v", got)
	}
	for name, raw := range map[string]string{
		"expired":   must(auth.Mint("s3cret", want, -time.Minute)),
		"forged":    must(auth.Mint("other", want, time.Minute)),
		"no tenant": must(auth.Mint("s3cret", auth.Principal{Subject: "ann"}, time.Minute)),
		"garbage":   "a.b.c",
		"alg none":  must(jwt.NewWithClaims(jwt.SigningMethodNone, jwt.MapClaims{"sub": "x", "tenant": "1", "exp": time.Now().Add(time.Hour).Unix()}).SignedString(jwt.UnsafeAllowNoneSignatureType)),
	} {
		if _, err := v.Verify(raw); !errors.Is(err, auth.ErrInvalidToken) {
			t.Errorf("%s: err %v, want ErrInvalidToken", name, err)
		}
	}
}

func must(s string, err error) string {
	if err != nil {
		panic(err)
	}
	return s
}

// TestVerifyRS256FromJWKS checks tokens of a real identity provider: keys
// come from its JWKS endpoint and HS256 tokens are refused without a secret.
func TestVerifyRS256FromJWKS(t *testing.T) {
	t.Parallel()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	b64 := base64.RawURLEncoding.EncodeToString
	jwks := map[string]any{"keys": []map[string]string{{
		"kty": "RSA", "kid": "k1", "use": "sig", "alg": "RS256",
		"n": b64(key.N.Bytes()), "e": b64(big.NewInt(int64(key.E)).Bytes()),
	}}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(jwks)
	}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	v, err := auth.NewVerifier(ctx, auth.VerifierConfig{JWKSURL: srv.URL, Issuer: "https://idp.example", Audience: "tocsin"})
	if err != nil {
		t.Fatal(err)
	}
	claims := jwt.MapClaims{
		"sub": "svc", "tenant": "77", "scope": "tamarack elm", "iss": "https://idp.example", "aud": "tocsin",
		"exp": time.Now().Add(time.Hour).Unix(),
	}
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, claims)
	tok.Header["kid"] = "k1"
	raw, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	p, err := v.Verify(raw)
	if err != nil {
		t.Fatal(err)
	}
	if p.Tenant != "77" || !p.HasScope("elm") {
		t.Fatalf("%+v", p)
	}
	claims["aud"] = "someone-else"
	wrongAud, _ := jwt.NewWithClaims(jwt.SigningMethodRS256, claims).SignedString(key)
	if _, err := v.Verify(wrongAud); err == nil {
		t.Fatal("accepted a token for another audience")
	}
	hs, _ := auth.Mint("anything", auth.Principal{Subject: "x", Tenant: "77"}, time.Minute)
	if _, err := v.Verify(hs); err == nil {
		t.Fatal("accepted HS256 without a configured secret")
	}
}

// TestTenantClaimIsCanonicalDecimal: a tenant claim is a tenant id spelled
// one way; claims holding NUL or invalid UTF-8 are a *ClaimError naming the
// claim.
func TestTenantClaimIsCanonicalDecimal(t *testing.T) {
	v, err := auth.NewVerifier(context.Background(), auth.VerifierConfig{Secret: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	verify := func(p auth.Principal) error {
		tok, err := auth.Mint("s3cret", p, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		_, err = v.Verify(tok)
		return err
	}
	for _, tenant := range []string{"abc", "04001", "4001 ", " 4001", "-1", "+1", "0", "1e3", "4001\n", "12345678901234567890"} {
		if err := verify(auth.Principal{Subject: "u", Tenant: tenant}); !errors.Is(err, auth.ErrInvalidToken) {
			t.Errorf("tenant %q: %v", tenant, err)
		}
	}
	if err := verify(auth.Principal{Subject: "u", Tenant: "4001"}); err != nil {
		t.Fatal(err)
	}
	for claim, p := range map[string]auth.Principal{
		"tenant": {Subject: "u", Tenant: "40\x0001"},
		"sub":    {Subject: "u\x00", Tenant: "4001"},
		"scope":  {Subject: "u", Tenant: "4001", Scopes: []string{"a\x00"}},
	} {
		var ce *auth.ClaimError
		if err := verify(p); !errors.As(err, &ce) || ce.Claim != claim {
			t.Errorf("%s: %v", claim, err)
		}
	}
}
