package delivery_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/api/model"
	"github.com/tocsin/tocsin/channels/etn"
	"github.com/tocsin/tocsin/internal/memtest"
	"github.com/tocsin/tocsin/internal/stacktest"
)

// pointsHeader is the header of a generated address-point list.
const pointsHeader = "phone,latitude,longitude,name,address\n"

// pointRow appends row i of a generated address-point list to dst: every
// row is pointRowBytes long, so the size of a file is known before it is
// written.
func pointRow(dst []byte, i int) []byte {
	return fmt.Appendf(dst, "+1555%07d,45.%06d,-122.%06d,Point %07d,%s\n", i, i, i, i, pointPadding)
}

// pointPadding pads each generated row's address.
var pointPadding = strings.Repeat("x", 117)

// pointRowBytes is the length of every pointRow.
var pointRowBytes = len(pointRow(nil, 0))

// pointsFile is a generated address-point list of rows rows, made as it is
// read, so that the client holds none of it: line 1 is the header, line
// i+2 is row i, which row appends to a buffer.
type pointsFile struct {
	rows int
	row  func(dst []byte, i int) []byte
	next int    // the next row; -1 before the header
	buf  []byte // what is left of the current line
	line []byte // the current line's storage
}

func newPointsFile(rows int, row func([]byte, int) []byte) *pointsFile {
	return &pointsFile{rows: rows, row: row, next: -1}
}

func (f *pointsFile) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if len(f.buf) == 0 {
			switch {
			case f.next == f.rows:
				if n == 0 {
					return 0, io.EOF
				}
				return n, nil
			case f.next < 0:
				f.line = append(f.line[:0], pointsHeader...)
			default:
				f.line = f.row(f.line[:0], f.next)
			}
			f.buf = f.line
			f.next++
		}
		k := copy(p[n:], f.buf)
		f.buf = f.buf[k:]
		n += k
	}
	return n, nil
}

// putPoints sends body, of size bytes (declared), as the list name.
func putPoints(t testing.TB, s *stacktest.Stack, token, name string, body io.Reader, size int64) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPut, s.URL+"/v2/settings/etn/addressPointLists/"+name, body)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = size
	req.Header.Set("Content-Type", "text/csv")
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := (&http.Client{Timeout: 2 * time.Minute}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b
}

// procStatus reads a kB field of /proc/self/status (VmRSS, VmHWM) in bytes.
func procStatus(field string) uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// BenchmarkEtnAddressPointImport imports a list of the most points a list
// may hold (200,000), each row padded so that the file is just under the
// operation's 32 MiB limit, through the API of this process, and reports
// what the process allocated per import (B/op), and how far the Go heap in
// use and the process's RSS (Linux: VmHWM, reset before each import) rose
// above what they were before it, at their peak.
func BenchmarkEtnAddressPointImport(b *testing.B) {
	s := stacktest.StartAPI(b)
	_, tok := s.NewTenant(b)
	const rows = 200_000
	size := int64(len(pointsHeader) + rows*pointRowBytes)
	if size > 32<<20 {
		b.Fatalf("the file is %d bytes, over the limit", size)
	}
	b.SetBytes(size)
	b.ReportAllocs()
	var heap, rss uint64
	for b.Loop() {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
		before := procStatus("VmRSS")
		stop := memtest.PeakHeap()
		status, body := putPoints(b, s, tok, "bench", newPointsFile(rows, pointRow), size)
		if peak := stop(); peak > ms.HeapInuse {
			heap = max(heap, peak-ms.HeapInuse)
		}
		if hwm := procStatus("VmHWM"); hwm > before {
			rss = max(rss, hwm-before)
		}
		if status != http.StatusOK || !bytes.Contains(body, []byte(`"imported":200000`)) {
			b.Fatalf("%d %.500s", status, body)
		}
	}
	b.ReportMetric(float64(heap)/(1<<20), "peak-heap-growth-MiB")
	b.ReportMetric(float64(rss)/(1<<20), "peak-RSS-growth-MiB")
}

// TestEtnAddressPointImportRefusesLateRowsAndKeepsTheList streams lists
// far larger than any buffer of the import (the 1 MiB row bound, the
// reader's and COPY's 64 KiB), whose rows are all points until one near
// the end refuses the file: the answer names that row's line, and the list
// keeps the points it had, although every point before was copied to the
// database on the way.
func TestEtnAddressPointImportRefusesLateRowsAndKeepsTheList(t *testing.T) {
	t.Parallel()
	s := stacktest.Shared(t)
	_, tok := s.NewTenant(t)
	if r := s.Do(t, http.MethodPut, "/v2/settings/etn/addressPointLists/wells", tok,
		strings.NewReader(pointsHeader+"+15550000001,45.0,-122.0,Well 1,\n+15550000002,45.1,-122.1,Well 2,\n"), "Content-Type", "text/csv"); r.Status != 200 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	const rows = 60_000 // about 10 MiB
	badAt := func(bad string) func([]byte, int) []byte {
		return func(dst []byte, i int) []byte {
			if i == rows-1 {
				return append(dst, bad...)
			}
			return pointRow(dst, i)
		}
	}
	lastLine := strconv.Itoa(rows + 1) // the header is line 1
	cases := []struct {
		name    string
		rows    int
		row     func([]byte, int) []byte
		message string
	}{
		{"a NUL character", rows, badAt("+15559999999,45.0,-122.0,Well\x00,\n"), "line " + lastLine + ": contains a NUL character"},
		{"bytes that are not UTF-8", rows, badAt("+15559999999,45.0,-122.0,Caf\xe9,\n"), "line " + lastLine + ": is not valid UTF-8"},
		{"a row longer than 1 MiB", rows, badAt("+15559999999,45.0,\"-122.0" + strings.Repeat(" ", 2<<20) + "\n"),
			"line " + lastLine + ": a row longer than 1 MiB (1048576 bytes) starts on this line"},
		{"one point too many", etn.MaxPointsPerList + 1, pointRow, fmt.Sprintf("a list holds at most %d points", etn.MaxPointsPerList)},
	}
	for _, c := range cases {
		size := int64(len(pointsHeader))
		for i := range c.rows {
			size += int64(len(c.row(nil, i)))
		}
		if size < 8<<20 {
			t.Fatalf("%s: the file is only %d bytes", c.name, size)
		}
		for _, declared := range []int64{size, -1} {
			status, body := putPoints(t, s, tok, "wells", newPointsFile(c.rows, c.row), declared)
			if status != http.StatusBadRequest || !strings.Contains(string(body), `"location":"body.csv"`) || !strings.Contains(string(body), c.message) {
				t.Errorf("%s (declared length %d): %d %.500s", c.name, declared, status, body)
			}
		}
	}
	wantOneList(t, s, tok, 2)
}

