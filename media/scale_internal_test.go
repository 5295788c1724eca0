package media

import (
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
	"testing"

	"github.com/disintegration/imaging"
)

// TestScaleMatchesImaging: scale gives, for every EXIF orientation and
// every kind of image the decoders return, what imaging gave when it
// turned the whole image and then resized it (imaging.Resize, Lanczos):
// the same size, and the same pixels within rounding (scale keeps the
// pass between its two filters in floats where imaging rounds it to
// bytes, and reads translucent pixels premultiplied), compared
// premultiplied, as they show. The sizes are no multiples of the bands
// scale reads.
func TestScaleMatchesImaging(t *testing.T) {
	const w, h = 123, 77
	nrgba := image.NewNRGBA(image.Rect(0, 0, w, h))
	gray := image.NewGray(image.Rect(0, 0, w, h))
	pal := image.NewPaletted(image.Rect(0, 0, w, h), color.Palette{color.Black, color.White, color.RGBA{200, 30, 40, 255}, color.NRGBA{10, 200, 90, 128}})
	for y := range h {
		for x := range w {
			nrgba.SetNRGBA(x, y, color.NRGBA{uint8(x * 2), uint8(y * 3), uint8(x ^ y), uint8(255 - (x+y)%200)})
			gray.SetGray(x, y, color.Gray{uint8(x*x + y)})
			pal.SetColorIndex(x, y, uint8((x/3+y/5)%4))
		}
	}
	var j bytes.Buffer
	if err := jpeg.Encode(&j, nrgba, &jpeg.Options{Quality: 95}); err != nil {
		t.Fatal(err)
	}
	ycbcr, err := jpeg.Decode(&j)
	if err != nil {
		t.Fatal(err)
	}
	// An image whose bounds do not start at 0, 0.
	sub := nrgba.SubImage(image.Rect(10, 5, w, h))
	turn := map[int]func(image.Image) *image.NRGBA{1: imaging.Clone, 2: imaging.FlipH, 3: imaging.Rotate180, 4: imaging.FlipV,
		5: imaging.Transpose, 6: imaging.Rotate270, 7: imaging.Transverse, 8: imaging.Rotate90}
	for name, src := range map[string]image.Image{"NRGBA": nrgba, "Gray": gray, "Paletted": pal, "YCbCr": ycbcr, "offset": sub} {
		for o := 1; o <= 8; o++ {
			for _, width := range []int{1, 9, 40, 70} {
				want := imaging.Resize(turn[o](src), width, 0, imaging.Lanczos)
				got := scale(src, o, width, want.Bounds().Dy())
				if got.Bounds() != want.Bounds() {
					t.Fatalf("%s, orientation %d, width %d: %v, want %v", name, o, width, got.Bounds(), want.Bounds())
				}
				worst, sum := 0, 0
				for i := 0; i < len(got.Pix); i += 4 {
					g, w := got.Pix[i:i+4], want.Pix[i:i+4]
					for c := range 4 {
						pg, pw := int(g[c]), int(w[c])
						if c < 3 {
							pg, pw = pg*int(g[3])/255, pw*int(w[3])/255
						}
						worst = max(worst, pg-pw, pw-pg)
						sum += max(pg-pw, pw-pg)
					}
				}
				if mean := float64(sum) / float64(len(got.Pix)); worst > 2 || mean > 1 {
					t.Errorf("%s, orientation %d, width %d: pixels differ by %d at most, %.2f on average", name, o, width, worst, mean)
				}
			}
		}
	}
}
