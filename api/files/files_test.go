package files_test

import (
	"bytes"
	"compress/zlib"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-audio/audio"
	"github.com/go-audio/wav"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/tocsin/tocsin/api/model"
	"github.com/tocsin/tocsin/dispatch"
	"github.com/tocsin/tocsin/internal/config"
	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/media"
	"github.com/tocsin/tocsin/storage"
	storedfiles "github.com/tocsin/tocsin/storage/files"
	"github.com/tocsin/tocsin/storage/storagetest"
)

// TestMain lets StartAPIProcess run the API in a process of its own.
func TestMain(m *testing.M) { stacktest.Main(m) }

// part is one multipart part; file parts have data.
type part struct {
	name, value string
	data        []byte
}

func text(name, value string) part { return part{name: name, value: value} }
func file(data []byte) part        { return part{name: "HttpFile", data: data} }

func body(parts ...part) (io.Reader, string) {
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	for _, p := range parts {
		if p.data != nil {
			fw, _ := w.CreateFormFile(p.name, "upload.bin")
			_, _ = fw.Write(p.data)
			continue
		}
		_ = w.WriteField(p.name, p.value)
	}
	_ = w.Close()
	return &b, w.FormDataContentType()
}

// upload sends the usual parts for data named name, then extra parts.
func std(name, contentType string, data []byte, extra ...part) []part {
	return append([]part{text("FileName", name), text("ContentType", contentType), text("ContentLength", fmt.Sprint(len(data))), file(data)}, extra...)
}

func post(t *testing.T, s *stacktest.Stack, tenant, token string, parts ...part) stacktest.Response {
	t.Helper()
	r, ct := body(parts...)
	headers := []string{"Content-Type", ct}
	if b, ok := r.(*bytes.Buffer); ok && b.Len() > 1<<20 {
		// As clients do for large uploads: a refusal (413) then comes
		// before the body is sent, not as a reset while sending it.
		headers = append(headers, "Expect", "100-continue")
	}
	return s.Do(t, http.MethodPost, "/v4/"+tenant+"/files", token, r, headers...)
}

func picture(w, h int) []byte {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for x := range w {
		for y := range h {
			img.Set(x, y, color.RGBA{uint8(x), uint8(y), 200, 255})
		}
	}
	var b bytes.Buffer
	_ = png.Encode(&b, img)
	return b.Bytes()
}

func tone(t *testing.T, rate, channels int, seconds float64) []byte {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "*.wav")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	enc := wav.NewEncoder(f, rate, 16, channels, 1)
	buf := &audio.IntBuffer{Format: &audio.Format{NumChannels: channels, SampleRate: rate}, SourceBitDepth: 16}
	for i := range int(float64(rate) * seconds) {
		v := int(12000 * math.Sin(2*math.Pi*440*float64(i)/float64(rate)))
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
	b, _ := os.ReadFile(f.Name())
	return b
}

// wavHeader is the header of a PCM WAV of the given format with frames
// frames of data, which the caller appends.
func wavHeader(rate, channels, bits, frames int) []byte {
	block := channels * bits / 8
	data := frames * block
	h := make([]byte, 44)
	copy(h, "RIFF")
	binary.LittleEndian.PutUint32(h[4:], uint32(36+data))
	copy(h[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(h[16:], 16)
	binary.LittleEndian.PutUint16(h[20:], 1)
	binary.LittleEndian.PutUint16(h[22:], uint16(channels))
	binary.LittleEndian.PutUint32(h[24:], uint32(rate))
	binary.LittleEndian.PutUint32(h[28:], uint32(rate*block))
	binary.LittleEndian.PutUint16(h[32:], uint16(block))
	binary.LittleEndian.PutUint16(h[34:], uint16(bits))
	copy(h[36:], "data")
	binary.LittleEndian.PutUint32(h[40:], uint32(data))
	return h
}

// deepPNG is a valid w×h PNG of black 16-bit RGBA pixels: a small file
// that decodes to w×h×8 bytes.
// jpegHeader is the start of a JPEG of w×h YCbCr pixels without chroma
// subsampling, up to its frame header (sof: 0xC0 baseline, 0xC2
// progressive), after a JFIF and a quantization segment; no scan follows.
func jpegHeader(w, h int, sof byte) []byte {
	b := []byte{0xFF, 0xD8}
	b = append(b, 0xFF, 0xE0, 0, 16, 'J', 'F', 'I', 'F', 0, 1, 1, 0, 0, 1, 0, 1, 0, 0)
	b = append(b, 0xFF, 0xDB, 0, 67, 0)
	for range 64 {
		b = append(b, 1)
	}
	b = append(b, 0xFF, sof, 0, 17, 8, byte(h>>8), byte(h), byte(w>>8), byte(w), 3)
	for id := byte(1); id <= 3; id++ {
		b = append(b, id, 0x11, 0)
	}
	return append(b, 0xFF, 0xD9)
}

func deepPNG(t *testing.T, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	chunk := func(typ string, data []byte) {
		_ = binary.Write(&b, binary.BigEndian, uint32(len(data)))
		c := crc32.NewIEEE()
		c.Write([]byte(typ))
		c.Write(data)
		b.WriteString(typ)
		b.Write(data)
		_ = binary.Write(&b, binary.BigEndian, c.Sum32())
	}
	b.WriteString("\x89PNG\r\n\x1a\n")
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr, uint32(w))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(h))
	ihdr[8], ihdr[9] = 16, 6 // 16 bits, RGBA
	chunk("IHDR", ihdr)
	var z bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&z, zlib.BestCompression)
	row := make([]byte, 1+w*8) // filter byte 0, then the pixels
	for range h {
		if _, err := zw.Write(row); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	chunk("IDAT", z.Bytes())
	chunk("IEND", nil)
	return b.Bytes()
}

func mp3Tone(t *testing.T) []byte {
	b, err := os.ReadFile("../../media/testdata/tone.mp3")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func decode[T any](t *testing.T, r stacktest.Response, want int) T {
	t.Helper()
	if r.Status != want {
		t.Fatalf("status %d, want %d: %s", r.Status, want, r.Body)
	}
	var v T
	r.JSON(t, &v)
	return v
}

func asset(t *testing.T, f model.FileModel, kind string) model.AssetInformation {
	t.Helper()
	for _, a := range f.Assets {
		if string(a.Kind) == kind {
			return a
		}
	}
	t.Fatalf("%s has no %s asset: %+v", f.FileName, kind, f.Assets)
	return model.AssetInformation{}
}

func fetch(t *testing.T, u string) []byte {
	t.Helper()
	res, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		t.Fatalf("GET presigned URL: %d %s", res.StatusCode, b)
	}
	return b
}

