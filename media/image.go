package media

import (
	"fmt"
	"image"
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

// InspectImage reads an image's format and dimensions from its header.
func InspectImage(r io.Reader) (Details, error) {
	cfg, format, err := image.DecodeConfig(r)
	if err != nil {
		return Details{}, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return Details{}, fmt.Errorf("%w: no pixels", ErrInvalid)
	}
	return Details{Format: format, Width: cfg.Width, Height: cfg.Height}, nil
}

// VerifyImage reads an image's details and decodes all of it, so a file
// whose header is fine but whose pixels are broken or missing is refused.
// Images over MaxPixels are refused without decoding.
func VerifyImage(r io.ReadSeeker) (Details, error) {
	d, err := InspectImage(r)
	if err != nil {
		return d, err
	}
	if int64(d.Width)*int64(d.Height) > MaxPixels {
		return Details{}, fmt.Errorf("%w: %d×%d is more than %d pixels", ErrTooLarge, d.Width, d.Height, MaxPixels)
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
	info, err := InspectImage(r)
	if err != nil {
		return Details{}, "", false, err
	}
	if int64(info.Width)*int64(info.Height) > MaxPixels {
		return Details{}, "", false, fmt.Errorf("%w: %d×%d is more than %d pixels", ErrTooLarge, info.Width, info.Height, MaxPixels)
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
