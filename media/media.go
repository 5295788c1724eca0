// Package media inspects and converts the files tocsin stores: images
// (PNG, JPEG, GIF, WebP, BMP) and audio (WAV, MP3). It detects types from
// the bytes, reads dimensions and durations, scales images down and encodes
// audio as 16-bit PCM mono WAV at a chosen rate.
package media

import (
	"errors"
	"mime"
	"strings"

	"github.com/gabriel-vasile/mimetype"
)

// The content types tocsin accepts.
const (
	PNG  = "image/png"
	JPEG = "image/jpeg"
	GIF  = "image/gif"
	WebP = "image/webp"
	BMP  = "image/bmp"
	WAV  = "audio/wav"
	MP3  = "audio/mpeg"
)

// Kinds of file.
const (
	Image = "image"
	Audio = "audio"
)

// Supported lists the accepted content types.
var Supported = []string{PNG, JPEG, GIF, WebP, BMP, WAV, MP3}

var aliases = map[string]string{
	"image/jpg": JPEG, "image/pjpeg": JPEG, "image/x-ms-bmp": BMP, "image/x-bmp": BMP,
	"audio/wave": WAV, "audio/x-wav": WAV, "audio/vnd.wave": WAV, "audio/x-pn-wav": WAV,
	"audio/mp3": MP3, "audio/x-mp3": MP3, "audio/mpeg3": MP3, "audio/x-mpeg-3": MP3, "audio/x-mpeg": MP3,
}

// Normalize returns the canonical form of a declared content type (lower
// case, no parameters, aliases resolved), or "" when it cannot be parsed.
func Normalize(ct string) string {
	t, _, err := mime.ParseMediaType(strings.TrimSpace(ct))
	if err != nil {
		return ""
	}
	if a, ok := aliases[t]; ok {
		return a
	}
	return t
}

// IsRange reports whether t, a media type without its parameters, is a
// media range such as */* or image/*: a * in place of its type or subtype
// (no registered name holds one). A range is what a client accepts (an
// Accept header); it names many types, never the type of some content.
func IsRange(t string) bool {
	return strings.ContainsRune(t, '*')
}

// Kind returns Image or Audio for a supported content type, "" otherwise.
func Kind(ct string) string {
	switch ct {
	case PNG, JPEG, GIF, WebP, BMP:
		return Image
	case WAV, MP3:
		return Audio
	}
	return ""
}

// SniffLen is how many leading bytes Sniff looks at.
const SniffLen = 3072

// Sniff detects the content type of a file from its leading bytes.
func Sniff(head []byte) string {
	return Normalize(mimetype.Detect(head).String())
}

// Errors that mark bad input rather than a failure of tocsin.
var (
	// ErrInvalid: the bytes are not a valid file of their type.
	ErrInvalid = errors.New("invalid media")
	// ErrUnsupported: a variant of the type tocsin cannot decode.
	ErrUnsupported = errors.New("unsupported media")
	// ErrTooLong: audio longer than the encoding allows.
	ErrTooLong = errors.New("audio too long")
	// ErrTooLarge: an image with more pixels, or more bytes once decoded,
	// than tocsin decodes.
	ErrTooLarge = errors.New("image too large")
	// ErrOutOfBounds: audio whose sample rate or channels are outside what
	// tocsin takes.
	ErrOutOfBounds = errors.New("audio out of bounds")
)

// Details describes a file's media.
type Details struct {
	Format        string `json:"format,omitempty"`
	Width         int    `json:"width,omitempty"`
	Height        int    `json:"height,omitempty"`
	DurationMs    int64  `json:"durationMs,omitempty"`
	SampleRate    int    `json:"sampleRate,omitempty"`
	Channels      int    `json:"channels,omitempty"`
	BitsPerSample int    `json:"bitsPerSample,omitempty"`
}