// stored returns the tenant's file rows, with their asset rows, as the
// file store keeps them (a half-written file shows here).
func stored(t *testing.T, s *stacktest.Stack, tenant string) []storedfiles.File {
	t.Helper()
	fs, err := storedfiles.New(s.DB, s.Objects).List(context.Background(), tenant, "", "")
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

// events returns the tenant's recorded events of typ, or all of them when
// typ is empty.
func events(t *testing.T, s *stacktest.Stack, tenant, typ string) []storagetest.RecordedEvent {
	t.Helper()
	all, err := storagetest.TenantEvents(context.Background(), s.DB, tenant)
	if err != nil {
		t.Fatal(err)
	}
	var out []storagetest.RecordedEvent
	for _, e := range all {
		if typ == "" || e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

func TestFilesLifecycle(t *testing.T) {
	t.Parallel()
	s := stacktest.Start(t)
	tenant, other := stacktest.NewTenant(), stacktest.NewTenant()
	token, otherToken := s.Token(t, tenant, "content"), s.Token(t, other, "content")
	base := "/v4/" + tenant + "/files"

	// An image, resized.
	pic := picture(400, 200)
	img := decode[model.FileModel](t, post(t, s, tenant, token, std("logo.png", "image/png", pic,
		text("FolderName", "brand/logos"), text("ResizeImage", "true"), text("MaxWidth", "100"), text("Description", "the logo"))...), 201)
	sum := sha256.Sum256(pic)
	if img.FileName != "brand/logos/logo.png" || img.Name != "logo.png" || img.FolderName != "brand/logos" || img.Kind != "image" ||
		img.SizeBytes != int64(len(pic)) || img.Sha256 != hex.EncodeToString(sum[:]) || img.Description != "the logo" ||
		img.Details.Width != 400 || img.Details.Height != 200 || len(img.Assets) != 2 {
		t.Fatalf("image %+v", img)
	}
	resized := asset(t, img, "resized")
	if resized.Details.Width != 100 || resized.Details.Height != 50 || resized.ContentType != "image/png" || resized.URL == "" {
		t.Fatalf("resized %+v", resized)
	}
	got := fetch(t, resized.URL)
	if media.Sniff(got) != media.PNG || int64(len(got)) != resized.SizeBytes {
		t.Fatalf("resized bytes: %d, %s", len(got), media.Sniff(got))
	}
	if orig := fetch(t, asset(t, img, "original").URL); !bytes.Equal(orig, pic) {
		t.Fatal("the original's bytes differ")
	}

	// WAV with both encodings; the file part comes first.
	w := tone(t, 44100, 2, 1)
	parts := []part{file(w), text("FileName", "siren.wav"), text("ContentType", "audio/x-wav"), text("ContentLength", fmt.Sprint(len(w))),
		text("EncodeForVoiceAudio", "true"), text("EncodeForEasAudio", "True")}
	snd := decode[model.FileModel](t, post(t, s, tenant, token, parts...), 201)
	if snd.Kind != "audio" || snd.ContentType != "audio/wav" || snd.Details.SampleRate != 44100 || snd.Details.Channels != 2 || snd.Details.DurationMs != 1000 {
		t.Fatalf("wav %+v", snd)
	}
	for kind, rate := range map[string]int{"voice": 8000, "eas": 22050} {
		a := asset(t, snd, kind)
		if a.ContentType != "audio/wav" || a.Details.SampleRate != rate || a.Details.Channels != 1 || a.Details.BitsPerSample != 16 {
			t.Fatalf("%s %+v", kind, a)
		}
		d, err := media.InspectAudio(bytes.NewReader(fetch(t, a.URL)), media.WAV)
		if err != nil || d.SampleRate != rate || d.Channels != 1 {
			t.Fatalf("%s bytes: %+v %v", kind, d, err)
		}
	}

	// MP3 (declared with an alias) to voice audio.
	mp3 := decode[model.FileModel](t, post(t, s, tenant, token, std("Alarm-TONE.mp3", "audio/mp3", mp3Tone(t), text("EncodeForVoiceAudio", "TRUE"))...), 201)
	if mp3.ContentType != "audio/mpeg" || asset(t, mp3, "voice").Details.SampleRate != 8000 {
		t.Fatalf("mp3 %+v", mp3)
	}

	if keys := s.ObjectKeys(t, "tenants/"+tenant+"/"); len(keys) != 2+3+2 {
		t.Fatalf("objects %v", keys)
	}
	if n := len(events(t, s, tenant, "file.uploaded")); n != 3 {
		t.Fatalf("%d file.uploaded events", n)
	}

	// Lists.
	// IncludeAudioUrls is optional, false when absent.
	for _, q := range []string{"?IncludeAudioUrls=false", ""} {
		list := decode[[]model.FileModel](t, s.Do(t, http.MethodGet, base+q, token, nil), 200)
		if len(list) != 3 || list[0].FileName != "Alarm-TONE.mp3" || list[1].FileName != "brand/logos/logo.png" {
			t.Fatalf("list%s %+v", q, list)
		}
		for _, f := range list {
			for _, a := range f.Assets {
				if a.URL != "" {
					t.Fatalf("URL without IncludeAudioUrls (%q): %+v", q, a)
				}
			}
		}
	}
	list := decode[[]model.FileModel](t, s.Do(t, http.MethodGet, base+"?IncludeAudioUrls=true", token, nil), 200)
	for _, f := range list {
		for _, a := range f.Assets {
			if (a.URL != "") != (f.Kind == "audio") {
				t.Fatalf("%s %s url %q", f.FileName, a.Kind, a.URL)
			}
		}
	}
	for q, want := range map[string][]string{
		"Filter=image":                  {"brand/logos/logo.png"},
		"Filter=audio":                  {"Alarm-TONE.mp3", "siren.wav"},
		"SearchTerm=tone":               {"Alarm-TONE.mp3"},
		"SearchTerm=LOGOS%2F":           {"brand/logos/logo.png"},
		"Filter=image&SearchTerm=siren": {},
	} {
		l := decode[[]model.FileModel](t, s.Do(t, http.MethodGet, base+"?IncludeAudioUrls=false&"+q, token, nil), 200)
		var names []string
		for _, f := range l {
			names = append(names, f.FileName)
		}
		if fmt.Sprint(names) != fmt.Sprint(want) {
			t.Errorf("%s: %v, want %v", q, names, want)
		}
	}
	// Pages of the list: X-Total-Count and Link tell the rest.
	r := s.Do(t, http.MethodGet, base+"?IncludeAudioUrls=false&pageSize=2", token, nil)
	first := decode[[]model.FileModel](t, r, 200)
	if len(first) != 2 || first[0].FileName != "Alarm-TONE.mp3" || r.Header.Get("X-Total-Count") != "3" ||
		r.Header.Get("Link") != "<"+base+`?IncludeAudioUrls=false&page=2&pageSize=2>; rel="next"` {
		t.Fatalf("first page %d files, total %q, link %q", len(first), r.Header.Get("X-Total-Count"), r.Header.Get("Link"))
	}
	r = s.Do(t, http.MethodGet, base+"?IncludeAudioUrls=false&page=2&pageSize=2", token, nil)
	second := decode[[]model.FileModel](t, r, 200)
	if len(second) != 1 || second[0].FileName != "siren.wav" || r.Header.Get("X-Total-Count") != "3" ||
		r.Header.Get("Link") != "<"+base+`?IncludeAudioUrls=false&page=1&pageSize=2>; rel="prev"` {
		t.Fatalf("second page %+v, total %q, link %q", second, r.Header.Get("X-Total-Count"), r.Header.Get("Link"))
	}
	if r := s.Do(t, http.MethodGet, base+"?IncludeAudioUrls=false", token, nil); r.Header.Get("Link") != "" || r.Header.Get("X-Total-Count") != "3" {
		t.Fatalf("one page: link %q, total %q", r.Header.Get("Link"), r.Header.Get("X-Total-Count"))
	}
	// Past the end, the previous page is the last one, and there is no next.
	for _, q := range []string{"page=3&pageSize=2", "page=50&pageSize=2", "page=1000000&pageSize=2"} {
		r := s.Do(t, http.MethodGet, base+"?IncludeAudioUrls=false&"+q, token, nil)
		if l := decode[[]model.FileModel](t, r, 200); len(l) != 0 || r.Header.Get("X-Total-Count") != "3" ||
			r.Header.Get("Link") != "<"+base+`?IncludeAudioUrls=false&page=2&pageSize=2>; rel="prev"` {
			t.Errorf("%s: %d files, total %q, link %q", q, len(l), r.Header.Get("X-Total-Count"), r.Header.Get("Link"))
		}
	}
	if r := s.Do(t, http.MethodGet, base+"?IncludeAudioUrls=false&SearchTerm=nothing-like-it&page=5", token, nil); r.Header.Get("Link") !=
		"<"+base+`?IncludeAudioUrls=false&SearchTerm=nothing-like-it&page=1&pageSize=500>; rel="prev"` {
		t.Errorf("past the end of an empty list: link %q", r.Header.Get("Link"))
	}
	for _, q := range []string{"?IncludeAudioUrls=maybe", "?IncludeAudioUrls=true&Filter=video",
		"?IncludeAudioUrls=true&pageSize=501", "?IncludeAudioUrls=true&pageSize=0", "?IncludeAudioUrls=true&page=0"} {
		if r := s.Do(t, http.MethodGet, base+q, token, nil); r.Status != 400 {
			t.Errorf("list %q: %d", q, r.Status)
		}
	}

	// Get and update.
	logo := base + "/" + url.PathEscape("brand/logos/logo.png")
	g := decode[model.FileModel](t, s.Do(t, http.MethodGet, logo, token, nil), 200)
	if g.Sha256 != img.Sha256 || asset(t, g, "original").URL == "" {
		t.Fatalf("get %+v", g)
	}
	if r := s.Do(t, http.MethodGet, base+"/nope.png", token, nil); r.Status != 404 {
		t.Fatalf("unknown file %d", r.Status)
	}
	if r := s.Do(t, http.MethodGet, base+"/"+url.PathEscape("../etc/passwd"), token, nil); r.Status != 400 {
		t.Fatalf("path trick %d", r.Status)
	}
	up := decode[model.FileModelResponse](t, s.Do(t, http.MethodPut, logo+"?Description=from+query", token, nil), 200)
	if up.File.Description != "from query" || up.Message == "" {
		t.Fatalf("update by query %+v", up)
	}
	up = decode[model.FileModelResponse](t, s.Do(t, http.MethodPut, logo, token, map[string]string{"description": "from body"}), 200)
	if up.File.Description != "from body" || !up.File.UpdatedAt.After(img.UpdatedAt) {
		t.Fatalf("update by body %+v", up)
	}
	if r := s.Do(t, http.MethodPut, logo+"?Description=x", token, map[string]string{"description": "y"}); r.Status != 400 {
		t.Fatalf("both: %d", r.Status)
	}
	if r := s.Do(t, http.MethodPut, logo, token, map[string]string{"description": strings.Repeat("d", 1001)}); r.Status != 400 {
		t.Fatalf("too long: %d", r.Status)
	}
	if r := s.Do(t, http.MethodPut, base+"/nope.png?Description=x", token, nil); r.Status != 404 {
		t.Fatalf("update unknown: %d", r.Status)
	}

	// Another tenant sees nothing.
	if r := s.Do(t, http.MethodGet, logo, otherToken, nil); r.Status != 404 {
		t.Fatalf("another tenant's token on our path: %d", r.Status)
	}
	if r := s.Do(t, http.MethodGet, "/v4/"+other+"/files/"+url.PathEscape("brand/logos/logo.png"), otherToken, nil); r.Status != 404 {
		t.Fatalf("another tenant's own path: %d", r.Status)
	}
	if l := decode[[]model.FileModel](t, s.Do(t, http.MethodGet, "/v4/"+other+"/files?IncludeAudioUrls=true", otherToken, nil), 200); len(l) != 0 {
		t.Fatalf("another tenant lists %+v", l)
	}
	if r := s.Do(t, http.MethodDelete, "/v4/"+other+"/files/siren.wav", otherToken, nil); r.Status != 404 {
		t.Fatalf("another tenant deletes: %d", r.Status)
	}

	// Delete: objects and metadata gone, once.
	if r := s.Do(t, http.MethodDelete, base+"/siren.wav", token, nil); r.Status != 204 {
		t.Fatalf("delete %d %s", r.Status, r.Body)
	}
	if r := s.Do(t, http.MethodDelete, base+"/siren.wav", token, nil); r.Status != 404 {
		t.Fatalf("second delete %d", r.Status)
	}
	if r := s.Do(t, http.MethodGet, base+"/siren.wav", token, nil); r.Status != 404 {
		t.Fatalf("get after delete %d", r.Status)
	}
	if keys := s.ObjectKeys(t, "tenants/"+tenant+"/"); len(keys) != 2+2 {
		t.Fatalf("objects after delete %v", keys)
	}
	assets := 0
	for _, f := range stored(t, s, tenant) {
		assets += len(f.Assets)
	}
	if assets != 4 {
		t.Fatalf("%d asset rows after delete", assets)
	}
	deleted := 0
	for _, e := range events(t, s, tenant, "file.deleted") {
		var p struct {
			FileName string `json:"fileName"`
		}
		if err := json.Unmarshal(e.Payload, &p); err != nil {
			t.Fatal(err)
		}
		if p.FileName == "siren.wav" {
			deleted++
		}
	}
	if deleted != 1 {
		t.Fatalf("%d file.deleted events", deleted)
	}
}

func TestUploadRejectsBadInput(t *testing.T) {
	t.Parallel()
	const limit = 2 << 20
	s := stacktest.Start(t, func(c *config.Config) { c.FileSizeLimit = limit })
	tenant := stacktest.NewTenant()
	token := s.Token(t, tenant, "content")
	pic := picture(40, 20)
	w := tone(t, 8000, 1, 0.5)
	decode[model.FileModel](t, post(t, s, tenant, token, std("taken.png", "image/png", pic)...), 201)

	drop := func(parts []part, name string) []part {
		var out []part
		for _, p := range parts {
			if p.name != name {
				out = append(out, p)
			}
		}
		return out
	}
	longWav := tone(t, 8000, 1, 121)
	// A tiny WAV that says it is sampled at 1 Hz: 8000 samples of it are
	// over two hours, which a voice version would stretch 8000 times.
	slowWav := wavHeader(1, 1, 8, 8000)
	slowWav = append(slowWav, bytes.Repeat([]byte{0x80}, 8000)...)
	// A WAV whose format chunk declares 4 GB, which a decoder that reads
	// the chunk whole would ask for.
	bombWav := wavHeader(8000, 1, 16, 2)
	binary.LittleEndian.PutUint32(bombWav[16:], 0xFFFFFFF0)
	bombWav = append(bombWav, 0, 0)
	cases := []struct {
		name   string
		parts  []part
		status int
		field  string
	}{
		{"no FileName", drop(std("a.png", "image/png", pic), "FileName"), 400, "body.FileName"},
		{"no ContentType", drop(std("a.png", "image/png", pic), "ContentType"), 400, "body.ContentType"},
		{"no ContentLength", drop(std("a.png", "image/png", pic), "ContentLength"), 400, "body.ContentLength"},
		{"no HttpFile", drop(std("a.png", "image/png", pic), "HttpFile"), 400, "body.HttpFile"},
		{"empty file", std("a.png", "image/png", []byte{}), 400, "body.HttpFile"},
		{"ContentLength too small", []part{text("FileName", "a.png"), text("ContentType", "image/png"), text("ContentLength", fmt.Sprint(len(pic)-1)), file(pic)}, 400, "body.ContentLength"},
		{"ContentLength too large", []part{text("FileName", "a.png"), text("ContentType", "image/png"), text("ContentLength", fmt.Sprint(len(pic)+10)), file(pic)}, 400, "body.ContentLength"},
		{"ContentLength after the file, wrong", []part{file(pic), text("FileName", "a.png"), text("ContentType", "image/png"), text("ContentLength", "7")}, 400, "body.ContentLength"},
		{"ContentLength not a number", []part{text("ContentLength", "lots"), file(pic)}, 400, "body.ContentLength"},
		{"declared type contradicts the bytes", std("a.png", "image/jpeg", pic), 400, "body.ContentType"},
		{"declared wav, bytes png", std("a.wav", "audio/wav", pic), 400, "body.ContentType"},
		{"text file", std("a.txt", "text/plain", []byte("just some words, not a picture")), 415, ""},
		{"pdf declared", std("a.pdf", "application/pdf", []byte("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj")), 415, ""},
		{"png declared as pdf", std("a.png", "application/pdf", pic), 415, ""},
		{"png declared as any type", std("a.png", "*/*", pic), 400, "body.ContentType"},
		{"png declared as any image", std("a.png", "image/*", pic), 400, "body.ContentType"},
		{"png declared as any image, with a parameter", std("a.png", "Image/*; q=1", pic), 400, "body.ContentType"},
		// The bytes, counted as they stream, are over the limit (the
		// declared ContentLength comes after the file). A declared length
		// over the limit before the file is refused before the bytes are
		// read: with megabytes unsent, the server then closes the
		// connection, and whether the client reads the 413 before the reset
		// depends on timing, so that path is tested with a small file.
		{"too large", []part{text("FileName", "big.png"), text("ContentType", "image/png"),
			file(append(append([]byte{}, pic...), make([]byte, limit)...)), text("ContentLength", fmt.Sprint(len(pic)+limit))}, 413, "body.HttpFile"},
		{"declared too large", []part{text("ContentLength", fmt.Sprint(limit+1)), file(pic)}, 413, "body.ContentLength"},
		{"dot-dot", std("../a.png", "image/png", pic), 400, "body.FileName"},
		{"absolute", std("/a.png", "image/png", pic), 400, "body.FileName"},
		{"control character", std("a\x07.png", "image/png", pic), 400, "body.FileName"},
		{"backslash", std(`a\b.png`, "image/png", pic), 400, "body.FileName"},
		{"line separator", std("a\u2028b.png", "image/png", pic), 400, "body.FileName"},
		{"paragraph separator", std("a\u2029b.png", "image/png", pic), 400, "body.FileName"},
		{"Hangul filler", std("\u3164.png", "image/png", pic), 400, "body.FileName"},
		{"Hangul choseong filler", std("a\u115Fb.png", "image/png", pic), 400, "body.FileName"},
		{"Hangul jungseong filler", std("a\u1160b.png", "image/png", pic), 400, "body.FileName"},
		{"halfwidth Hangul filler", std("a\uFFA0b.png", "image/png", pic), 400, "body.FileName"},
		{"blank braille pattern", std("a\u2800b.png", "image/png", pic), 400, "body.FileName"},
		{"zero-width space", std("a\u200Bb.png", "image/png", pic), 400, "body.FileName"},
		{"variation selector", std("a\uFE0Fb.png", "image/png", pic), 400, "body.FileName"},
		{"folder with a Hangul filler", std("a.png", "image/png", pic, text("FolderName", "x\u3164")), 400, "body.FolderName"},
		{"folder dot-dot", std("a.png", "image/png", pic, text("FolderName", "x/../..")), 400, "body.FolderName"},
		{"folder absolute", std("a.png", "image/png", pic, text("FolderName", "/etc")), 400, "body.FolderName"},
		{"name taken", std("taken.png", "image/png", pic), 409, ""},
		{"resize audio", std("a.wav", "audio/wav", w, text("ResizeImage", "true"), text("MaxWidth", "10")), 400, "body.ResizeImage"},
		{"resize without MaxWidth", std("a.png", "image/png", pic, text("ResizeImage", "true")), 400, "body.MaxWidth"},
		{"MaxWidth zero", std("a.png", "image/png", pic, text("ResizeImage", "true"), text("MaxWidth", "0")), 400, "body.MaxWidth"},
		{"voice for an image", std("a.png", "image/png", pic, text("EncodeForVoiceAudio", "true")), 400, "body.EncodeForVoiceAudio"},
		{"bad boolean", std("a.png", "image/png", pic, text("ResizeImage", "yes please")), 400, "body.ResizeImage"},
		{"EAS audio too long", std("long.wav", "audio/wav", longWav, text("EncodeForEasAudio", "true")), 400, "body.EncodeForEasAudio"},
		{"voice audio too long", std("long.wav", "audio/wav", longWav, text("EncodeForVoiceAudio", "true")), 400, "body.EncodeForVoiceAudio"},
		{"sample rate of 1 Hz", std("slow.wav", "audio/wav", slowWav, text("EncodeForVoiceAudio", "true")), 400, "body.HttpFile"},
		{"sample rate of 1 Hz, no versions", std("slow.wav", "audio/wav", slowWav), 400, "body.HttpFile"},
		{"sample rate over 96 kHz", std("fast.wav", "audio/wav", tone(t, 192000, 1, 0.1), text("EncodeForEasAudio", "true")), 400, "body.HttpFile"},
		{"nine channels", std("wide.wav", "audio/wav", tone(t, 8000, 9, 0.1)), 400, "body.HttpFile"},
		{"WAV chunk larger than the file", std("bomb.wav", "audio/wav", bombWav), 400, "body.HttpFile"},
		// 4200×4200 is under the 40 MP cap, but at 8 bytes a pixel it
		// decodes to 135 MiB, over the 128 MiB cap: refused from its header.
		{"16-bit image too large to decode", std("deep.png", "image/png", deepPNG(t, 4200, 4200)), 413, "body.HttpFile"},
		// 6300×6300 at 3 bytes a pixel is 114 MiB, but a progressive JPEG
		// also keeps 4 bytes of coefficients per sample while it decodes:
		// 568 MiB, refused from its header. The baseline one passes the
		// check and fails to decode (no scan follows its header).
		{"progressive JPEG too large to decode", std("prog.jpg", "image/jpeg", jpegHeader(6300, 6300, 0xC2)), 413, "body.HttpFile"},
		{"baseline JPEG header of the same size", std("base.jpg", "image/jpeg", jpegHeader(6300, 6300, 0xC0)), 400, "body.HttpFile"},
		{"corrupt png", std("bad.png", "image/png", pic[:60]), 400, "body.HttpFile"},
		{"FileName twice", append(std("a.png", "image/png", pic), text("FileName", "b.png")), 400, "body.FileName"},
		{"unknown part", std("a.png", "image/png", pic, text("Folder", "imgs")), 400, "body.Folder"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			r := post(t, s, tenant, token, c.parts...)
			if d := time.Since(start); d > 15*time.Second {
				t.Errorf("answered after %s", d)
			}
			if r.Status != c.status {
				t.Fatalf("status %d, want %d: %s", r.Status, c.status, r.Body)
			}
			if c.field != "" && !strings.Contains(string(r.Body), `"location":"`+c.field+`"`) {
				t.Fatalf("no failure at %s: %s", c.field, r.Body)
			}
			if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/problem+json") {
				t.Fatalf("content type %q", r.Header.Get("Content-Type"))
			}
		})
	}
	// Each boolean part is true or false and each integer part digits
	// without sign, spaces or leading zeros, which the refusal says, with
	// the value sent: 1, " true", +10 and 010 were taken.
	size := fmt.Sprint(len(pic))
	for _, c := range []struct {
		parts              []part
		field, value, want string
	}{
		{std("one.png", "image/png", pic, text("ResizeImage", "1"), text("MaxWidth", "10")), "ResizeImage", "1", "must be true or false"},
		{std("spaced.png", "image/png", pic, text("ResizeImage", " true"), text("MaxWidth", "10")), "ResizeImage", " true", "must be true or false"},
		{std("plus.png", "image/png", pic, text("ResizeImage", "true"), text("MaxWidth", "+10")), "MaxWidth", "+10",
			"must be a whole number from 1 to 10000, in digits without sign, spaces or leading zeros"},
		{std("zero.png", "image/png", pic, text("ResizeImage", "true"), text("MaxWidth", "010")), "MaxWidth", "010",
			"must be a whole number from 1 to 10000, in digits without sign, spaces or leading zeros"},
		{[]part{text("FileName", "len.png"), text("ContentType", "image/png"), text("ContentLength", "+"+size), file(pic)}, "ContentLength", "+" + size,
			"must be a whole number of 0 or more, in digits without sign, spaces or leading zeros"},
		{[]part{text("FileName", "len2.png"), text("ContentType", "image/png"), text("ContentLength", size+" "), file(pic)}, "ContentLength", size + " ",
			"must be a whole number of 0 or more, in digits without sign, spaces or leading zeros"},
	} {
		r := post(t, s, tenant, token, c.parts...)
		var p struct {
			Errors []struct{ Location, ErrorMessage, AttemptedValue string }
		}
		if r.Status != http.StatusBadRequest {
			t.Fatalf("%s %q: %d %s", c.field, c.value, r.Status, r.Body)
		}
		r.JSON(t, &p)
		if len(p.Errors) != 1 || p.Errors[0].Location != "body."+c.field || p.Errors[0].ErrorMessage != c.want || p.Errors[0].AttemptedValue != c.value {
			t.Fatalf("%s %q: %s", c.field, c.value, r.Body)
		}
	}
	// A chunked form (no declared length to refuse first) over its cap of
	// the limit and 1 MiB with a file within the limit: the bytes before the
	// file (a multipart preamble, which readers skip) are at fault, not the
	// file, whether the cap is hit before the first part, in the file's
	// first bytes or while the file streams with its declared length.
	big := tone(t, 8000, 1, 1)
	if len(big) < 2*media.SniffLen {
		t.Fatalf("the sound has %d bytes, too few to stream past the sniffed head", len(big))
	}
	preamble := func(n int) string { // n bytes of short lines
		line := strings.Repeat("x", 98) + "\r\n"
		return strings.Repeat(line, n/len(line)) + strings.Repeat("x", n%len(line))
	}
	padded := func(k int) (io.Reader, string) { // the cap falls k bytes into the file
		b, ct := body(std("big.wav", "audio/wav", big)...)
		raw := b.(*bytes.Buffer).Bytes()
		at := bytes.Index(raw, big)
		pre := preamble(limit+1<<20-at-k-2) + "\r\n"
		return io.MultiReader(strings.NewReader(pre), bytes.NewReader(raw)), ct
	}
	for name, k := range map[string]int{
		"before the first part":     -1 << 10,
		"in the file's first bytes": media.SniffLen / 2,
		"while the file streams":    len(big) - media.SniffLen/2,
	} {
		b, ct := padded(k)
		r := s.Do(t, http.MethodPost, "/v4/"+tenant+"/files", token, b, "Content-Type", ct)
		if r.Status != 413 || !strings.Contains(string(r.Body), `"location":"body"`) {
			t.Fatalf("cap hit %s: %d, want 413 naming the body: %s", name, r.Status, r.Body)
		}
	}
	// Not multipart at all.
	if r := s.Do(t, http.MethodPost, "/v4/"+tenant+"/files", token, map[string]string{"FileName": "a.png"}); r.Status != 415 {
		t.Fatalf("JSON body: %d %s", r.Status, r.Body)
	}
	// Nothing of the failed uploads is left behind.
	if n := len(stored(t, s, tenant)); n != 1 {
		t.Fatalf("%d file rows", n)
	}
	stacktest.Eventually(t, 30e9, "failed uploads' objects removed", func() bool {
		return len(s.ObjectKeys(t, "tenants/"+tenant+"/")) == 1
	})
}

// TestUploadPartsAreNamedOnce: every part of an upload is named in its
// refusal. A file given twice, as two parts or as a multipart/mixed part
// (RFC 2388's way of giving one field several files), is refused as given
// more than once; a part whose Content-Disposition is not form-data (which
// form readers drop), or that has no name, is refused saying so.
func TestUploadPartsAreNamedOnce(t *testing.T) {
	t.Parallel()
	s := stacktest.Start(t)
	tenant := stacktest.NewTenant()
	token := s.Token(t, tenant, "content")
	pic := picture(40, 20)
	head := fmt.Sprintf("--B\r\nContent-Disposition: form-data; name=\"FileName\"\r\n\r\na.png\r\n"+
		"--B\r\nContent-Disposition: form-data; name=\"ContentType\"\r\n\r\nimage/png\r\n"+
		"--B\r\nContent-Disposition: form-data; name=\"ContentLength\"\r\n\r\n%d\r\n", len(pic))
	file := func(disposition string) string {
		return "--B\r\nContent-Disposition: " + disposition + "\r\nContent-Type: image/png\r\n\r\n" + string(pic) + "\r\n"
	}
	cases := []struct {
		name, body, location, message string
	}{
		{"two file parts", file(`form-data; name="HttpFile"; filename="a.png"`) + file(`form-data; name="HttpFile"; filename="b.png"`),
			"body.HttpFile", "given more than once"},
		{"two files in a multipart/mixed part", "--B\r\nContent-Disposition: form-data; name=\"HttpFile\"\r\nContent-Type: multipart/mixed; boundary=C\r\n\r\n" +
			"--C\r\nContent-Disposition: attachment; filename=\"a.png\"\r\n\r\n" + string(pic) + "\r\n" +
			"--C\r\nContent-Disposition: file; filename=\"b.png\"\r\n\r\n" + string(pic) + "\r\n--C--\r\n\r\n",
			"body.HttpFile", "given more than once"},
		{"two attachment parts", file(`attachment; name="HttpFile"; filename="a.png"`) + file(`attachment; name="HttpFile"; filename="b.png"`),
			"body.HttpFile", "Content-Disposition attachment"},
		{"a file disposition", file(`file; name="HttpFile"; filename="a.png"`), "body.HttpFile", "Content-Disposition file"},
		{"a part without a name", file(`form-data; filename="a.png"`), "body", "without a name"},
		{"a part without a disposition", "--B\r\n\r\n" + string(pic) + "\r\n", "body", "without a name"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := s.Do(t, http.MethodPost, "/v4/"+tenant+"/files", token, strings.NewReader(head+c.body+"--B--\r\n"), "Content-Type", "multipart/form-data; boundary=B")
			var p struct {
				Errors []struct{ PropertyName, Location, ErrorMessage string }
			}
			r.JSON(t, &p)
			if r.Status != 400 || len(p.Errors) != 1 || p.Errors[0].Location != c.location ||
				p.Errors[0].PropertyName != strings.TrimPrefix(strings.TrimPrefix(c.location, "body"), ".") || !strings.Contains(p.Errors[0].ErrorMessage, c.message) {
				t.Fatalf("%d %s, want a failure at %s saying %q", r.Status, r.Body, c.location, c.message)
			}
		})
	}
	if n := len(stored(t, s, tenant)); n != 0 {
		t.Fatalf("%d file rows", n)
	}
}

