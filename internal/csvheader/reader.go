package csvheader

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
)

// MaxRecordBytes bounds one record (one row, with the line breaks inside its
// quoted fields and the one that ends it) of an imported file. The largest
// row the contacts export writes (every limit of contactcsv at its most,
// 200 custom fields of 1,000 four-byte characters among 1,000 custom-field
// columns) is about 835 KB, as a test of contactcsv checks, so an exported
// file always imports again; an address point is a few hundred bytes.
const MaxRecordBytes = 1 << 20

// RecordTooLongMessage says what is wrong with a record longer than
// MaxRecordBytes; RecordTooLongError gives it with the record's line.
const RecordTooLongMessage = "a row longer than 1 MiB (1048576 bytes) starts on this line: a line break or a closing quote may be missing"

// RecordTooLongError is the error of a record longer than MaxRecordBytes.
// The reader cannot find where such a record ends (the closing quote of a
// field may be what is missing), so nothing after it is read: the file as
// a whole is refused.
type RecordTooLongError struct {
	// Line is the line the record starts on (the header is line 1).
	Line int
}

func (e *RecordTooLongError) Error() string {
	return fmt.Sprintf("line %d: %s", e.Line, RecordTooLongMessage)
}

// Reader reads the records of an imported CSV file with encoding/csv, and
// holds no record longer than MaxRecordBytes: a longer one is a
// *RecordTooLongError as soon as its bytes pass the bound (by at most one
// 4 KiB read), and nothing after it is read. So the memory a file can make
// the reader hold is bounded (a few times the bound: the csv reader's line,
// fields and record), whatever the file: one line of a gigabyte, or a
// quoted field that never closes.
type Reader struct {
	csv  *csv.Reader
	feed *lineFeed
}

// NewReader reads the CSV file in r. A UTF-8 byte order mark is skipped.
// configure, when not nil, sets the csv.Reader's options (FieldsPerRecord
// is -1 before it: the imports check field counts themselves); records must
// be read through the Reader, never the csv.Reader.
func NewReader(r io.Reader, configure func(*csv.Reader)) *Reader {
	f := &lineFeed{br: bufio.NewReaderSize(r, 64<<10), line: 1, max: MaxRecordBytes}
	if head, _ := f.br.Peek(3); bytes.Equal(head, []byte("\ufeff")) {
		_, _ = f.br.Discard(3)
	}
	cr := csv.NewReader(f)
	cr.FieldsPerRecord = -1
	if configure != nil {
		configure(cr)
	}
	return &Reader{csv: cr, feed: f}
}

// Sniff runs Sniff on the start of the file; call it before the first Read.
func (r *Reader) Sniff() error {
	head, _ := r.feed.br.Peek(SniffSize)
	return Sniff(head)
}

// Read returns the next record, as csv.Reader.Read does, or a
// *RecordTooLongError; after that error every Read returns it again.
func (r *Reader) Read() ([]string, error) {
	if r.feed.err != nil {
		return nil, r.feed.err
	}
	rec, err := r.csv.Read()
	if r.feed.err != nil {
		// The csv reader stopped inside the record, with an error of its own
		// or this one: the record is too long either way.
		return nil, r.feed.err
	}
	r.feed.next()
	return rec, err
}

// FieldPos is csv.Reader.FieldPos: the line and column where the given
// field of the record Read last returned starts.
func (r *Reader) FieldPos(field int) (line, column int) {
	return r.csv.FieldPos(field)
}

// lineFeed is what the csv reader reads from: it hands over at most one
// line at a time, so the csv reader's buffer never holds a byte of the
// next record, and every byte it has handed over since the last record
// belongs to the record being read (or to empty lines before it, which the
// csv reader skips). That makes size the exact length of the record so
// far; past max, the feed refuses to go on.
type lineFeed struct {
	br      *bufio.Reader
	max     int64
	err     error
	pending []byte // the rest of the line read from br, not handed over yet
	readErr error  // the error that ended reading br

	line    int   // the line of the next byte handed over
	started bool  // whether the current record's first byte has been handed over
	cr      bool  // whether the last byte handed over, before the record started, was a '\r'
	start   int   // the line the current record starts on
	size    int64 // the bytes of the current record handed over
}

func (f *lineFeed) Read(p []byte) (int, error) {
	if f.err != nil {
		return 0, f.err
	}
	if len(f.pending) == 0 {
		if f.readErr != nil {
			return 0, f.readErr
		}
		line, err := f.br.ReadSlice('\n')
		if err != nil && err != bufio.ErrBufferFull {
			f.readErr = err
		}
		if len(line) == 0 {
			return 0, f.readErr
		}
		f.pending = line
	}
	n := copy(p, f.pending)
	f.pending = f.pending[n:]
	f.account(p[:n])
	if f.size > f.max {
		f.err = &RecordTooLongError{Line: f.start}
		return n, f.err
	}
	return n, nil
}

// account counts the bytes b (at most one line: a '\n' only at its end)
// into the current record. Empty lines ("\n" or "\r\n") before the record
// are not part of it, as the csv reader skips them.
func (f *lineFeed) account(b []byte) {
	if len(b) == 0 {
		return
	}
	if !f.started {
		i := 0
		for ; i < len(b); i++ {
			if b[i] == '\n' {
				f.line++
				f.cr = false
			} else if b[i] == '\r' && !f.cr {
				f.cr = true
			} else {
				break
			}
		}
		if i == len(b) {
			return
		}
		f.started, f.start, f.size = true, f.line, 0
		if f.cr {
			f.size = 1 // the '\r' before is the record's
		}
		b = b[i:]
	}
	f.size += int64(len(b))
	if b[len(b)-1] == '\n' {
		f.line++
	}
}

// next starts a new record: the csv reader has returned the last one, and
// handed over no byte past it.
func (f *lineFeed) next() {
	f.started, f.cr, f.size = false, false, 0
}
