package storage_test

import (
	"testing"

	"github.com/tocsin/tocsin/internal/emailaddr"
	"github.com/tocsin/tocsin/internal/stacktest"
)

// TestEmailAddressesGetTheirQuotesBack: the migration that quotes the local
// parts the directory stored without their quotes gives each the spelling
// emailaddr.Normalize gives it now, in the people's addresses, their
// verifications and nonces, and leaves every other address as it is.
func TestEmailAddressesGetTheirQuotesBack(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, _ := stacktest.DBTenants(t)
	var person int64
	if err := db.GetContext(ctx, &person, `INSERT INTO people (tenant_id, directory_id) VALUES ($1, 'staff') RETURNING id`, tenant); err != nil {
		t.Fatal(err)
	}
	// What the directory stored for what it was given.
	stored := map[string]string{
		`"a b"@example.com`:    "a b@example.com",
		`"a@b"@example.com`:    "a@b@example.com",
		`"a..b"@example.com`:   "a..b@example.com",
		`"a\"b"@example.com`:   `a"b@example.com`,
		`"a\\b"@example.com`:   `a\b@example.com`,
		`".ada"@example.com`:   ".ada@example.com",
		"ada@example.com":      "ada@example.com",
		"o'neil+x@example.com": "o'neil+x@example.com",
		"ünï@example.com":      "ünï@example.com",
	}
	for _, addr := range stored {
		if _, err := db.ExecContext(ctx, `INSERT INTO person_emails (tenant_id, person_id, address) VALUES ($1, $2, $3)`, tenant, person, addr); err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(ctx, `INSERT INTO directory_verifications (tenant_id, person_id, kind, address) VALUES ($1, $2, 'email', $3)`, tenant, person, addr); err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(ctx, `INSERT INTO directory_verification_nonces (tenant_id, person_id, kind, address, nonce, expires_at)
			VALUES ($1, $2, 'email', $3, 'nonce-1', now())`, tenant, person, addr); err != nil {
			t.Fatal(err)
		}
	}

	runMigrationUp(ctx, t, db, "00603_email_local_part_quotes.sql")
	for given, was := range stored {
		want, err := emailaddr.Normalize(given)
		if err != nil {
			t.Fatalf("%s: %v", given, err)
		}
		for _, table := range []string{"person_emails", "directory_verifications", "directory_verification_nonces"} {
			var n int
			if err := db.GetContext(ctx, &n, `SELECT count(*) FROM `+table+` WHERE person_id = $1 AND address = $2`, person, want); err != nil {
				t.Fatal(err)
			}
			if n != 1 {
				t.Errorf("%s: %q (stored as %q) is not %q", table, given, was, want)
			}
		}
	}
}
