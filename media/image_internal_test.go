package media

import (
	"bytes"
	"errors"
	"image"
	"image/jpeg"
	"testing"
)

// The frame header is found past other segments and fill bytes; Go's
// encoder writes baseline JPEGs.
func TestIsProgressiveJPEG(t *testing.T) {
	var base bytes.Buffer
	if err := jpeg.Encode(&base, image.NewYCbCr(image.Rect(0, 0, 16, 16), image.YCbCrSubsampleRatio420), nil); err != nil {
		t.Fatal(err)
	}
	app := []byte{0xFF, 0xE1, 0, 6, 'E', 'x', 'i', 'f'}
	sof2 := []byte{0xFF, 0xFF, 0xC2, 0, 11, 8, 0, 16, 0, 16, 1, 1, 0x11, 0}
	for _, c := range []struct {
		name string
		b    []byte
		want bool
		err  bool
	}{
		{"baseline", base.Bytes(), false, false},
		{"progressive after APP1", append(append([]byte{0xFF, 0xD8}, app...), sof2...), true, false},
		{"segment past the end", append([]byte{0xFF, 0xD8}, 0xFF, 0xE1, 0xFF, 0xFF, 1), false, true},
		{"not a JPEG", []byte("GIF89a"), false, true},
	} {
		got, err := isProgressiveJPEG(bytes.NewReader(c.b))
		if got != c.want || (err != nil) != c.err || err != nil && !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, %v", c.name, got, err)
		}
	}
}