// A client that declares a file over the limit before sending it, and
// sends it without waiting for an answer (no Expect: 100-continue), reads
// the 413 naming what was too large rather than a reset: the server
// answers, then reads and drops the rest of the body before it closes the
// connection. Both ways Go's client sends a body: with a Content-Length
// header (over the operation's limit, refused before the form is read) and
// chunked (refused at the ContentLength part).
func TestOversizeUploadIsAnsweredNotReset(t *testing.T) {
	t.Parallel()
	const limit = 2 << 20
	s := stacktest.StartAPI(t, func(c *config.Config) { c.FileSizeLimit = limit })
	tenant := stacktest.NewTenant()
	token := s.Token(t, tenant, "content")
	data := append(picture(40, 20), make([]byte, limit+3<<20)...)
	form, contentType := body(text("ContentLength", fmt.Sprint(len(data))), text("FileName", "big.png"), text("ContentType", "image/png"), file(data))
	raw := form.(*bytes.Buffer).Bytes()
	cases := []struct {
		name  string
		body  func() io.Reader
		field string
	}{
		{"Content-Length", func() io.Reader { return bytes.NewReader(raw) }, "header.Content-Length"},
		// A reader of unknown length is sent chunked.
		{"chunked", func() io.Reader { return io.MultiReader(bytes.NewReader(raw)) }, "body.ContentLength"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodPost, s.URL+"/v4/"+tenant+"/files", c.body())
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", contentType)
			req.Header.Set("Authorization", "Bearer "+token)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatalf("no answer: %v", err)
			}
			defer res.Body.Close()
			b, err := io.ReadAll(res.Body)
			if err != nil {
				t.Fatalf("answer cut short: %v", err)
			}
			if res.StatusCode != http.StatusRequestEntityTooLarge {
				t.Fatalf("status %d, want 413: %s", res.StatusCode, b)
			}
			if !strings.HasPrefix(res.Header.Get("Content-Type"), "application/problem+json") {
				t.Fatalf("content type %q", res.Header.Get("Content-Type"))
			}
			if !strings.Contains(string(b), `"location":"`+c.field+`"`) {
				t.Fatalf("no failure at %s: %s", c.field, b)
			}
		})
	}
}

