package storagetest

import (
	"context"
	"testing"
	"time"

	"github.com/tocsin/tocsin/storage"
)

// WaitBlocked waits until another session of db's database runs a
// statement containing text and waits for a lock, so a test can line up
// transactions in the order that races them. It fails the test after 30 s.
func WaitBlocked(t testing.TB, db *storage.DB, text string) {
	t.Helper()
	waitBackend(t, db, text, true)
}

// WaitRunning waits until another session of db's database runs a
// statement containing text. It fails the test after 30 s.
func WaitRunning(t testing.TB, db *storage.DB, text string) {
	t.Helper()
	waitBackend(t, db, text, false)
}

func waitBackend(t testing.TB, db *storage.DB, text string, blocked bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var n int
		if err := db.GetContext(context.Background(), &n, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND pid <> pg_backend_pid() AND state = 'active'
				AND strpos(query, $1) > 0 AND (NOT $2 OR wait_event_type = 'Lock')`, text, blocked); err != nil {
			t.Fatalf("read sessions: %v", err)
		}
		if n > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no session ran %q (waiting for a lock: %v) within 30 s", text, blocked)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
