package media_test

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/jpeg"
	"image/png"
	"io"
	"runtime"
	"sync"
	"testing"

	"github.com/tocsin/tocsin/internal/memtest"
	"github.com/tocsin/tocsin/media"
)

// pattern is a w×h RGBA picture with detail at every scale, so that
// encoders and the filter have something to do.
func pattern(w, h int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		row := img.Pix[y*img.Stride:]
		for x := range w {
			row[x*4+0] = uint8(x ^ y)
			row[x*4+1] = uint8(x*7 + y*3)
			row[x*4+2] = uint8((x / 64) * 40)
			row[x*4+3] = 255
		}
	}
	return img
}

// withOrientation inserts an EXIF segment giving orientation o (1-8) after
// the start of the JPEG j.
func withOrientation(j []byte, o uint16) []byte {
	var tiff bytes.Buffer
	tiff.WriteString("MM\x00\x2a")
	_ = binary.Write(&tiff, binary.BigEndian, uint32(8))           // IFD0 offset
	_ = binary.Write(&tiff, binary.BigEndian, uint16(1))           // one entry
	_ = binary.Write(&tiff, binary.BigEndian, []uint16{0x0112, 3}) // Orientation, SHORT
	_ = binary.Write(&tiff, binary.BigEndian, uint32(1))           // count
	_ = binary.Write(&tiff, binary.BigEndian, []uint16{o, 0})      // value, padding
	_ = binary.Write(&tiff, binary.BigEndian, uint32(0))           // no next IFD
	seg := append([]byte("Exif\x00\x00"), tiff.Bytes()...)
	out := append([]byte{0xFF, 0xD8, 0xFF, 0xE1}, byte((len(seg)+2)>>8), byte(len(seg)+2))
	out = append(out, seg...)
	return append(out, j[2:]...)
}

// Files at the decoding cap, made once per process.
var (
	largePNG, largeJPEG []byte
	largeOnce           sync.Once
)

func largeImages(b *testing.B) {
	b.Helper()
	largeOnce.Do(func() {
		// 6000×5592 8-bit RGBA: 134,208,000 bytes decoded, just under
		// MaxDecodedBytes (134,217,728).
		var p bytes.Buffer
		if err := (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&p, pattern(6000, 5592)); err != nil {
			b.Fatal(err)
		}
		largePNG = p.Bytes()
		// 8000×5000, MaxPixels, baseline 4:2:0, turned a quarter by EXIF
		// (orientation 6): 5000 wide as shown.
		var j bytes.Buffer
		if err := jpeg.Encode(&j, pattern(8000, 5000), &jpeg.Options{Quality: 90}); err != nil {
			b.Fatal(err)
		}
		largeJPEG = withOrientation(j.Bytes(), 6)
	})
}

// BenchmarkResizeLargestImage does what ProcessFile does with an upload
// at the decoding cap that asks for a resized version: a 6000×5592 RGBA PNG
// (128 MiB decoded) and an 8000×5000 JPEG turned by EXIF (40 megapixels),
// scaled to 1000 pixels wide and to one pixel narrower than they are. It
// reports the bytes allocated (B/op) and how far the heap in use rose at
// its peak above what it was before.
func BenchmarkResizeLargestImage(b *testing.B) {
	largeImages(b)
	for _, c := range []struct {
		name     string
		file     *[]byte
		ct       string
		maxWidth int
	}{
		{"png-6000x5592-to-1000", &largePNG, media.PNG, 1000},
		{"png-6000x5592-to-5999", &largePNG, media.PNG, 5999},
		{"jpeg-8000x5000-turned-to-1000", &largeJPEG, media.JPEG, 1000},
		{"jpeg-8000x5000-turned-to-4999", &largeJPEG, media.JPEG, 4999},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			var growth uint64
			for b.Loop() {
				runtime.GC()
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				stop := memtest.PeakHeap()
				processImage(b, *c.file, c.ct, c.maxWidth)
				if p := stop(); p > ms.HeapInuse {
					growth = max(growth, p-ms.HeapInuse)
				}
			}
			b.ReportMetric(float64(growth)/(1<<20), "peak-heap-growth-MiB")
		})
	}
}

// processImage checks and resizes an image as ProcessFile does.
func processImage(b *testing.B, file []byte, ct string, maxWidth int) {
	if _, v, err := media.ResizeImage(bytes.NewReader(file), ct, maxWidth, io.Discard); err != nil || v == nil {
		b.Fatal(v, err)
	}
}
