package media_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/disintegration/imaging"
	"github.com/go-audio/audio"
	"github.com/go-audio/wav"

	"github.com/tocsin/tocsin/media"
)

// tone writes seconds of a sine at freq Hz as 16-bit PCM WAV.
func tone(t *testing.T, rate, channels int, freq, seconds float64) []byte {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "*.wav")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	enc := wav.NewEncoder(f, rate, 16, channels, 1)
	n := int(float64(rate) * seconds)
	buf := &audio.IntBuffer{Format: &audio.Format{NumChannels: channels, SampleRate: rate}, SourceBitDepth: 16}
	for i := range n {
		v := int(16000 * math.Sin(2*math.Pi*freq*float64(i)/float64(rate)))
		for range channels {
			buf.Data = append(buf.Data, v)
		}
	}
	if err := enc.Write(buf); err != nil {
		t.Fatal(err)
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func picture(t *testing.T, w, h int, asJPEG bool) []byte {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for x := range w {
		for y := range h {
			img.Set(x, y, color.RGBA{uint8(x), uint8(y), 90, 255})
		}
	}
	var b bytes.Buffer
	if asJPEG {
		_ = jpeg.Encode(&b, img, nil)
	} else {
		_ = png.Encode(&b, img)
	}
	return b.Bytes()
}

func mp3Fixture(t *testing.T) []byte {
	// 1.5 s of 440 Hz, mono, 22.05 kHz, 32 kbit/s, made with LAME 3.100; no ID3 tag.
	b, err := os.ReadFile(filepath.Join("testdata", "tone.mp3"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSniffAndNormalize(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"png", picture(t, 4, 4, false), media.PNG},
		{"jpeg", picture(t, 4, 4, true), media.JPEG},
		{"wav", tone(t, 8000, 1, 440, 0.1), media.WAV},
		{"mp3 without ID3", mp3Fixture(t), media.MP3},
		{"text", []byte("hello, this is not a picture"), "text/plain"},
		{"pdf", []byte("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n"), "application/pdf"},
	}
	for _, c := range cases {
		got := media.Sniff(c.data[:min(len(c.data), media.SniffLen)])
		if got != c.want {
			t.Errorf("%s: sniffed %q, want %q", c.name, got, c.want)
		}
	}
	for in, want := range map[string]string{"image/JPG": media.JPEG, "audio/x-wav": media.WAV, "audio/mp3; q=1": media.MP3, "IMAGE/PNG": media.PNG, "??": ""} {
		if got := media.Normalize(in); got != want {
			t.Errorf("Normalize(%q) = %q, want %q", in, got, want)
		}
	}
	if media.Kind(media.MP3) != media.Audio || media.Kind(media.GIF) != media.Image || media.Kind("text/plain") != "" {
		t.Error("Kind")
	}
}

func TestInspect(t *testing.T) {
	t.Parallel()
	d, err := media.InspectImage(bytes.NewReader(picture(t, 40, 30, false)))
	if err != nil || d.Width != 40 || d.Height != 30 || d.Format != "png" {
		t.Fatalf("%+v %v", d, err)
	}
	if _, err := media.InspectImage(bytes.NewReader(picture(t, 40, 30, false)[:30])); !errors.Is(err, media.ErrInvalid) {
		t.Fatalf("truncated png: %v", err)
	}
	if d, err := media.VerifyImage(bytes.NewReader(picture(t, 40, 30, true))); err != nil || d.Format != "jpeg" {
		t.Fatalf("verify jpeg: %+v %v", d, err)
	}
	pic := picture(t, 40, 30, false)
	if _, err := media.VerifyImage(bytes.NewReader(pic[:len(pic)-20])); !errors.Is(err, media.ErrInvalid) {
		t.Fatalf("png without its end: %v", err)
	}
	d, err = media.InspectAudio(bytes.NewReader(tone(t, 44100, 2, 440, 1)), media.WAV)
	if err != nil || d.SampleRate != 44100 || d.Channels != 2 || d.BitsPerSample != 16 || d.DurationMs != 1000 {
		t.Fatalf("wav %+v %v", d, err)
	}
	// The duration counts the audio, not the header: 36 bytes are 1 ms of
	// 8 kHz 16-bit mono.
	if d, err := media.InspectAudio(bytes.NewReader(tone(t, 8000, 1, 440, 1)), media.WAV); err != nil || d.DurationMs != 1000 {
		t.Fatalf("8 kHz wav %+v %v", d, err)
	}
	if _, err := media.InspectAudio(bytes.NewReader(tone(t, 8000, 1, 440, 0)), media.WAV); !errors.Is(err, media.ErrInvalid) {
		t.Fatalf("a WAV without audio: %v", err)
	}
	// A second data chunk (players take the first) is refused rather than
	// counted.
	twice := append(tone(t, 8000, 1, 440, 0.01), append([]byte("data\x40\x1f\x00\x00"), make([]byte, 8000)...)...)
	binary.LittleEndian.PutUint32(twice[4:], uint32(len(twice)-8))
	if _, err := media.InspectAudio(bytes.NewReader(twice), media.WAV); !errors.Is(err, media.ErrInvalid) {
		t.Fatalf("a WAV with two data chunks: %v", err)
	}
	d, err = media.InspectAudio(bytes.NewReader(mp3Fixture(t)), media.MP3)
	if err != nil || d.SampleRate != 22050 || d.DurationMs < 1400 || d.DurationMs > 1700 {
		t.Fatalf("mp3 %+v %v", d, err)
	}
	if _, err := media.InspectAudio(bytes.NewReader([]byte("RIFF\x10\x00\x00\x00WAVEjunkjunk")), media.WAV); err == nil {
		t.Fatal("accepted a broken WAV")
	}
}

// rms decodes a 16-bit mono WAV and returns its format and the RMS level.
func rms(t *testing.T, b []byte) (media.Details, float64) {
	t.Helper()
	d, err := media.InspectAudio(bytes.NewReader(b), media.WAV)
	if err != nil {
		t.Fatal(err)
	}
	dec := wav.NewDecoder(bytes.NewReader(b))
	buf, err := dec.FullPCMBuffer()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, v := range buf.Data {
		sum += float64(v) * float64(v)
	}
	return d, math.Sqrt(sum/float64(len(buf.Data))) / 32768
}

func encode(t *testing.T, in []byte, ct string, rate int, maxDur time.Duration) ([]byte, error) {
	f, err := os.CreateTemp(t.TempDir(), "*.wav")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := media.EncodeWAV(context.Background(), bytes.NewReader(in), ct, rate, maxDur, f); err != nil {
		return nil, err
	}
	return os.ReadFile(f.Name())
}

func TestEncodeWAV(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		in      []byte
		ct      string
		rate    int
		wantMs  int64
		quiet   bool // the tone is above the new Nyquist frequency and must be filtered out
		minimum float64
	}{
		{"stereo 44.1 kHz WAV to voice", tone(t, 44100, 2, 440, 1), media.WAV, 8000, 1000, false, 0.3},
		{"tone above 4 kHz is filtered", tone(t, 44100, 1, 6000, 1), media.WAV, 8000, 1000, true, 0},
		{"8 kHz WAV up to EAS rate", tone(t, 8000, 1, 440, 0.5), media.WAV, 22050, 500, false, 0.3},
		{"MP3 to voice", mp3Fixture(t), media.MP3, 8000, 1500, false, 0.05},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := encode(t, c.in, c.ct, c.rate, 0)
			if err != nil {
				t.Fatal(err)
			}
			d, level := rms(t, out)
			if d.SampleRate != c.rate || d.Channels != 1 || d.BitsPerSample != 16 || math.Abs(float64(d.DurationMs-c.wantMs)) > 150 {
				t.Fatalf("%+v", d)
			}
			if c.quiet && level > 0.02 {
				t.Fatalf("aliasing: level %.3f", level)
			}
			if !c.quiet && level < c.minimum {
				t.Fatalf("the tone is lost: level %.3f", level)
			}
		})
	}
	if _, err := encode(t, tone(t, 8000, 1, 440, 3), media.WAV, 22050, 2*time.Second); !errors.Is(err, media.ErrTooLong) {
		t.Fatalf("3 s for a 2 s limit: %v", err)
	}
}

