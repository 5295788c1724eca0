package fileservice

import (
	"errors"
	"io"
	"strings"
	"testing"
)

func TestCappedReaderFailsPastTheCap(t *testing.T) {
	t.Parallel()
	b, err := io.ReadAll(&cappedReader{r: strings.NewReader("12345"), left: 6})
	if err != nil || string(b) != "12345" {
		t.Fatalf("within the cap: %q %v", b, err)
	}
	if _, err := io.ReadAll(&cappedReader{r: strings.NewReader("123456"), left: 5}); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("past the cap: %v", err)
	}
}

func TestExactReaderTellsAShortSource(t *testing.T) {
	t.Parallel()
	r := &exactReader{r: strings.NewReader("123456"), left: 4}
	if b, err := io.ReadAll(r); err != nil || string(b) != "1234" || r.short {
		t.Fatalf("longer source: %q %v short=%v", b, err, r.short)
	}
	r = &exactReader{r: strings.NewReader("12"), left: 4}
	if _, err := io.ReadAll(r); !errors.Is(err, io.ErrUnexpectedEOF) || !r.short || r.left != 2 {
		t.Fatalf("shorter source: %v short=%v left=%d", err, r.short, r.left)
	}
}