func TestObjectStoreDown(t *testing.T) {
	t.Parallel()
	s := stacktest.Start(t)
	tenant := stacktest.NewTenant()
	token := s.Token(t, tenant, "content")
	pic := picture(20, 20)
	decode[model.FileModel](t, post(t, s, tenant, token, std("kept.png", "image/png", pic)...), 201)

	broken, err := minio.New("127.0.0.1:1", &minio.Options{Creds: credentials.NewStaticV4("x", "y", ""), MaxRetries: 1})
	if err != nil {
		t.Fatal(err)
	}
	working := s.Objects.Client
	s.Objects.Client = broken
	defer func() { s.Objects.Client = working }()

	for _, parts := range [][]part{std("new.png", "image/png", pic), {file(pic), text("FileName", "new.png"), text("ContentType", "image/png"), text("ContentLength", fmt.Sprint(len(pic)))}} {
		r := post(t, s, tenant, token, parts...)
		if r.Status != 503 || !strings.Contains(string(r.Body), "object store") {
			t.Fatalf("upload with the object store down: %d %s", r.Status, r.Body)
		}
	}
	if r := s.Do(t, http.MethodDelete, "/v4/"+tenant+"/files/kept.png", token, nil); r.Status != 503 {
		t.Fatalf("delete with the object store down: %d %s", r.Status, r.Body)
	}
	if n := len(stored(t, s, tenant)); n != 1 {
		t.Fatalf("%d file rows", n)
	}
	if n := len(events(t, s, tenant, "")); n != 1 {
		t.Fatalf("%d events", n)
	}
}