func TestResizeImage(t *testing.T) {
	t.Parallel()
	for _, asJPEG := range []bool{false, true} {
		var out bytes.Buffer
		d, v, err := media.ResizeImage(bytes.NewReader(picture(t, 400, 200, asJPEG)), map[bool]string{false: media.PNG, true: media.JPEG}[asJPEG], 100, &out)
		if err != nil || v == nil || v.Details.Width != 100 || v.Details.Height != 50 || d.Width != 400 || d.Height != 200 {
			t.Fatalf("%+v %+v %v", d, v, err)
		}
		if want := map[bool]string{false: media.PNG, true: media.JPEG}[asJPEG]; v.ContentType != want || media.Sniff(out.Bytes()) != want {
			t.Fatalf("resized to %s (%s)", v.ContentType, media.Sniff(out.Bytes()))
		}
	}
	var out bytes.Buffer
	d, v, err := media.ResizeImage(bytes.NewReader(picture(t, 80, 20, false)), media.PNG, 100, &out)
	if err != nil || v != nil || out.Len() != 0 || d.Width != 80 {
		t.Fatalf("a narrow image was resized: %+v %+v %v", d, v, err)
	}
}

// TestResizeImageAppliesTheOrientation: a JPEG whose EXIF segment says how
// to turn it is scaled and turned as imaging turned and scaled it before
// (imaging.Decode with AutoOrientation, then Resize): the same size, and
// each quarter of the picture where it was.
func TestResizeImageAppliesTheOrientation(t *testing.T) {
	t.Parallel()
	quarters := image.NewRGBA(image.Rect(0, 0, 400, 200))
	for y := range 200 {
		for x := range 400 {
			quarters.Set(x, y, []color.RGBA{{220, 20, 20, 255}, {20, 200, 20, 255}, {20, 20, 220, 255}, {240, 240, 240, 255}}[x/200+2*(y/100)])
		}
	}
	var plain bytes.Buffer
	if err := jpeg.Encode(&plain, quarters, &jpeg.Options{Quality: 95}); err != nil {
		t.Fatal(err)
	}
	for o := uint16(1); o <= 8; o++ {
		file := withOrientation(plain.Bytes(), o)
		ref, err := imaging.Decode(bytes.NewReader(file), imaging.AutoOrientation(true))
		if err != nil {
			t.Fatal(err)
		}
		want := imaging.Resize(ref, 60, 0, imaging.Lanczos)
		var out bytes.Buffer
		_, v, err := media.ResizeImage(bytes.NewReader(file), media.JPEG, 60, &out)
		if err != nil || v == nil {
			t.Fatalf("orientation %d: %+v %v", o, v, err)
		}
		got, err := jpeg.Decode(&out)
		if err != nil {
			t.Fatal(err)
		}
		if got.Bounds().Size() != want.Bounds().Size() || v.Details.Width != 60 || v.Details.Height != want.Bounds().Dy() {
			t.Fatalf("orientation %d: %v (%+v), want %v", o, got.Bounds(), v.Details, want.Bounds())
		}
		b := want.Bounds()
		for _, p := range []image.Point{{b.Dx() / 4, b.Dy() / 4}, {b.Dx() * 3 / 4, b.Dy() / 4}, {b.Dx() / 4, b.Dy() * 3 / 4}, {b.Dx() * 3 / 4, b.Dy() * 3 / 4}} {
			gr, gg, gb, _ := got.At(p.X, p.Y).RGBA()
			wr, wg, wb, _ := want.At(p.X, p.Y).RGBA()
			if d := max(diff(gr, wr), diff(gg, wg), diff(gb, wb)); d > 24<<8 {
				t.Errorf("orientation %d at %v: %v, want %v", o, p, got.At(p.X, p.Y), want.At(p.X, p.Y))
			}
		}
	}
}

