package csvheader_test

import (
	"encoding/csv"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/tocsin/tocsin/internal/csvheader"
)

// counting counts the bytes read from r.
type counting struct {
	r io.Reader
	n int64
}

func (c *counting) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// endless gives the bytes of s over and over (the tests take 8 MiB of it).
type endless struct {
	s string
	i int
}

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = e.s[e.i%len(e.s)]
		e.i++
	}
	return len(p), nil
}

// readAll reads every record of data, returning the line each starts on,
// and the error that ended the reading (nil at the end of the file).
func readAll(t *testing.T, r io.Reader) ([]int, error) {
	t.Helper()
	rd := csvheader.NewReader(r, func(c *csv.Reader) { c.LazyQuotes = true })
	var lines []int
	for {
		_, err := rd.Read()
		if errors.Is(err, io.EOF) {
			return lines, nil
		}
		if err != nil {
			return lines, err
		}
		line, _ := rd.FieldPos(0)
		lines = append(lines, line)
	}
}

// TestReaderBoundsARecordExactly: a record of MaxRecordBytes (its line
// breaks counted, empty lines before it not) is read; one byte more is a
// RecordTooLongError naming the line it starts on, and nothing after it is
// read.
func TestReaderBoundsARecordExactly(t *testing.T) {
	t.Parallel()
	const max = csvheader.MaxRecordBytes
	head := "\ufeffa,b\r\n1,2\r\n\r\n\n" // the record below starts on line 5
	quoted := func(size int) string {
		// a,"x…\r\nx…", CRLF: a field with a line break inside it.
		inner := size - len(`a,"`) - len("\r\n") - len(`"`) - len("\r\n")
		return `a,"` + strings.Repeat("x", inner/2) + "\r\n" + strings.Repeat("x", inner-inner/2) + `"` + "\r\n"
	}
	for name, c := range map[string]struct {
		record string
		ok     bool
	}{
		"one line at the bound":       {strings.Repeat("y", max-1) + "\n", true},
		"one line over the bound":     {strings.Repeat("y", max) + "\n", false},
		"quoted field at the bound":   {quoted(max), true},
		"quoted field over the bound": {quoted(max + 1), false},
		"no line break at the end":    {strings.Repeat("y", max+1), false},
	} {
		lines, err := readAll(t, strings.NewReader(head+c.record+"3,4\n"))
		if c.ok {
			if err != nil || len(lines) != 4 || lines[2] != 5 || lines[3] != 5+strings.Count(c.record, "\n") {
				t.Errorf("%s: lines %v, %v", name, lines, err)
			}
			continue
		}
		var long *csvheader.RecordTooLongError
		if !errors.As(err, &long) || long.Line != 5 || len(lines) != 2 {
			t.Errorf("%s: lines %v, %v; want a RecordTooLongError on line 5", name, lines, err)
		}
		if err != nil && err.Error() != "line 5: "+csvheader.RecordTooLongMessage {
			t.Errorf("%s: %q", name, err)
		}
	}
}

// TestReaderStopsReadingAtTheBound: a body with no line break, or a quoted
// field that never closes, is refused once its bytes pass the bound; the
// reader does not read on to the end, so it holds no more than the bound.
func TestReaderStopsReadingAtTheBound(t *testing.T) {
	t.Parallel()
	for name, body := range map[string]struct{ start, endless string }{
		"no line break":        {"", "z"},
		"a quote never closed": {"a,\"b\r\n", "c\r\n"},
	} {
		src := &counting{r: io.MultiReader(strings.NewReader("a,b\n1,2\n"+body.start), io.LimitReader(&endless{s: body.endless}, 8<<20))}
		rd := csvheader.NewReader(src, nil)
		var err error
		for range 3 {
			if _, err = rd.Read(); err != nil {
				break
			}
		}
		var long *csvheader.RecordTooLongError
		if !errors.As(err, &long) || long.Line != 3 {
			t.Fatalf("%s: %v, want a RecordTooLongError on line 3", name, err)
		}
		if src.n > csvheader.MaxRecordBytes+128<<10 {
			t.Errorf("%s: read %d bytes of the body", name, src.n)
		}
		if _, again := rd.Read(); again != err {
			t.Errorf("%s: the next Read gives %v", name, again)
		}
	}
}
