package media

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/go-audio/audio"
	"github.com/go-audio/wav"
	"github.com/hajimehoshi/go-mp3"
)

// The audio tocsin takes: sample rates from MinSampleRate to MaxSampleRate
// (telephony's 8 kHz to studio 96 kHz) and at most MaxChannels channels.
// Outside them a file is refused with ErrOutOfBounds before it is decoded:
// a WAV declared at 1 Hz would otherwise be stretched 8,000 times into its
// telephony version.
const (
	MinSampleRate = 8000
	MaxSampleRate = 96000
	MaxChannels   = 8
)

// InspectAudio reads the format, rate, channels and duration of a WAV or MP3
// file. WAV must be integer PCM (8, 16, 24 or 32 bits) whose chunks lie
// within the file. Rates and channels outside the bounds above are
// ErrOutOfBounds.
func InspectAudio(r io.ReadSeeker, contentType string) (Details, error) {
	d, err := inspectAudio(r, contentType)
	if err != nil {
		return d, err
	}
	if d.SampleRate < MinSampleRate || d.SampleRate > MaxSampleRate {
		return Details{}, fmt.Errorf("%w: the sample rate is %d Hz; tocsin takes %d to %d Hz", ErrOutOfBounds, d.SampleRate, MinSampleRate, MaxSampleRate)
	}
	if d.Channels > MaxChannels {
		return Details{}, fmt.Errorf("%w: %d channels; tocsin takes at most %d", ErrOutOfBounds, d.Channels, MaxChannels)
	}
	return d, nil
}

// CheckWAVHead checks the sample rate and channels of a WAV file from its
// first bytes, when its format chunk lies within them, so a file outside
// the bounds is refused (ErrOutOfBounds) before the rest of it is read.
// A head whose format chunk is further on passes; InspectAudio checks the
// whole file.
func CheckWAVHead(head []byte) error {
	if len(head) < 12 || !bytes.Equal(head[:4], []byte("RIFF")) || !bytes.Equal(head[8:12], []byte("WAVE")) {
		return nil
	}
	for at := 12; at+8 <= len(head); {
		n := int(binary.LittleEndian.Uint32(head[at+4:]))
		if bytes.Equal(head[at:at+4], []byte("fmt ")) {
			if n < 16 || at+8+16 > len(head) {
				return nil
			}
			f := head[at+8:]
			channels, rate := int(binary.LittleEndian.Uint16(f[2:])), int(binary.LittleEndian.Uint32(f[4:]))
			if rate < MinSampleRate || rate > MaxSampleRate {
				return fmt.Errorf("%w: the sample rate is %d Hz; tocsin takes %d to %d Hz", ErrOutOfBounds, rate, MinSampleRate, MaxSampleRate)
			}
			if channels > MaxChannels {
				return fmt.Errorf("%w: %d channels; tocsin takes at most %d", ErrOutOfBounds, channels, MaxChannels)
			}
			return nil
		}
		if n < 0 || n > len(head) {
			return nil
		}
		at += 8 + n + n%2
	}
	return nil
}

// checkChunks walks the chunks of a RIFF WAVE file and refuses one whose
// declared size runs past the end of the file: the WAV decoder reads some
// chunks whole into memory, so a few bytes declaring 4 GB would ask it for
// 4 GB. It returns the size of the data chunk, the audio itself.
func checkChunks(r io.ReadSeeker) (data int64, err error) {
	size, err := r.Seek(0, io.SeekEnd)
	if err != nil {
		return 0, err
	}
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return 0, err
	}
	var head [12]byte
	if _, err := io.ReadFull(r, head[:]); err != nil || !bytes.Equal(head[:4], []byte("RIFF")) || !bytes.Equal(head[8:], []byte("WAVE")) {
		return 0, fmt.Errorf("%w: not a RIFF WAVE file", ErrInvalid)
	}
	at := int64(len(head))
	found := false
	for size-at >= 8 {
		var ch [8]byte
		if _, err := io.ReadFull(r, ch[:]); err != nil {
			return 0, fmt.Errorf("%w: %v", ErrInvalid, err)
		}
		n := int64(binary.LittleEndian.Uint32(ch[4:]))
		at += 8
		if n > size-at {
			return 0, fmt.Errorf("%w: the %q chunk declares %d bytes but the file has %d after it", ErrInvalid, ch[:4], n, size-at)
		}
		if bytes.Equal(ch[:4], []byte("data")) {
			if found {
				// Players take the first; a second would only mislead the
				// duration.
				return 0, fmt.Errorf("%w: more than one data chunk", ErrInvalid)
			}
			data, found = n, true
		}
		at += n + n%2 // chunks are word aligned
		if _, err := r.Seek(at, io.SeekStart); err != nil {
			return 0, err
		}
	}
	_, err = r.Seek(0, io.SeekStart)
	return data, err
}

