package shorturls_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/shorturls"
)

func TestCreateShortURLsInBatches(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, _ := stacktest.DBTenants(t)
	targets := make([]string, 2000)
	for i := range targets {
		targets[i] = fmt.Sprintf("https://alerts.example.com/poll/42?r=%d", i/2) // every target twice
	}
	exp := time.Now().Add(24 * time.Hour)
	codes, err := shorturls.CreateShortURLs(ctx, db, tenant, targets, &exp)
	if err != nil {
		t.Fatal(err)
	}
	distinct := map[string]bool{}
	for i, c := range codes {
		if !shorturls.ValidCode(c) {
			t.Fatalf("code %q", c)
		}
		if i%2 == 1 && c != codes[i-1] {
			t.Fatalf("the same target got two codes: %s %s", codes[i-1], c)
		}
		distinct[c] = true
	}
	if len(distinct) != 1000 {
		t.Fatalf("%d distinct codes for 1000 targets", len(distinct))
	}
	again, err := shorturls.CreateShortURLs(ctx, db, tenant, targets[:10], &exp)
	if err != nil || strings.Join(again, ",") != strings.Join(codes[:10], ",") {
		t.Fatalf("a second batch did not reuse the codes: %v %v", again, err)
	}
	var stored int
	if err := db.Get(&stored, `SELECT count(*) FROM short_urls WHERE tenant_id = $1`, tenant); err != nil || stored != 1000 {
		t.Fatalf("%d rows, %v", stored, err)
	}
	// Inside a transaction, as alerts create them with their recipients.
	tx := db.MustBegin()
	if _, err := shorturls.CreateShortURLs(ctx, tx, tenant, []string{"https://x.example.com/1"}, nil); err != nil {
		t.Fatal(err)
	}
	_ = tx.Rollback()
	if _, err := shorturls.CreateShortURLs(ctx, db, tenant, []string{"mailto:a@example.com"}, nil); err == nil {
		t.Fatal("a mailto target was accepted")
	}
}

func TestNewCodeIsRandomBase62(t *testing.T) {
	seen := map[string]bool{}
	for range 10000 {
		c, err := shorturls.NewCode()
		if err != nil || !shorturls.ValidCode(c) || seen[c] {
			t.Fatalf("code %q %v (repeat %v)", c, err, seen[c])
		}
		seen[c] = true
	}
}

func TestFollowCountsLiveLinksOnly(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, _ := stacktest.DBTenants(t)
	past := time.Now().Add(-time.Minute)
	codes, err := shorturls.CreateShortURLs(ctx, db, tenant, []string{"https://a.example.com/live", "https://a.example.com/gone"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	expired, err := shorturls.CreateShortURLs(ctx, db, tenant, []string{"https://a.example.com/gone"}, &past)
	if err != nil {
		t.Fatal(err)
	}
	if target, err := shorturls.Follow(ctx, db, codes[0]); err != nil || target != "https://a.example.com/live" {
		t.Fatalf("follow %q %v", target, err)
	}
	if _, err := shorturls.Follow(ctx, db, expired[0]); !errors.Is(err, shorturls.ErrExpired) {
		t.Fatalf("an expired link: %v", err)
	}
	if _, err := shorturls.Follow(ctx, db, "zzzzzzzz"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("an unknown code: %v", err)
	}
	clicks := map[string]int{}
	for _, c := range []string{codes[0], codes[1], expired[0]} {
		var n int
		if err := db.GetContext(ctx, &n, `SELECT clicks FROM short_urls WHERE code = $1`, c); err != nil {
			t.Fatal(err)
		}
		clicks[c] = n
	}
	if clicks[codes[0]] != 1 || clicks[codes[1]] != 0 || clicks[expired[0]] != 0 {
		t.Fatalf("clicks %v: want 1 on the followed live link and none on the others", clicks)
	}
}
