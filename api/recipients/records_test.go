package recipients_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/stacktest"
)

// postHeld streams file as the file part of a createFromFile body (its
// length declared, with Expect: 100-continue, as clients send large files).
// After the first hold bytes of the file the body waits for the answer, up
// to wait, and only then sends the rest. early reports whether the answer
// came while the body waited: the server did not need the rest of the file.
func postHeld(t *testing.T, s *stacktest.Stack, tenant, token, file string, hold int, wait time.Duration) (status int, body string, early bool) {
	t.Helper()
	done := make(chan bool, 1)
	code, b := streamImport(t, s, tenant, token, "held", int64(len(file)), func(w io.Writer, answered <-chan struct{}) error {
		if _, err := io.WriteString(w, file[:hold]); err != nil {
			done <- false
			return err
		}
		select {
		case <-answered:
			done <- true
			return io.ErrClosedPipe
		case <-time.After(wait):
			done <- false
			_, err := io.WriteString(w, file[hold:])
			return err
		}
	})
	return code, string(b), <-done
}

// TestCreateFromFileRefusesARowLongerThanTheBound: a row longer than 1 MiB
// — a file with no line break, or a quoted field that runs on — refuses
// the file with a 400 naming the line the row starts on, and changes
// nothing. The server answers once the row passes the bound, without
// reading the rest of the file: it never holds the row.
func TestCreateFromFileRefusesARowLongerThanTheBound(t *testing.T) {
	t.Parallel()
	s := stacktest.Shared(t)
	tenant, tok := s.NewTenant(t)
	var good strings.Builder
	good.WriteString("externalId,firstName,lastName,custom.note\r\n") // line 1
	for i := 2; i <= 100; i++ {
		fmt.Fprintf(&good, "G%d,Good,Row,\"a note\r\nover two lines\"\r\n", i) // lines 2-199
	}
	good.WriteString("\r\n") // line 200
	// The body waits after 3 MiB of the long row: the server reads a little
	// over 1 MiB of it, and reads up to 1 MiB more of what the operation left
	// unread before it answers (api/bodies.go, drainLimit).
	const held = 3 << 20
	for name, long := range map[string]string{
		"no line break":          "L1,Long,Row," + strings.Repeat("x", 5<<20),
		"a quoted field runs on": "L1,Long,Row,\"a quote never closed" + strings.Repeat("\r\nmore,of,the,note", 5<<20/18) + "\r\nG9,Good,Row,\r\n",
	} {
		start := time.Now()
		status, body, early := postHeld(t, s, tenant, tok, good.String()+long, good.Len()+held, 20*time.Second)
		if status != http.StatusBadRequest || !strings.Contains(body, `"location":"body.file"`) ||
			!strings.Contains(body, "line 201: a row longer than 1 MiB (1048576 bytes) starts on this line") {
			t.Fatalf("%s: %d %s", name, status, body)
		}
		if !early {
			t.Errorf("%s: the server answered only after the whole file (%s)", name, time.Since(start))
		}
	}
	if n := contactCount(t, s, tenant); n != 0 {
		t.Fatalf("a refused file created %d contacts", n)
	}
	if n := listCount(t, s, tenant); n != 0 {
		t.Fatalf("a refused file made %d lists", n)
	}
}
