package media

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"image"
	"image/color"
	_ "image/gif"  // GIF decoding
	_ "image/jpeg" // JPEG decoding
	_ "image/png"  // PNG decoding
	"io"
	"math"

	"github.com/disintegration/imaging"
	_ "golang.org/x/image/bmp"  // BMP decoding
	_ "golang.org/x/image/webp" // WebP decoding
)

// MaxPixels is the largest image (width × height) tocsin decodes.
const MaxPixels = 40_000_000

// MaxDecodedBytes is the most memory an image may take once decoded (its
// pixels times the bytes of each, as its header declares them): a 6300×6300
// PNG of 16-bit RGBA is under MaxPixels but decodes to 318 MB.
const MaxDecodedBytes = 128 << 20

// InspectImage reads an image's format and dimensions from its header.
func InspectImage(r io.Reader) (Details, error) {
	d, _, err := inspectImage(r)
	return d, err
}

func inspectImage(r io.Reader) (Details, image.Config, error) {
	cfg, format, err := image.DecodeConfig(r)
	if err != nil {
		return Details{}, cfg, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return Details{}, cfg, fmt.Errorf("%w: no pixels", ErrInvalid)
	}
	return Details{Format: format, Width: cfg.Width, Height: cfg.Height}, cfg, nil
}

// bytesPerPixel is what a pixel of the color model takes in memory once
// decoded: the most of it for YCbCr, whose chroma subsampling the header
// of a JPEG does not tell.
func bytesPerPixel(m color.Model) int64 {
	switch m {
	case color.GrayModel, color.AlphaModel:
		return 1
	case color.Gray16Model, color.Alpha16Model:
		return 2
	case color.YCbCrModel:
		return 3
	case color.RGBA64Model, color.NRGBA64Model:
		return 8
	}
	if _, ok := m.(color.Palette); ok {
		return 1
	}
	return 4 // RGBA, NRGBA, CMYK, NYCbCrA and the rest
}

// progressiveBytesPerPixel is what a pixel of a progressive JPEG takes
// while it is decoded: besides the decoded samples (one byte each), the
// decoder keeps every component's DCT coefficients, four bytes each, until
// the last scan.
func progressiveBytesPerPixel(m color.Model) int64 {
	switch m {
	case color.GrayModel:
		return 1 * (1 + 4)
	case color.CMYKModel:
		return 4 * (1 + 4)
	}
	return 3 * (1 + 4)
}

// jpegHeader is what tocsin reads of a JPEG before decoding it.
type jpegHeader struct {
	// progressive: the frame header is SOF2.
	progressive bool
	// orientation is the EXIF orientation (1-8), 1 when none is given.
	orientation int
}

// readJPEGHeader walks the segments of the JPEG in r before its frame
// header, the bytes image.DecodeConfig has just read, and stops at it: it
// tells whether the JPEG is progressive and reads the orientation of an
// EXIF segment (APP1) on the way.
func readJPEGHeader(r io.ReadSeeker) (jpegHeader, error) {
	h := jpegHeader{orientation: 1}
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return h, err
	}
	br := bufio.NewReader(r)
	var soi [2]byte
	if _, err := io.ReadFull(br, soi[:]); err != nil || soi != [2]byte{0xFF, 0xD8} {
		return h, fmt.Errorf("%w: no JPEG start of image", ErrInvalid)
	}
	for {
		b, err := br.ReadByte()
		if err != nil {
			return h, fmt.Errorf("%w: no JPEG frame header", ErrInvalid)
		}
		if b != 0xFF {
			continue // not a marker (DecodeConfig skips these bytes too)
		}
		m, err := br.ReadByte()
		for err == nil && m == 0xFF { // fill bytes
			m, err = br.ReadByte()
		}
		if err != nil {
			return h, fmt.Errorf("%w: no JPEG frame header", ErrInvalid)
		}
		switch {
		case m == 0x00 || m == 0x01 || m >= 0xD0 && m <= 0xD7:
			continue // no segment follows
		case m == 0xC2:
			h.progressive = true
			return h, nil
		case m >= 0xC0 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC, m == 0xDA, m == 0xD9:
			return h, nil // another frame header, or no frame header before the scan
		}
		var n [2]byte
		if _, err := io.ReadFull(br, n[:]); err != nil {
			return h, fmt.Errorf("%w: no JPEG frame header", ErrInvalid)
		}
		l := int(n[0])<<8 | int(n[1])
		if l < 2 {
			return h, fmt.Errorf("%w: bad JPEG segment length", ErrInvalid)
		}
		if m != 0xE1 {
			if _, err := br.Discard(l - 2); err != nil {
				return h, fmt.Errorf("%w: no JPEG frame header", ErrInvalid)
			}
			continue
		}
		seg := make([]byte, l-2)
		if _, err := io.ReadFull(br, seg); err != nil {
			return h, fmt.Errorf("%w: no JPEG frame header", ErrInvalid)
		}
		if o := exifOrientation(seg); o != 0 {
			h.orientation = o
		}
	}
}