func inspectAudio(r io.ReadSeeker, contentType string) (Details, error) {
	switch contentType {
	case WAV:
		data, err := checkChunks(r)
		if err != nil {
			return Details{}, err
		}
		d := wav.NewDecoder(r)
		d.ReadInfo()
		if d.Err() != nil || !d.IsValidFile() {
			return Details{}, fmt.Errorf("%w: not a readable WAV file", ErrInvalid)
		}
		if d.WavAudioFormat != 1 {
			return Details{}, fmt.Errorf("%w: WAV encoding %d; only integer PCM WAV is accepted", ErrUnsupported, d.WavAudioFormat)
		}
		switch d.BitDepth {
		case 8, 16, 24, 32:
		default:
			return Details{}, fmt.Errorf("%w: %d-bit WAV", ErrUnsupported, d.BitDepth)
		}
		if d.NumChans == 0 || d.SampleRate == 0 {
			return Details{}, fmt.Errorf("%w: WAV without channels or sample rate", ErrInvalid)
		}
		// The duration is the data chunk's frames; the decoder's own
		// figure counts the header too.
		frames := data / (int64(d.NumChans) * int64(d.BitDepth) / 8)
		if frames == 0 {
			return Details{}, fmt.Errorf("%w: a WAV file without audio", ErrInvalid)
		}
		return Details{Format: "wav", SampleRate: int(d.SampleRate), Channels: int(d.NumChans), BitsPerSample: int(d.BitDepth), DurationMs: frames * 1000 / int64(d.SampleRate)}, nil
	case MP3:
		d, err := mp3.NewDecoder(r)
		if err != nil {
			return Details{}, fmt.Errorf("%w: not a readable MP3 file: %v", ErrInvalid, err)
		}
		if d.SampleRate() <= 0 || d.Length() <= 0 {
			return Details{}, fmt.Errorf("%w: an MP3 file without audio", ErrInvalid)
		}
		return Details{Format: "mp3", SampleRate: d.SampleRate(), DurationMs: d.Length() / 4 * 1000 / int64(d.SampleRate())}, nil
	}
	return Details{}, fmt.Errorf("%w: %s is not audio tocsin reads", ErrUnsupported, contentType)
}