// An upload whose processing outlasts the wait is answered with a 503 that
// says so, and leaves nothing: the processing is cancelled, and what it
// wrote after the request gave up is removed once it has stopped.
func TestUploadThatTimesOutLeavesNothing(t *testing.T) {
	t.Parallel()
	s := stacktest.Start(t, func(c *config.Config) { c.FileProcessTimeout = time.Second })
	tenant := stacktest.NewTenant()
	token := s.Token(t, tenant, "content")
	// A minute at 96 kHz takes seconds to encode to both versions.
	w := tone(t, 96000, 1, 60)
	r := post(t, s, tenant, token, std("slow.wav", "audio/wav", w, text("EncodeForVoiceAudio", "true"), text("EncodeForEasAudio", "true"))...)
	if r.Status != 503 || !strings.Contains(string(r.Body), "did not finish within 1s") || !strings.Contains(string(r.Body), "nothing of it is kept") {
		t.Fatalf("status %d: %s", r.Status, r.Body)
	}
	if r.Header.Get("Retry-After") == "" {
		t.Fatal("no Retry-After")
	}
	running := func() (open, all int) {
		res, err := s.Temporal.ListWorkflow(context.Background(), &workflowservice.ListWorkflowExecutionsRequest{
			Query: fmt.Sprintf("WorkflowType = 'ProcessFile' AND TaskQueue = '%s'", s.Config.TemporalTaskQueue),
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range res.Executions {
			if e.Status == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
				open++
			}
		}
		return open, len(res.Executions)
	}
	stacktest.Eventually(t, 60*time.Second, "the processing to stop", func() bool {
		open, all := running()
		return all == 1 && open == 0
	})
	// The workflow closed; once the worker runs no activity either, what
	// is left stays.
	stacktest.Eventually(t, 60*time.Second, "the worker's activities to end", func() bool {
		mfs, err := s.Metrics.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			if mf.GetName() != "temporal_worker_task_slots_used" {
				continue
			}
			for _, m := range mf.GetMetric() {
				for _, l := range m.GetLabel() {
					if l.GetName() == "worker_type" && l.GetValue() == "ActivityWorker" && m.GetGauge().GetValue() > 0 {
						return false
					}
				}
			}
			return true
		}
		t.Fatal("no temporal_worker_task_slots_used metric")
		return false
	})
	stacktest.Eventually(t, 30*time.Second, "the upload's objects removed", func() bool {
		return len(s.ObjectKeys(t, "tenants/"+tenant+"/")) == 0
	})
	if n := len(stored(t, s, tenant)); n != 0 {
		t.Fatalf("%d file rows", n)
	}
	// The processing was cancelled and removes what it writes: the upload
	// released its claim on the objects.
	if cs := s.UploadClaims(t, tenant); len(cs) != 0 {
		t.Fatalf("claims left %+v", cs)
	}
	if r := s.Do(t, http.MethodGet, "/v4/"+tenant+"/files/slow.wav", token, nil); r.Status != 404 {
		t.Fatalf("get %d", r.Status)
	}
}