// exifOrientation reads the Orientation tag (1-8) of the first image
// directory of an EXIF segment's payload, or returns 0 when there is none.
func exifOrientation(seg []byte) int {
	t, ok := bytes.CutPrefix(seg, []byte("Exif\x00\x00"))
	if !ok || len(t) < 8 {
		return 0
	}
	var bo binary.ByteOrder
	switch string(t[:2]) {
	case "II":
		bo = binary.LittleEndian
	case "MM":
		bo = binary.BigEndian
	default:
		return 0
	}
	off := int64(bo.Uint32(t[4:]))
	if bo.Uint16(t[2:]) != 42 || off < 8 || off+2 > int64(len(t)) {
		return 0
	}
	entries := t[off+2:]
	for range bo.Uint16(t[off:]) {
		if len(entries) < 12 {
			return 0
		}
		if bo.Uint16(entries) == 0x0112 { // Orientation, a SHORT
			if o := int(bo.Uint16(entries[8:])); o >= 1 && o <= 8 {
				return o
			}
			return 0
		}
		entries = entries[12:]
	}
	return 0
}

// checkDecodable refuses with ErrTooLarge an image that has more than
// MaxPixels pixels or would take more than MaxDecodedBytes decoded (for a
// progressive JPEG, its coefficients too). It returns the header of a
// JPEG, which it reads.
func checkDecodable(r io.ReadSeeker, d Details, cfg image.Config) (jpegHeader, error) {
	h := jpegHeader{orientation: 1}
	px := int64(d.Width) * int64(d.Height)
	if px > MaxPixels {
		return h, fmt.Errorf("%w: %d×%d is more than %d pixels", ErrTooLarge, d.Width, d.Height, MaxPixels)
	}
	bpp := bytesPerPixel(cfg.ColorModel)
	if d.Format == "jpeg" {
		var err error
		if h, err = readJPEGHeader(r); err != nil {
			return h, err
		}
		if h.progressive {
			bpp = progressiveBytesPerPixel(cfg.ColorModel)
		}
	}
	if px*bpp > MaxDecodedBytes {
		return h, fmt.Errorf("%w: %d×%d pixels of %d bytes each take %d MiB to decode, more than %d MiB",
			ErrTooLarge, d.Width, d.Height, bpp, (px*bpp)>>20, MaxDecodedBytes>>20)
	}
	return h, nil
}

// VerifyImage reads an image's details and decodes all of it, so a file
// whose header is fine but whose pixels are broken or missing is refused.
// Images over MaxPixels or MaxDecodedBytes are refused without decoding.
func VerifyImage(r io.ReadSeeker) (Details, error) {
	d, cfg, err := inspectImage(r)
	if err != nil {
		return d, err
	}
	if _, err := checkDecodable(r, d, cfg); err != nil {
		return Details{}, err
	}
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return Details{}, err
	}
	if _, _, err := image.Decode(r); err != nil {
		return Details{}, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	return d, nil
}

// Version describes the scaled-down version of an image ResizeImage wrote.
type Version struct {
	Details     Details
	ContentType string
}

// ResizeImage checks an image as VerifyImage does and returns its details,
// decoding it once; when it is wider than maxWidth as shown (its EXIF
// orientation applied), it also scales it down to maxWidth pixels wide,
// keeping its aspect ratio and applying the orientation, and writes it to
// w as JPEG (for JPEG input) or PNG (otherwise). The version is nil, and
// nothing is written, when the image is already at most maxWidth wide.
//
// The image is scaled straight from its decoded form (see scale): besides
// it, resizing holds the version and a few rows, and the decoded image is
// let go before the version is encoded.
func ResizeImage(r io.ReadSeeker, contentType string, maxWidth int, w io.Writer) (Details, *Version, error) {
	d, cfg, err := inspectImage(r)
	if err != nil {
		return Details{}, nil, err
	}
	h, err := checkDecodable(r, d, cfg)
	if err != nil {
		return Details{}, nil, err
	}
	out, err := decodeScaled(r, h.orientation, maxWidth)
	if err != nil {
		return Details{}, nil, err
	}
	if out == nil {
		return d, nil, nil
	}
	format, v := imaging.PNG, &Version{Details: Details{Format: "png"}, ContentType: PNG}
	if contentType == JPEG {
		format, v = imaging.JPEG, &Version{Details: Details{Format: "jpeg"}, ContentType: JPEG}
	}
	if err := imaging.Encode(w, out, format, imaging.JPEGQuality(90)); err != nil {
		return Details{}, nil, fmt.Errorf("encode resized image: %w", err)
	}
	v.Details.Width, v.Details.Height = out.Bounds().Dx(), out.Bounds().Dy()
	return d, v, nil
}

// decodeScaled decodes the image in r and, when it is wider than maxWidth
// once turned to the EXIF orientation, returns it scaled down to maxWidth
// pixels wide and turned; nil otherwise. The decoded image is not kept
// past it.
func decodeScaled(r io.ReadSeeker, orientation, maxWidth int) (*image.NRGBA, error) {
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	img, _, err := image.Decode(r)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	w, h := img.Bounds().Dx(), img.Bounds().Dy()
	if orientation >= 5 { // the orientations that swap width and height
		w, h = h, w
	}
	if w <= maxWidth {
		return nil, nil
	}
	// The height imaging.Resize gives for the width: aspect kept, at least 1.
	return scale(img, orientation, maxWidth, max(1, int(math.Floor(float64(maxWidth)*float64(h)/float64(w)+0.5)))), nil
}