// EncodeWAV decodes WAV or MP3 audio, mixes it down to mono, resamples it to
// rate and writes it to w as 16-bit PCM WAV. Audio longer than maxDuration
// (when positive) is refused with ErrTooLong before anything is written,
// and should the decoded audio run longer than its header said, the
// encoding stops with ErrTooLong once it passes maxDuration: what it writes
// is bounded by maxDuration whatever the input claims. It stops with ctx's
// error when ctx ends.
func EncodeWAV(ctx context.Context, r io.ReadSeeker, contentType string, rate int, maxDuration time.Duration, w io.WriteSeeker) (Details, error) {
	info, err := InspectAudio(r, contentType)
	if err != nil {
		return Details{}, err
	}
	if maxDuration > 0 && time.Duration(info.DurationMs)*time.Millisecond > maxDuration {
		return Details{}, fmt.Errorf("%w: %.1f s is longer than %s", ErrTooLong, float64(info.DurationMs)/1000, maxDuration)
	}
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return Details{}, err
	}
	var src sampleSource
	switch contentType {
	case WAV:
		d := wav.NewDecoder(r)
		if err := d.FwdToPCM(); err != nil {
			return Details{}, fmt.Errorf("%w: %v", ErrInvalid, err)
		}
		src = &wavSource{d: d, ch: int(d.NumChans), bits: int(d.BitDepth), buf: &audio.IntBuffer{Data: make([]int, 4096*int(d.NumChans)), Format: d.Format()}}
	default:
		d, err := mp3.NewDecoder(r)
		if err != nil {
			return Details{}, fmt.Errorf("%w: %v", ErrInvalid, err)
		}
		src = &mp3Source{d: d, buf: make([]byte, 4096*4)}
	}
	enc := wav.NewEncoder(w, rate, 16, 1, 1)
	rs := newResampler(src, info.SampleRate, rate)
	in := make([]float64, 4096)
	out := &audio.IntBuffer{Data: make([]int, 4096), Format: &audio.Format{NumChannels: 1, SampleRate: rate}, SourceBitDepth: 16}
	var frames int64
	// A second of slack over maxDuration for the rounding of durations.
	maxFrames := int64(math.MaxInt64)
	if maxDuration > 0 {
		maxFrames = int64(maxDuration.Seconds()*float64(rate)) + int64(rate)
	}
	for {
		if err := ctx.Err(); err != nil {
			return Details{}, err
		}
		if frames > maxFrames {
			return Details{}, fmt.Errorf("%w: the decoded audio is longer than %s", ErrTooLong, maxDuration)
		}
		n, err := rs.read(in)
		if n > 0 {
			for i := range n {
				out.Data[i] = int(math.Round(math.Max(-1, math.Min(1, in[i])) * 32767))
			}
			out.Data = out.Data[:n]
			if werr := enc.Write(out); werr != nil {
				return Details{}, fmt.Errorf("write wav: %w", werr)
			}
			out.Data = out.Data[:cap(out.Data)]
			frames += int64(n)
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return Details{}, fmt.Errorf("%w: %v", ErrInvalid, err)
		}
	}
	if err := enc.Close(); err != nil {
		return Details{}, fmt.Errorf("finish wav: %w", err)
	}
	return Details{Format: "wav", SampleRate: rate, Channels: 1, BitsPerSample: 16, DurationMs: frames * 1000 / int64(rate)}, nil
}

// sampleSource yields mono samples in [-1, 1].
type sampleSource interface {
	read(dst []float64) (int, error)
}

type wavSource struct {
	d    *wav.Decoder
	ch   int
	bits int
	buf  *audio.IntBuffer
	// pending holds decoded mono samples not yet returned.
	pending []float64
}

func (s *wavSource) read(dst []float64) (int, error) {
	if len(s.pending) == 0 {
		s.buf.Data = s.buf.Data[:cap(s.buf.Data)]
		n, err := s.d.PCMBuffer(s.buf)
		if n == 0 {
			if err == nil {
				err = io.EOF
			}
			return 0, err
		}
		full := 1 << (s.bits - 1)
		frames := n / s.ch
		s.pending = s.pending[:0]
		for f := range frames {
			var sum float64
			for c := range s.ch {
				v := s.buf.Data[f*s.ch+c]
				if s.bits == 8 {
					v -= 128
				}
				sum += float64(v) / float64(full)
			}
			s.pending = append(s.pending, sum/float64(s.ch))
		}
	}
	n := copy(dst, s.pending)
	s.pending = s.pending[n:]
	return n, nil
}

type mp3Source struct {
	d    *mp3.Decoder
	buf  []byte
	rest []byte
}

func (s *mp3Source) read(dst []float64) (int, error) {
	want := min(len(dst)*4, len(s.buf))
	n := copy(s.buf, s.rest)
	s.rest = s.rest[:0]
	m, err := io.ReadAtLeast(s.d, s.buf[n:want], 4)
	if errors.Is(err, io.ErrUnexpectedEOF) {
		err = io.EOF
	}
	n += m
	frames := n / 4
	s.rest = append(s.rest, s.buf[frames*4:n]...)
	for i := range frames {
		l := int16(binary.LittleEndian.Uint16(s.buf[i*4:]))
		r := int16(binary.LittleEndian.Uint16(s.buf[i*4+2:]))
		dst[i] = (float64(l) + float64(r)) / 2 / 32768
	}
	if frames > 0 && errors.Is(err, io.EOF) {
		return frames, nil
	}
	return frames, err
}