// A worker decodes at most TOCSIN_IMAGE_DECODE_CONCURRENCY images at once;
// the others wait for a slot and are then stored.
func TestImageDecodesAreBounded(t *testing.T) {
	t.Parallel()
	s := stacktest.Start(t, func(c *config.Config) { c.ImageDecodeConcurrency = 1 })
	tenant := stacktest.NewTenant()
	token := s.Token(t, tenant, "content")
	pic := picture(2500, 2500)
	metric := func(name string) (float64, bool) {
		mfs, err := s.Metrics.Gather()
		if err != nil {
			t.Error(err)
		}
		for _, mf := range mfs {
			if mf.GetName() == name {
				m := mf.GetMetric()[0]
				return m.GetGauge().GetValue() + m.GetCounter().GetValue(), true
			}
		}
		return 0, false
	}
	const n = 4
	done := make(chan stacktest.Response, n)
	for i := range n {
		go func() {
			done <- post(t, s, tenant, token, std(fmt.Sprintf("big%d.png", i), "image/png", pic, text("ResizeImage", "true"), text("MaxWidth", "100"))...)
		}()
	}
	most := 0.0
	for got := 0; got < n; {
		select {
		case r := <-done:
			got++
			if r.Status != 201 {
				t.Errorf("status %d: %s", r.Status, r.Body)
			}
		default:
			if v, _ := metric("tocsin_image_decodes"); v > most {
				most = v
			}
			time.Sleep(time.Millisecond)
		}
	}
	if most > 1 {
		t.Fatalf("%v images decoded at once", most)
	}
	if waits, ok := metric("tocsin_image_decode_waits_total"); !ok || waits < 1 {
		t.Fatalf("no upload waited for a decoding slot (%v, %v): the test did not overlap them", waits, ok)
	}
	if len(stored(t, s, tenant)) != n {
		t.Fatal("not all stored")
	}
}

