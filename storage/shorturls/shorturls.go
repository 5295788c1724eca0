// Package shorturls stores shortened URLs: short, unguessable codes that
// /s/{code} redirects to their targets while counting clicks. Alert messages
// use them for detail and poll links, so codes are made in batches with one
// statement per batch.
package shorturls

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/tocsin/tocsin/internal/alertmsg"
	"github.com/tocsin/tocsin/storage"
)

// CodeLength is the number of base62 characters of a code: 62^8 is about
// 2.2e14 codes (47.6 bits), so guessing a live code is hopeless even with
// billions issued. Messages are sized with links of this length.
const CodeLength = alertmsg.ShortCodeLength

// MaxTargetLength is the longest target URL accepted.
const MaxTargetLength = 2048

// MaxBatch is the most targets one Create call takes.
const MaxBatch = 10000

const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// maxAttempts bounds the rounds of fresh codes after collisions; with 47.6
// bits per code a second round is already rare.
const maxAttempts = 5

// ErrExpired is returned by Follow for a code past its expiry.
var ErrExpired = errors.New("short URL expired")

// ShortURL is one shortened URL.
type ShortURL struct {
	Code          string     `db:"code"`
	TargetURL     string     `db:"target_url"`
	ExpiresAt     *time.Time `db:"expires_at"`
	Clicks        int64      `db:"clicks"`
	CreatedAt     time.Time  `db:"created_at"`
	LastClickedAt *time.Time `db:"last_clicked_at"`
	// Reused is true when the code already existed for the same target and expiry.
	Reused bool `db:"reused"`
}

// NewCode returns a random code of CodeLength base62 characters from
// crypto/rand, without modulo bias.
func NewCode() (string, error) {
	var b strings.Builder
	buf := make([]byte, CodeLength*2)
	for b.Len() < CodeLength {
		if _, err := rand.Read(buf); err != nil {
			return "", fmt.Errorf("random code: %w", err)
		}
		for _, c := range buf {
			if c < 248 && b.Len() < CodeLength { // 248 = 4*62: keep the distribution uniform
				b.WriteByte(alphabet[c%62])
			}
		}
	}
	return b.String(), nil
}

// ValidCode reports whether s has the shape of a code, so lookups of
// anything else can be answered without the database.
func ValidCode(s string) bool {
	if len(s) != CodeLength {
		return false
	}
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(alphabet, s[i]) < 0 {
			return false
		}
	}
	return true
}

// CheckTarget returns why target cannot be shortened, or nil: it must be an
// absolute http or https URL with a host and without user information, at
// most MaxTargetLength long.
func CheckTarget(target string) error {
	if len(target) > MaxTargetLength {
		return fmt.Errorf("longer than %d characters", MaxTargetLength)
	}
	u, err := url.Parse(target)
	if err != nil {
		return errors.New("not a URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return errors.New("only http and https URLs can be shortened")
	}
	if u.Host == "" || u.Hostname() == "" {
		return errors.New("the URL has no host")
	}
	if u.User != nil {
		return errors.New("the URL must not carry user information")
	}
	return nil
}

const createBatch = `WITH input AS (
		SELECT t.target, t.code, sha256(convert_to(t.target, 'UTF8')) AS hash
		FROM unnest($2::text[], $3::text[]) AS t(target, code)
	), ins AS (
		INSERT INTO short_urls (tenant_id, code, target_url, target_hash, expires_at)
		SELECT $1, code, target, hash, $4 FROM input
		ON CONFLICT DO NOTHING
		RETURNING code, target_url, expires_at, clicks, created_at, last_clicked_at, false AS reused
	)
	SELECT * FROM ins
	UNION ALL
	SELECT s.code, s.target_url, s.expires_at, s.clicks, s.created_at, s.last_clicked_at, true AS reused
	FROM input i JOIN short_urls s ON s.tenant_id = $1 AND s.target_hash = i.hash AND s.target_url = i.target
	    AND (s.expires_at = $4 OR (s.expires_at IS NULL AND $4::timestamptz IS NULL))`

// Create returns a short URL for each target, in the order of targets, with
// one statement per round: targets the tenant already shortened with the
// same expiry keep their code, the others get fresh codes, and the few
// whose fresh code collided with an existing one get another round.
// expiresAt (nil for never) must be in the future. q may be a transaction,
// so an alert can create its links together with its recipients.
func Create(ctx context.Context, q sqlx.QueryerContext, tenant string, targets []string, expiresAt *time.Time) ([]ShortURL, error) {
	if len(targets) > MaxBatch {
		return nil, fmt.Errorf("create short URLs: at most %d targets at once", MaxBatch)
	}
	for _, t := range targets {
		if err := CheckTarget(t); err != nil {
			return nil, fmt.Errorf("create short URLs: target %q: %w", t, err)
		}
	}
	var exp any
	if expiresAt != nil {
		e := expiresAt.UTC().Truncate(time.Microsecond)
		exp = e
	}
	found := make(map[string]ShortURL, len(targets))
	for attempt := 0; attempt < maxAttempts; attempt++ {
		var pending pq.StringArray
		seen := map[string]bool{}
		for _, t := range targets {
			if _, ok := found[t]; !ok && !seen[t] {
				seen[t] = true
				pending = append(pending, t)
			}
		}
		if len(pending) == 0 {
			break
		}
		codes := make(pq.StringArray, len(pending))
		for i := range codes {
			c, err := NewCode()
			if err != nil {
				return nil, err
			}
			codes[i] = c
		}
		var got []ShortURL
		if err := sqlx.SelectContext(ctx, q, &got, createBatch, tenant, pending, codes, exp); err != nil {
			return nil, fmt.Errorf("create short URLs: %w", err)
		}
		for _, s := range got {
			found[s.TargetURL] = s
		}
	}
	out := make([]ShortURL, len(targets))
	for i, t := range targets {
		s, ok := found[t]
		if !ok {
			return nil, fmt.Errorf("create short URLs: no free code after %d rounds", maxAttempts)
		}
		out[i] = s
	}
	return out, nil
}

// CreateShortURLs is Create for callers that only need the codes: the code
// of targets[i] is codes[i]. The link of a code is alertmsg.ShortLink(PublicURL, code).
func CreateShortURLs(ctx context.Context, q sqlx.QueryerContext, tenant string, targets []string, expiresAt *time.Time) (codes []string, err error) {
	urls, err := Create(ctx, q, tenant, targets, expiresAt)
	if err != nil {
		return nil, err
	}
	codes = make([]string, len(urls))
	for i, u := range urls {
		codes[i] = u.Code
	}
	return codes, nil
}

// Follow counts a click on code and returns its target. It returns
// storage.ErrNotFound for an unknown code and ErrExpired for an expired one
// (expired codes count no clicks).
func Follow(ctx context.Context, db sqlx.QueryerContext, code string) (string, error) {
	if !ValidCode(code) {
		return "", storage.ErrNotFound
	}
	var target string
	err := sqlx.GetContext(ctx, db, &target, `UPDATE short_urls SET clicks = clicks + 1, last_clicked_at = now()
		WHERE code = $1 AND (expires_at IS NULL OR expires_at > now()) RETURNING target_url`, code)
	if err == nil {
		return target, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("follow short URL: %w", err)
	}
	var exists bool
	if err := sqlx.GetContext(ctx, db, &exists, `SELECT EXISTS (SELECT 1 FROM short_urls WHERE code = $1)`, code); err != nil {
		return "", fmt.Errorf("follow short URL: %w", err)
	}
	if exists {
		return "", ErrExpired
	}
	return "", storage.ErrNotFound
}