// TestEtnAddressPointImportOverTheLimitIs413: a list over the operation's
// 32 MiB limit is a 413, declared (before any of it is read) or chunked
// (once the limit is passed), and the list keeps its points.
func TestEtnAddressPointImportOverTheLimitIs413(t *testing.T) {
	t.Parallel()
	s := stacktest.Shared(t)
	_, tok := s.NewTenant(t)
	if r := s.Do(t, http.MethodPut, "/v2/settings/etn/addressPointLists/wells", tok,
		strings.NewReader(pointsHeader+"+15550000001,45.0,-122.0,Well 1,\n"), "Content-Type", "text/csv"); r.Status != 200 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	long := strings.Repeat("y", 1000)
	row := func(dst []byte, i int) []byte { return fmt.Appendf(dst, "+1555%07d,45.0,-122.0,Point,%s\n", i, long) }
	rows := (32<<20)/len(row(nil, 0)) + 10
	size := int64(len(pointsHeader) + rows*len(row(nil, 0)))
	for _, declared := range []int64{size, -1} {
		status, body := putPoints(t, s, tok, "wells", newPointsFile(rows, row), declared)
		if status != http.StatusRequestEntityTooLarge || !strings.Contains(string(body), "larger than this operation's limit of 33554432 bytes") {
			t.Errorf("declared length %d: %d %.500s", declared, status, body)
		}
	}
	wantOneList(t, s, tok, 1)
}

// wantOneList fails the test unless the tenant has one address-point list,
// of points points: what a refused import must leave as it was.
func wantOneList(t *testing.T, s *stacktest.Stack, tok string, points int) {
	t.Helper()
	var lists model.EtnAddressPointListsResponse
	s.Do(t, http.MethodGet, "/v2/settings/etn/addressPointLists", tok, nil).JSON(t, &lists)
	if len(lists.Items) != 1 || lists.Items[0].Points != points {
		t.Fatalf("the tenant's lists are %+v, want one of %d points", lists, points)
	}
}

// TestEtnAddressPointListsArePaged: the lists come in pages, as every list
// of the API does: page and pageSize (at most 500) with the totals, sorted
// by name unless sort names listName, points or importedAt.
func TestEtnAddressPointListsArePaged(t *testing.T) {
	t.Parallel()
	s := stacktest.Shared(t)
	_, tok := s.NewTenant(t)
	for i, name := range []string{"cedar", "ash", "birch"} {
		csv := pointsHeader
		for j := range i + 1 {
			csv += fmt.Sprintf("+1555%03d%04d,45.0,-122.0,Point,\n", i, j)
		}
		if r := s.Do(t, http.MethodPut, "/v2/settings/etn/addressPointLists/"+name, tok, strings.NewReader(csv), "Content-Type", "text/csv"); r.Status != 200 {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
	}
	page := func(query string) (names []string, p model.EtnAddressPointListsResponse) {
		t.Helper()
		r := s.Do(t, http.MethodGet, "/v2/settings/etn/addressPointLists"+query, tok, nil)
		if r.Status != http.StatusOK {
			t.Fatalf("%s: %d %s", query, r.Status, r.Body)
		}
		r.JSON(t, &p)
		for _, l := range p.Items {
			names = append(names, l.ListName)
		}
		return names, p
	}
	if names, p := page("?pageSize=2"); strings.Join(names, ",") != "ash,birch" || p.TotalCount != 3 || p.TotalPages != 2 || p.Page != 1 || p.PageSize != 2 {
		t.Errorf("first page %v %+v", names, p.Paging)
	}
	if names, _ := page("?pageSize=2&page=2"); strings.Join(names, ",") != "cedar" {
		t.Errorf("second page %v", names)
	}
	if names, p := page(""); len(names) != 3 || p.PageSize != 25 {
		t.Errorf("default page %v %+v", names, p.Paging)
	}
	if names, _ := page("?sort=-points"); strings.Join(names, ",") != "birch,ash,cedar" {
		t.Errorf("by points %v", names)
	}
	for query, field := range map[string]string{"?sort=size": "query.sort", "?pageSize=501": "query.pageSize"} {
		r := s.Do(t, http.MethodGet, "/v2/settings/etn/addressPointLists"+query, tok, nil)
		if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), `"location":"`+field+`"`) {
			t.Errorf("%s: %d %s", query, r.Status, r.Body)
		}
	}
}
