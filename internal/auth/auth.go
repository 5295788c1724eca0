// Package auth verifies and mints the bearer tokens of tocsin's API.
//
// A token is a JWT with the claims sub (user), tenant (tenant id) and scope
// (space-separated scopes). Development uses an HS256 shared secret; a real
// identity provider's RS256/ES256 keys are fetched from a JWKS URL.
package auth

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"
)

// The scopes an operation may require.
const (
	ScopeTamarack        = "tamarack"
	ScopeContent         = "content"
	ScopeElm             = "elm"
	ScopeDirectoryPublic = "directory:public"
	// ScopeOperator lets a token read decoded Temporal payloads of every
	// tenant through the codec endpoint. Not granted by default.
	ScopeOperator = "operator"
)

// AllScopes lists every scope tocsin knows, in the order `tocsin token`
// grants them by default.
var AllScopes = []string{ScopeTamarack, ScopeContent, ScopeElm, ScopeDirectoryPublic}

// Principal is the verified caller of a request.
type Principal struct {
	Subject string
	Tenant  string
	Scopes  []string
}

// HasScope reports whether the principal was granted scope.
func (p Principal) HasScope(scope string) bool { return slices.Contains(p.Scopes, scope) }

// Claims are the JWT claims tocsin reads.
type Claims struct {
	Tenant string `json:"tenant"`
	Scope  string `json:"scope"`
	jwt.RegisteredClaims
}

// ErrInvalidToken wraps every reason a token is refused.
var ErrInvalidToken = errors.New("invalid token")

// Verifier checks bearer tokens.
type Verifier struct {
	secret   []byte
	jwks     keyfunc.Keyfunc
	issuer   string
	audience string
}

// VerifierConfig configures a Verifier. At least one of Secret and JWKSURL is needed.
type VerifierConfig struct {
	Secret   string
	JWKSURL  string
	Issuer   string
	Audience string
}

// NewVerifier builds a Verifier; with a JWKS URL it starts refreshing the key
// set in the background until ctx ends.
func NewVerifier(ctx context.Context, c VerifierConfig) (*Verifier, error) {
	v := &Verifier{secret: []byte(c.Secret), issuer: c.Issuer, audience: c.Audience}
	if c.JWKSURL != "" {
		k, err := keyfunc.NewDefaultCtx(ctx, []string{c.JWKSURL})
		if err != nil {
			return nil, fmt.Errorf("load JWKS %s: %w", c.JWKSURL, err)
		}
		v.jwks = k
	}
	if len(v.secret) == 0 && v.jwks == nil {
		return nil, errors.New("auth needs a secret or a JWKS URL")
	}
	return v, nil
}

func (v *Verifier) key(t *jwt.Token) (any, error) {
	switch t.Method.(type) {
	case *jwt.SigningMethodHMAC:
		if len(v.secret) == 0 {
			return nil, errors.New("HS256 tokens are not accepted")
		}
		return v.secret, nil
	default:
		if v.jwks == nil {
			return nil, fmt.Errorf("%s tokens need a JWKS URL", t.Method.Alg())
		}
		return v.jwks.Keyfunc(t)
	}
}

// Verify parses and checks a raw token and returns its principal.
func (v *Verifier) Verify(raw string) (Principal, error) {
	opts := []jwt.ParserOption{
		jwt.WithValidMethods([]string{"HS256", "RS256", "ES256"}),
		jwt.WithExpirationRequired(),
		jwt.WithLeeway(30 * time.Second),
	}
	if v.issuer != "" {
		opts = append(opts, jwt.WithIssuer(v.issuer))
	}
	if v.audience != "" {
		opts = append(opts, jwt.WithAudience(v.audience))
	}
	var c Claims
	if _, err := jwt.ParseWithClaims(raw, &c, v.key, opts...); err != nil {
		return Principal{}, fmt.Errorf("%w: %w", ErrInvalidToken, err)
	}
	for _, claim := range []struct{ name, value string }{{"tenant", c.Tenant}, {"sub", c.Subject}, {"scope", c.Scope}} {
		if strings.IndexByte(claim.value, 0) >= 0 {
			return Principal{}, &ClaimError{Claim: claim.name, Reason: "contains a NUL character"}
		}
		if !utf8.ValidString(claim.value) {
			return Principal{}, &ClaimError{Claim: claim.name, Reason: "is not valid UTF-8"}
		}
	}
	if c.Tenant == "" {
		return Principal{}, fmt.Errorf("%w: the tenant claim is missing", ErrInvalidToken)
	}
	if !CanonicalTenant(c.Tenant) {
		return Principal{}, fmt.Errorf("%w: the tenant claim must be a tenant id in decimal, without sign, spaces or leading zeros", ErrInvalidToken)
	}
	if c.Subject == "" {
		return Principal{}, fmt.Errorf("%w: the sub claim is missing", ErrInvalidToken)
	}
	return Principal{Subject: c.Subject, Tenant: c.Tenant, Scopes: strings.Fields(c.Scope)}, nil
}

// BearerToken is the token an Authorization header value carries in the
// Bearer scheme: the scheme's name in any case (RFC 9110 §11.1: an
// auth-scheme is case-insensitive, so "bearer" and "BEARER" are Bearer),
// then one or more spaces, then the token. ok is false for another scheme
// or a value without a token.
func BearerToken(header string) (token string, ok bool) {
	scheme, rest, found := strings.Cut(strings.TrimSpace(header), " ")
	if !found || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(rest)
	return token, token != ""
}

// ClaimError is a token whose claim holds what no tenant data may hold (a
// NUL character or invalid UTF-8): a bad request rather than a bad token.
type ClaimError struct {
	Claim, Reason string
}

// Error implements error.
func (e *ClaimError) Error() string { return "the " + e.Claim + " claim of the token " + e.Reason }

// CanonicalTenant reports whether s is a tenant id as tenants are numbered:
// a positive decimal number of at most 18 digits, without sign, spaces or
// leading zeros.
func CanonicalTenant(s string) bool {
	if s == "" || len(s) > 18 || s[0] == '0' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Mint signs an HS256 token for development and tests.
func Mint(secret string, p Principal, ttl time.Duration) (string, error) {
	now := time.Now()
	c := Claims{
		Tenant: p.Tenant,
		Scope:  strings.Join(p.Scopes, " "),
		RegisteredClaims: jwt.RegisteredClaims{
			Subject:   p.Subject,
			IssuedAt:  jwt.NewNumericDate(now),
			ExpiresAt: jwt.NewNumericDate(now.Add(ttl)),
		},
	}
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString([]byte(secret))
	if err != nil {
		return "", fmt.Errorf("sign token: %w", err)
	}
	return s, nil
}