// The list answers at most 500 files, however many the tenant has; the
// headers say how many there are and where the next page is.
func TestFileListIsBounded(t *testing.T) {
	t.Parallel()
	s := stacktest.Start(t)
	tenant := stacktest.NewTenant()
	token := s.Token(t, tenant, "content")
	st := storedfiles.New(s.DB, s.Objects)
	for i := range 501 {
		name := fmt.Sprintf("tone-%03d.wav", i)
		key := "tenants/" + tenant + "/files/" + name + "/original"
		if err := st.Create(context.Background(), storedfiles.NewFile{
			Tenant: tenant, FullName: name, FileName: name, Kind: "audio", ContentType: "audio/wav", SizeBytes: 1,
			ObjectPrefix: "tenants/" + tenant + "/files/" + name + "/",
			Assets:       []storedfiles.NewAsset{{Kind: "original", Key: key, ContentType: "audio/wav", SizeBytes: 1}},
		}); err != nil {
			t.Fatal(err)
		}
	}
	base := "/v4/" + tenant + "/files"
	r := s.Do(t, http.MethodGet, base+"?IncludeAudioUrls=true", token, nil)
	l := decode[[]model.FileModel](t, r, 200)
	if len(l) != 500 || l[499].FileName != "tone-499.wav" || r.Header.Get("X-Total-Count") != "501" ||
		!strings.Contains(r.Header.Get("Link"), "page=2&pageSize=500>; rel=\"next\"") {
		t.Fatalf("%d files, total %q, link %q", len(l), r.Header.Get("X-Total-Count"), r.Header.Get("Link"))
	}
	l = decode[[]model.FileModel](t, s.Do(t, http.MethodGet, base+"?IncludeAudioUrls=true&page=2", token, nil), 200)
	if len(l) != 1 || l[0].FileName != "tone-500.wav" || l[0].Assets[0].URL == "" {
		t.Fatalf("page 2: %+v", l)
	}
}

// Audio whose header is outside what tocsin takes is refused from its
// first bytes, before they travel to the object store or wait for a worker
// (this stack runs none).
func TestAbsurdAudioIsRefusedBeforeProcessing(t *testing.T) {
	t.Parallel()
	s := stacktest.StartAPI(t, func(c *config.Config) { c.FileProcessTimeout = 2 * time.Second })
	tenant := stacktest.NewTenant()
	token := s.Token(t, tenant, "content")
	slow := append(wavHeader(1, 1, 8, 8000), bytes.Repeat([]byte{0x80}, 8000)...)
	wide := append(wavHeader(8000, 12, 16, 100), make([]byte, 2400)...)
	for name, data := range map[string][]byte{"1 Hz": slow, "12 channels": wide, "192 kHz": tone(t, 192000, 1, 0.1)} {
		for _, parts := range [][]part{
			std("a.wav", "audio/wav", data, text("EncodeForVoiceAudio", "true")),
			{file(data), text("FileName", "a.wav"), text("ContentType", "audio/wav"), text("ContentLength", fmt.Sprint(len(data)))},
		} {
			r := post(t, s, tenant, token, parts...)
			if r.Status != 400 || !strings.Contains(string(r.Body), `"location":"body.HttpFile"`) {
				t.Fatalf("%s: status %d: %s", name, r.Status, r.Body)
			}
		}
	}
	if keys := s.ObjectKeys(t, "tenants/"+tenant+"/"); len(keys) != 0 {
		t.Fatalf("objects %v", keys)
	}
}

// counter returns the value of the stack's counter name, 0 when it has none.
func counter(t *testing.T, s *stacktest.Stack, name string) float64 {
	t.Helper()
	mfs, err := s.Metrics.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	return 0
}

// An upload whose API process is killed after the original reached the
// object store and before the file was recorded leaves objects no file
// refers to, and its claim on them. Once the claim outlives the upload's
// maximum life, the worker's sweep removes those objects, the versions its
// processing made after the kill among them, and the claim; recorded files
// keep theirs.
func TestUploadOfAKilledProcessIsSwept(t *testing.T) {
	t.Parallel()
	s := stacktest.StartAPI(t)
	tenant := stacktest.NewTenant()
	token := s.Token(t, tenant, "content")
	ctx := context.Background()
	files := "tenants/" + tenant + "/files/"
	pic := picture(40, 40)

	// No worker runs yet: the upload waits for its processing when its
	// process is killed.
	api := s.StartAPIProcess(t, func(c *config.Config) {
		c.FileProcessTimeout = 5 * time.Minute
		c.FileUploadMaxLife = 8 * time.Second
	})
	go func() {
		r, ct := body(std("killed.png", "image/png", pic, text("ResizeImage", "true"), text("MaxWidth", "10"))...)
		req, _ := http.NewRequest(http.MethodPost, api.URL+"/v4/"+tenant+"/files", r)
		req.Header.Set("Content-Type", ct)
		req.Header.Set("Authorization", "Bearer "+token)
		if res, err := http.DefaultClient.Do(req); err == nil {
			res.Body.Close()
		}
	}()
	stacktest.Eventually(t, 30*time.Second, "the original stored and its processing asked for", func() bool {
		n, err := storage.PendingStarts(ctx, s.DB)
		return err == nil && n == 1 && len(s.ObjectKeys(t, files)) == 1
	})
	api.Kill()
	orphan := s.UploadClaims(t, tenant)
	if len(orphan) != 1 || orphan[0].Expired || s.ObjectKeys(t, files)[0] != orphan[0].Prefix+"original" {
		t.Fatalf("the killed upload left claims %+v on objects %v", orphan, s.ObjectKeys(t, files))
	}
	prefix := orphan[0].Prefix

	// The worker comes up and carries out the start the killed process
	// left: the processing stores the resized version beside the
	// original, and nothing records the file.
	s.StartWorker(t, stacktest.WorkerOptions{})
	stacktest.Eventually(t, 60*time.Second, "the processing to start", func() bool {
		_, err := s.Temporal.DescribeWorkflowExecution(ctx, orphan[0].WorkflowID, "")
		return err == nil
	})
	if err := s.Temporal.GetWorkflow(ctx, orphan[0].WorkflowID, "").Get(ctx, nil); err != nil {
		t.Fatalf("the processing: %v", err)
	}
	if keys := s.ObjectKeys(t, prefix); len(keys) != 2 {
		t.Fatalf("the orphaned objects: %v", keys)
	}

	// Meanwhile a file is uploaded and recorded, and an upload that fails
	// removes its objects and its claim.
	decode[model.FileModel](t, post(t, s, tenant, token, std("kept.png", "image/png", pic)...), 201)
	if r := post(t, s, tenant, token, std("kept.png", "image/png", pic)...); r.Status != 409 {
		t.Fatalf("a second kept.png: %d %s", r.Status, r.Body)
	}
	if keys := s.ObjectKeys(t, files); len(keys) != 3 {
		t.Fatalf("objects before the sweep: %v", keys)
	}
	if cs := s.UploadClaims(t, tenant); len(cs) != 1 || cs[0].Prefix != prefix {
		t.Fatalf("claims besides the killed upload's: %+v", cs)
	}

	stacktest.Eventually(t, 30*time.Second, "the killed upload's claim to expire", func() bool {
		cs := s.UploadClaims(t, tenant)
		return len(cs) == 1 && cs[0].Expired
	})
	sweep := s.Temporal.ScheduleClient().GetHandle(ctx, dispatch.OrphanSweepScheduleID(s.Config.TemporalTaskQueue))
	if err := sweep.Trigger(ctx, client.ScheduleTriggerOptions{}); err != nil {
		t.Fatal(err)
	}
	stacktest.Eventually(t, 60*time.Second, "the orphaned objects and their claim removed", func() bool {
		return len(s.ObjectKeys(t, prefix)) == 0 && len(s.UploadClaims(t, tenant)) == 0
	})
	if keys := s.ObjectKeys(t, files); len(keys) != 1 || !strings.HasSuffix(keys[0], "/original") {
		t.Fatalf("objects after the sweep: %v", keys)
	}
	got := decode[model.FileModel](t, s.Do(t, http.MethodGet, "/v4/"+tenant+"/files/kept.png", token, nil), 200)
	if b := fetch(t, asset(t, got, "original").URL); !bytes.Equal(b, pic) {
		t.Fatal("the recorded file's original changed")
	}
	if n := counter(t, s, "tocsin_upload_orphan_objects_removed_total"); n != 2 {
		t.Fatalf("tocsin_upload_orphan_objects_removed_total = %v", n)
	}
	if fs := stored(t, s, tenant); len(fs) != 1 || fs[0].FullName != "kept.png" {
		t.Fatalf("files %+v", fs)
	}
}