// resampler converts a stream between sample rates with windowed-sinc
// interpolation, low-pass filtered at the lower rate's Nyquist frequency.
type resampler struct {
	src   sampleSource
	step  float64 // input samples per output sample
	fc    float64 // cutoff as a share of the input Nyquist frequency
	half  int     // half the filter width, in input samples
	buf   []float64
	base  int64   // input index of buf[0]
	pos   float64 // input position of the next output sample
	eof   bool
	total int64 // input samples read so far
	chunk []float64
	// kernel is the filter tabulated (see tap).
	kernel []float64
}

const sincZeros = 16

// kernelRes is how many points per input sample the filter's table holds;
// between them the filter is interpolated linearly (an error below a
// 16-bit sample's least step).
const kernelRes = 512

func newResampler(src sampleSource, inRate, outRate int) *resampler {
	fc := math.Min(1, float64(outRate)/float64(inRate)) * 0.95
	r := &resampler{
		src: src, step: float64(inRate) / float64(outRate), fc: fc,
		half: int(math.Ceil(sincZeros / fc)), chunk: make([]float64, 4096),
	}
	// The windowed sinc is symmetric: tabulate it over [0, half].
	r.kernel = make([]float64, r.half*kernelRes+2)
	for i := range r.kernel {
		x := float64(i) / kernelRes
		r.kernel[i] = fc * sinc(fc*x) * blackman(x/float64(r.half))
	}
	return r
}

// tap is the filter's value at distance x from the output sample.
func (r *resampler) tap(x float64) float64 {
	x = math.Abs(x) * kernelRes
	i := int(x)
	if i >= len(r.kernel)-1 {
		return 0
	}
	f := x - float64(i)
	return r.kernel[i] + f*(r.kernel[i+1]-r.kernel[i])
}

// fill reads input until buf covers index upto or the input ends.
func (r *resampler) fill(upto int64) error {
	for !r.eof && r.base+int64(len(r.buf)) <= upto {
		n, err := r.src.read(r.chunk)
		r.buf = append(r.buf, r.chunk[:n]...)
		r.total += int64(n)
		if errors.Is(err, io.EOF) {
			r.eof = true
		} else if err != nil {
			return err
		}
	}
	return nil
}

func (r *resampler) at(i int64) float64 {
	j := i - r.base
	if j < 0 || j >= int64(len(r.buf)) {
		return 0
	}
	return r.buf[j]
}

func (r *resampler) read(dst []float64) (int, error) {
	n := 0
	for n < len(dst) {
		center := int64(math.Floor(r.pos))
		if err := r.fill(center + int64(r.half)); err != nil {
			return n, err
		}
		if r.eof && r.pos >= float64(r.total) {
			if n == 0 {
				return 0, io.EOF
			}
			return n, nil
		}
		var sum float64
		for k := center - int64(r.half) + 1; k <= center+int64(r.half); k++ {
			x := r.pos - float64(k)
			sum += r.at(k) * r.tap(x)
		}
		dst[n] = sum
		n++
		r.pos += r.step
		// Drop input the filter no longer reaches.
		if drop := int64(math.Floor(r.pos)) - int64(r.half) - r.base; drop > 8192 {
			r.buf = append(r.buf[:0], r.buf[drop:]...)
			r.base += drop
		}
	}
	return n, nil
}

func sinc(x float64) float64 {
	if x == 0 {
		return 1
	}
	return math.Sin(math.Pi*x) / (math.Pi * x)
}

// blackman is the Blackman window over [-1, 1].
func blackman(x float64) float64 {
	if x <= -1 || x >= 1 {
		return 0
	}
	t := (x + 1) / 2
	return 0.42 - 0.5*math.Cos(2*math.Pi*t) + 0.08*math.Cos(4*math.Pi*t)
}