func diff(a, b uint32) uint32 { return max(a, b) - min(a, b) }

// TestResizeImageHoldsNoCopies: resizing allocates the decoded image once
// and, besides it and the small version, little: no second decoding, no
// turned or converted copy of the full image, no full-size pass between
// the two filters.
func TestResizeImageHoldsNoCopies(t *testing.T) {
	// Not parallel: it counts the process's allocations.
	var p bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&p, pattern(3000, 2000)); err != nil {
		t.Fatal(err)
	}
	var j bytes.Buffer
	if err := jpeg.Encode(&j, pattern(3000, 2000), nil); err != nil {
		t.Fatal(err)
	}
	allocated := func(f func()) uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		f()
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	for name, c := range map[string]struct {
		file []byte
		ct   string
	}{"RGBA PNG": {p.Bytes(), media.PNG}, "JPEG turned by EXIF": {withOrientation(j.Bytes(), 6), media.JPEG}} {
		decoded := allocated(func() {
			if _, _, err := image.Decode(bytes.NewReader(c.file)); err != nil {
				t.Fatal(err)
			}
		})
		resized := allocated(func() {
			if _, v, err := media.ResizeImage(bytes.NewReader(c.file), c.ct, 300, io.Discard); err != nil || v == nil {
				t.Fatal(v, err)
			}
		})
		if resized > decoded+4<<20 {
			t.Errorf("%s: resizing allocated %.1f MiB, decoding alone %.1f MiB", name, float64(resized)/(1<<20), float64(decoded)/(1<<20))
		}
	}
}

func TestIsRange(t *testing.T) {
	for ct, want := range map[string]bool{
		"*/*": true, "image/*": true, "*/png": true, "*": true,
		"image/png": false, "text/plain": false, "application/vnd.api+json": false, "": false,
	} {
		if got := media.IsRange(ct); got != want {
			t.Errorf("IsRange(%q) = %v, want %v", ct, got, want)
		}
	}
}