// TestFileNamesAreNFC: a name written with composed or decomposed
// characters is one name: uploading the other form finds the name taken,
// and the path finds the file in either form.
func TestFileNamesAreNFC(t *testing.T) {
	t.Parallel()
	s := stacktest.Start(t)
	tenant := stacktest.NewTenant()
	token := s.Token(t, tenant, "content")
	const nfc, nfd = "odd/\u00C4rger.png", "odd/A\u0308rger.png"
	pic := picture(8, 8)
	f := decode[model.FileModel](t, post(t, s, tenant, token, std(nfd, "image/png", pic)...), 201)
	if f.FileName != nfc {
		t.Fatalf("stored as %q, want %q", f.FileName, nfc)
	}
	if r := post(t, s, tenant, token, std(nfc, "image/png", pic)...); r.Status != http.StatusConflict {
		t.Fatalf("the other form of the name: %d %s", r.Status, r.Body)
	}
	if r := post(t, s, tenant, token, std("A\u0308rger.png", "image/png", pic, text("FolderName", "odd"))...); r.Status != http.StatusConflict {
		t.Fatalf("the other form as file and folder: %d %s", r.Status, r.Body)
	}
	for _, name := range []string{nfc, nfd} {
		g := decode[model.FileModel](t, s.Do(t, http.MethodGet, "/v4/"+tenant+"/files/"+url.PathEscape(name), token, nil), 200)
		if g.FileName != nfc {
			t.Fatalf("get %q: %q", name, g.FileName)
		}
	}
	list := decode[[]model.FileModel](t, s.Do(t, http.MethodGet, "/v4/"+tenant+"/files", token, nil), 200)
	if len(list) != 1 {
		t.Fatalf("%d files", len(list))
	}
	if r := s.Do(t, http.MethodDelete, "/v4/"+tenant+"/files/"+url.PathEscape(nfd), token, nil); r.Status != http.StatusNoContent {
		t.Fatalf("delete by the other form: %d %s", r.Status, r.Body)
	}
}

// TestFileNamesTakeTheJoinersScriptsNeed: file and folder names follow
// the rule of names every name of the tenant follows (internal/names): an
// emoji sequence's zero-width joiner and the non-joiner of Persian are
// taken, a bidirectional override is a 400 naming the part.
func TestFileNamesTakeTheJoinersScriptsNeed(t *testing.T) {
	t.Parallel()
	s := stacktest.Shared(t)
	tenant := stacktest.NewTenant()
	token := s.Token(t, tenant, "content")
	pic := picture(8, 8)
	const folder, name = "\U0001F469\u200d\U0001F4BB team", "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645.png"
	f := decode[model.FileModel](t, post(t, s, tenant, token, std(name, "image/png", pic, text("FolderName", folder))...), 201)
	if f.FileName != folder+"/"+name {
		t.Fatalf("stored as %q", f.FileName)
	}
	for _, c := range []struct {
		parts []part
		field string
	}{
		{std("\u202egnp.exe", "image/png", pic), "body.FileName"},
		{std("a.png", "image/png", pic, text("FolderName", "a\u2066b\u2069")), "body.FolderName"},
	} {
		r := post(t, s, tenant, token, c.parts...)
		if r.Status != 400 || !strings.Contains(string(r.Body), c.field) || !strings.Contains(string(r.Body), "bidirectional") {
			t.Fatalf("%s: %d %s", c.field, r.Status, r.Body)
		}
	}
}

// A file stored under a name that the rules for new names now refuse (an
// invisible character) is still read, described and deleted by its name;
// a new file cannot take such a name.
func TestFileWithANameRefusedSinceIsReachable(t *testing.T) {
	t.Parallel()
	s := stacktest.Shared(t)
	tenant := stacktest.NewTenant()
	token := s.Token(t, tenant, "content")
	const name = "siren\u200b.wav"
	key := "tenants/" + tenant + "/files/old/original"
	if err := storedfiles.New(s.DB, s.Objects).Create(context.Background(), storedfiles.NewFile{
		Tenant: tenant, FullName: name, FileName: name, Kind: "audio", ContentType: "audio/wav", SizeBytes: 1,
		ObjectPrefix: "tenants/" + tenant + "/files/old/",
		Assets:       []storedfiles.NewAsset{{Kind: "original", Key: key, ContentType: "audio/wav", SizeBytes: 1}},
	}); err != nil {
		t.Fatal(err)
	}
	path := "/v4/" + tenant + "/files/" + url.PathEscape(name)
	if g := decode[model.FileModel](t, s.Do(t, http.MethodGet, path, token, nil), 200); g.FileName != name {
		t.Fatalf("get %+v", g)
	}
	decode[model.FileModelResponse](t, s.Do(t, http.MethodPut, path+"?Description=old", token, nil), 200)
	if r := s.Do(t, http.MethodDelete, path, token, nil); r.Status != 204 {
		t.Fatalf("delete %d %s", r.Status, r.Body)
	}
	if r := s.Do(t, http.MethodGet, path, token, nil); r.Status != 404 {
		t.Fatalf("get after delete %d", r.Status)
	}
	r := post(t, s, tenant, token, std(name, "audio/wav", wavHeader(8000, 1, 16, 0))...)
	if r.Status != 400 || !strings.Contains(string(r.Body), "invisible") {
		t.Fatalf("a new file of that name: %d %s", r.Status, r.Body)
	}
}
