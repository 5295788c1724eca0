package recipients_test

import (
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/api/model"
	"github.com/tocsin/tocsin/internal/config"
	"github.com/tocsin/tocsin/internal/stacktest"
)

// largeRow is row i of a generated file: every row has the same length, so
// the size of the file is known before it is written.
func largeRow(i int) string {
	note := strings.Repeat(string(rune('a'+i%26)), 950)
	return fmt.Sprintf("L%07d,Large,Row%07d,l%07d@example.com,%s\n", i, i, i, note)
}

const largeHeader = "externalId,firstName,lastName,emails,custom.note\n"

// postGenerated imports n generated rows over HTTP. With chunked the length
// is not declared. With stopAfter > 0 the body stops once more than
// stopAfter bytes of rows are written and waits for the answer: a server
// that refuses it must answer without the rest (and a close with unread
// bytes would reset the connection before the client reads the answer).
func postGenerated(t *testing.T, s *stacktest.Stack, tenant, token string, n int, chunked bool, stopAfter int64) (int, []byte, int64) {
	t.Helper()
	fileSize := int64(len(largeHeader)) + int64(n)*int64(len(largeRow(0)))
	declared := fileSize
	if chunked {
		declared = -1
	}
	status, body := streamImport(t, s, tenant, token, "large", declared, func(w io.Writer, answered <-chan struct{}) error {
		_, err := io.WriteString(w, largeHeader)
		written := int64(0)
		for i := 0; i < n && err == nil; i++ {
			if stopAfter > 0 && written > stopAfter {
				<-answered
				return io.ErrClosedPipe
			}
			var k int
			k, err = io.WriteString(w, largeRow(i))
			written += int64(k)
		}
		return err
	})
	return status, body, fileSize
}

// streamImport posts a createFromFile body for the list name whose file
// part write sends while the request goes out, and returns the answer.
// size, the file's length, is declared with Expect: 100-continue, as
// clients send large uploads; below 0 the body is chunked. answered is
// closed once the answer is read, so that write can wait for it.
func streamImport(t *testing.T, s *stacktest.Stack, tenant, token, name string, size int64, write func(w io.Writer, answered <-chan struct{}) error) (int, []byte) {
	t.Helper()
	answered := make(chan struct{})
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	head := "--" + mw.Boundary() + "\r\nContent-Disposition: form-data; name=\"name\"\r\n\r\n" + name + "\r\n" +
		"--" + mw.Boundary() + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"" + name + ".csv\"\r\nContent-Type: text/csv\r\n\r\n"
	tail := "\r\n--" + mw.Boundary() + "--\r\n"
	go func() {
		_, err := io.WriteString(pw, head)
		if err == nil {
			err = write(pw, answered)
		}
		if err == nil {
			_, err = io.WriteString(pw, tail)
		}
		pw.CloseWithError(err)
	}()
	req, err := http.NewRequest(http.MethodPost, fmt.Sprintf("%s/v4/%s/distributionLists/createFromFile", s.URL, tenant), pr)
	if err != nil {
		t.Fatal(err)
	}
	if size >= 0 {
		req.ContentLength = int64(len(head)) + size + int64(len(tail))
		req.Header.Set("Expect", "100-continue")
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	res, err := (&http.Client{Timeout: 2 * time.Minute}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	close(answered)
	_ = pr.CloseWithError(io.ErrClosedPipe)
	return res.StatusCode, body
}

// TestImportLargerThanTheFileLimitOverHTTP streams, with the default
// limits, a file just larger than the upload limit of other files (25 MiB):
// imports have their own, larger limit.
func TestImportLargerThanTheFileLimitOverHTTP(t *testing.T) {
	t.Parallel()
	s := stacktest.Start(t)
	def, err := config.Load()
	if err != nil {
		t.Fatal(err)
	}
	if s.Config.FileSizeLimit != def.FileSizeLimit || s.Config.ImportSizeLimit != 1<<30 {
		t.Fatalf("limits %d, %d are not the defaults", s.Config.FileSizeLimit, s.Config.ImportSizeLimit)
	}
	tenant, tok := s.NewTenant(t)
	n := int(s.Config.FileSizeLimit/int64(len(largeRow(0)))) + 100
	status, body, size := postGenerated(t, s, tenant, tok, n, false, 0)
	if size <= s.Config.FileSizeLimit {
		t.Fatalf("the file (%d bytes) is not larger than the file limit", size)
	}
	if status != http.StatusCreated {
		t.Fatalf("status %d: %s", status, body)
	}
	var res model.CreateDistributionListFromFileResponse
	if err := json.Unmarshal(body, &res); err != nil {
		t.Fatal(err)
	}
	if res.Rows != int64(n) || res.Created != int64(n) || res.Skipped != 0 || res.DistributionList.MemberCount != int64(n) {
		t.Fatalf("%d rows: %+v", n, res)
	}
	last := find(t, s, tok, "", map[string]any{"externalId": fmt.Sprintf("L%07d", n-1)})
	if last.Paging.TotalCount != 1 || last.Items[0].CustomFields["note"] != strings.Repeat(string(rune('a'+(n-1)%26)), 950) {
		t.Fatalf("last row: %+v", last)
	}
}

// TestImportOverTheImportLimitIs413 sends files over a small import limit:
// with the length declared (refused before the body is read) and chunked
// (refused once the limit is passed). Nothing is created.
func TestImportOverTheImportLimitIs413(t *testing.T) {
	t.Parallel()
	s := stacktest.Start(t, func(c *config.Config) { c.ImportSizeLimit = 1 << 20 })
	tenant, tok := s.NewTenant(t)
	for _, c := range []struct {
		name    string
		rows    int
		chunked bool
	}{
		{"declared length", 3 << 20 / 1000, false},
		{"chunked", 3 << 20 / 2000, true},
		{"declared, within the form allowance", 3 << 20 / 2000, false},
	} {
		stopAfter := s.Config.ImportSizeLimit + 64<<10
		if c.chunked {
			stopAfter = 0
		}
		status, body, size := postGenerated(t, s, tenant, tok, c.rows, c.chunked, stopAfter)
		if size <= s.Config.ImportSizeLimit || status != http.StatusRequestEntityTooLarge || !strings.Contains(string(body), "413") {
			t.Fatalf("%s: %d bytes: status %d: %s", c.name, size, status, body)
		}
	}
	r := s.Do(t, http.MethodGet, "/v4/"+tenant+"/distributionLists", tok, nil)
	if r.Status != 200 || !strings.Contains(string(r.Body), `"totalCount":0`) {
		t.Fatalf("lists after refused imports: %d %s", r.Status, r.Body)
	}
}
