package media

import (
	"bufio"
	"fmt"
	"image"
	"image/color"
	_ "image/gif"  // GIF decoding
	_ "image/jpeg" // JPEG decoding
	_ "image/png"  // PNG decoding
	"io"

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

// isProgressiveJPEG reports whether the JPEG in r is progressive (its frame
// header is SOF2). It walks the segments before the frame header, the bytes
// image.DecodeConfig has just read, and stops at it.
func isProgressiveJPEG(r io.ReadSeeker) (bool, error) {
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return false, err
	}
	br := bufio.NewReader(r)
	var soi [2]byte
	if _, err := io.ReadFull(br, soi[:]); err != nil || soi != [2]byte{0xFF, 0xD8} {
		return false, fmt.Errorf("%w: no JPEG start of image", ErrInvalid)
	}
	for {
		b, err := br.ReadByte()
		if err != nil {
			return false, fmt.Errorf("%w: no JPEG frame header", ErrInvalid)
		}
		if b != 0xFF {
			continue // not a marker (DecodeConfig skips these bytes too)
		}
		m, err := br.ReadByte()
		for err == nil && m == 0xFF { // fill bytes
			m, err = br.ReadByte()
		}
		if err != nil {
			return false, fmt.Errorf("%w: no JPEG frame header", ErrInvalid)
		}
		switch {
		case m == 0x00 || m == 0x01 || m >= 0xD0 && m <= 0xD7:
			continue // no segment follows
		case m == 0xC2:
			return true, nil
		case m >= 0xC0 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC, m == 0xDA, m == 0xD9:
			return false, nil // another frame header, or no frame header before the scan
		}
		var n [2]byte
		if _, err := io.ReadFull(br, n[:]); err != nil {
			return false, fmt.Errorf("%w: no JPEG frame header", ErrInvalid)
		}
		if l := int(n[0])<<8 | int(n[1]); l < 2 {
			return false, fmt.Errorf("%w: bad JPEG segment length", ErrInvalid)
		} else if _, err := br.Discard(l - 2); err != nil {
			return false, fmt.Errorf("%w: no JPEG frame header", ErrInvalid)
		}
	}
}

// checkDecodable refuses with ErrTooLarge an image that has more than
// MaxPixels pixels or would take more than MaxDecodedBytes decoded (for a
// progressive JPEG, its coefficients too).
func checkDecodable(r io.ReadSeeker, d Details, cfg image.Config) error {
	px := int64(d.Width) * int64(d.Height)
	if px > MaxPixels {
		return fmt.Errorf("%w: %d×%d is more than %d pixels", ErrTooLarge, d.Width, d.Height, MaxPixels)
	}
	bpp := bytesPerPixel(cfg.ColorModel)
	if d.Format == "jpeg" {
		progressive, err := isProgressiveJPEG(r)
		if err != nil {
			return err
		}
		if progressive {
			bpp = progressiveBytesPerPixel(cfg.ColorModel)
		}
	}
	if px*bpp > MaxDecodedBytes {
		return fmt.Errorf("%w: %d×%d pixels of %d bytes each take %d MiB to decode, more than %d MiB",
			ErrTooLarge, d.Width, d.Height, bpp, (px*bpp)>>20, MaxDecodedBytes>>20)
	}
	return nil
}

// VerifyImage reads an image's details and decodes all of it, so a file
// whose header is fine but whose pixels are broken or missing is refused.
// Images over MaxPixels or MaxDecodedBytes are refused without decoding.
func VerifyImage(r io.ReadSeeker) (Details, error) {
	d, cfg, err := inspectImage(r)
	if err != nil {
		return d, err
	}
	if err := checkDecodable(r, d, cfg); err != nil {
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

// ResizeImage scales an image down to maxWidth pixels wide, keeping its
// aspect ratio and applying its EXIF orientation, and writes it to w as
// JPEG (for JPEG input) or PNG (otherwise). It returns the new image's
// details and content type; resized is false, and nothing is written, when
// the image is already at most maxWidth wide.
func ResizeImage(r io.ReadSeeker, contentType string, maxWidth int, w io.Writer) (d Details, outType string, resized bool, err error) {
	info, cfg, err := inspectImage(r)
	if err != nil {
		return Details{}, "", false, err
	}
	if err := checkDecodable(r, info, cfg); err != nil {
		return Details{}, "", false, err
	}
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return Details{}, "", false, err
	}
	img, err := imaging.Decode(r, imaging.AutoOrientation(true))
	if err != nil {
		return Details{}, "", false, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if img.Bounds().Dx() <= maxWidth {
		return Details{}, "", false, nil
	}
	out := imaging.Resize(img, maxWidth, 0, imaging.Lanczos)
	format, outType := imaging.PNG, PNG
	if contentType == JPEG {
		format, outType = imaging.JPEG, JPEG
	}
	if err := imaging.Encode(w, out, format, imaging.JPEGQuality(90)); err != nil {
		return Details{}, "", false, fmt.Errorf("encode resized image: %w", err)
	}
	name := "png"
	if outType == JPEG {
		name = "jpeg"
	}
	return Details{Format: name, Width: out.Bounds().Dx(), Height: out.Bounds().Dy()}, outType, true, nil
}
