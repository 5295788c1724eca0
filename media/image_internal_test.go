package media

import (
	"bytes"
	"errors"
	"image"
	"image/jpeg"
	"testing"
)

// The frame header is found past other segments and fill bytes; Go's
// encoder writes baseline JPEGs. An EXIF segment before it gives the
// orientation, in either byte order.
func TestReadJPEGHeader(t *testing.T) {
	var base bytes.Buffer
	if err := jpeg.Encode(&base, image.NewYCbCr(image.Rect(0, 0, 16, 16), image.YCbCrSubsampleRatio420), nil); err != nil {
		t.Fatal(err)
	}
	app := []byte{0xFF, 0xE1, 0, 6, 'E', 'x', 'i', 'f'}
	sof2 := []byte{0xFF, 0xFF, 0xC2, 0, 11, 8, 0, 16, 0, 16, 1, 1, 0x11, 0}
	// APP1 segments whose IFD0 holds another tag, then Orientation.
	exif := func(order string, o byte) []byte {
		ifd := map[string][]byte{
			"MM": {'M', 'M', 0, 42, 0, 0, 0, 8, 0, 2, 1, 0x0F, 0, 2, 0, 0, 0, 4, 'a', 'b', 'c', 0, 1, 0x12, 0, 3, 0, 0, 0, 1, 0, o, 0, 0, 0, 0, 0, 0},
			"II": {'I', 'I', 42, 0, 8, 0, 0, 0, 2, 0, 0x0F, 1, 2, 0, 4, 0, 0, 0, 'a', 'b', 'c', 0, 0x12, 1, 3, 0, 1, 0, 0, 0, o, 0, 0, 0, 0, 0, 0, 0},
		}[order]
		payload := append([]byte("Exif\x00\x00"), ifd...)
		return append([]byte{0xFF, 0xE1, 0, byte(len(payload) + 2)}, payload...)
	}
	soi := []byte{0xFF, 0xD8}
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	for _, c := range []struct {
		name        string
		b           []byte
		progressive bool
		orientation int
		err         bool
	}{
		{"baseline", base.Bytes(), false, 1, false},
		{"progressive after APP1", cat(soi, app, sof2), true, 1, false},
		{"big-endian EXIF", cat(soi, exif("MM", 6), base.Bytes()[2:]), false, 6, false},
		{"little-endian EXIF", cat(soi, exif("II", 8), sof2), true, 8, false},
		{"an orientation out of range", cat(soi, exif("MM", 9), sof2), true, 1, false},
		{"segment past the end", append([]byte{0xFF, 0xD8}, 0xFF, 0xE1, 0xFF, 0xFF, 1), false, 1, true},
		{"not a JPEG", []byte("GIF89a"), false, 1, true},
	} {
		got, err := readJPEGHeader(bytes.NewReader(c.b))
		if got.progressive != c.progressive || got.orientation != c.orientation || (err != nil) != c.err || err != nil && !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %+v, %v", c.name, got, err)
		}
	}
}
