package media

import (
	"image"
	"image/draw"
	"math"

	"github.com/disintegration/imaging"
)

// taps are the weights of one axis of a resampling: output position i is
// the sum of the input positions start[i], start[i]+1, … times weights[i].
type taps struct {
	start   []int
	weights [][]float32
	// most is the largest number of weights of one position.
	most int
}

// lanczosTaps are the taps that take n input positions to m, with the
// Lanczos filter (3 lobes) and the weights imaging.Resize computes for it,
// normalised to sum to 1.
func lanczosTaps(m, n int) taps {
	filter := imaging.Lanczos
	du := float64(n) / float64(m)
	scale := max(du, 1)
	ru := math.Ceil(scale * filter.Support)
	t := taps{start: make([]int, m), weights: make([][]float32, m)}
	all := make([]float32, 0, m*min(int(2*ru+1), n))
	var ws []float64
	for v := range m {
		fu := (float64(v)+0.5)*du - 0.5
		begin := max(int(math.Ceil(fu-ru)), 0)
		end := min(int(math.Floor(fu+ru)), n-1)
		ws = ws[:0]
		var sum float64
		for u := begin; u <= end; u++ {
			w := filter.Kernel((float64(u) - fu) / scale)
			ws = append(ws, w)
			sum += w
		}
		first := len(all)
		for _, w := range ws {
			if sum != 0 {
				w /= sum
			}
			all = append(all, float32(w))
		}
		t.start[v], t.weights[v] = begin, all[first:len(all):len(all)]
		t.most = max(t.most, len(ws))
	}
	return t
}

// bandLines is how many rows (or columns) of the source scale converts at
// a time.
const bandLines = 16

// scale returns src resampled to the w×h image shown once the EXIF
// orientation (1-8) is applied to it, with the Lanczos filter of
// imaging.Resize and as imaging resizes the turned image: a pass along the
// rows as shown, whose results are kept within a pixel's range, then one
// along the columns.
//
// It never makes a full-size copy of src. A row as shown is a row of src
// (orientations 1-4, maybe run backwards) or a column (5-8); src is read
// bandLines of those at a time, converted to premultiplied RGBA by
// image/draw (which has fast paths for the types the decoders return).
// Of the first pass only the rows the second still reads are kept, a ring
// of about 6 × (source height / output height) rows of the output's width.
// Besides the output, that is a few times the source's width or height in
// bytes and floats, whatever the image.
func scale(src image.Image, orientation, w, h int) *image.NRGBA {
	sb := src.Bounds()
	columns := orientation >= 5
	sw, sh := sb.Dx(), sb.Dy() // src's size as shown
	if columns {
		sw, sh = sh, sw
	}
	across, down := lanczosTaps(w, sw), lanczosTaps(h, sh)
	dst := image.NewNRGBA(image.Rect(0, 0, w, h))

	// The band of src holding rows as shown [bandStart, bandStart+bandLines).
	bandBuf := make([]uint8, bandLines*sw*4)
	var band *image.RGBA
	bandStart := -bandLines
	// line returns the pixels of row y as shown, from band: the offset of
	// its first pixel and the step to the next.
	line := func(y int) (px []uint8, off, step int) {
		if y >= bandStart+bandLines {
			bandStart = y - y%bandLines
			n := min(bandLines, sh-bandStart)
			// The lines of src that are rows bandStart… as shown: from the
			// top (or left), or, for orientations 3, 4, 7 and 8, from the
			// bottom (or right).
			first := bandStart
			if orientation == 3 || orientation == 4 || orientation == 7 || orientation == 8 {
				first = sh - bandStart - n
			}
			r := image.Rect(sb.Min.X, sb.Min.Y+first, sb.Max.X, sb.Min.Y+first+n)
			if columns {
				r = image.Rect(sb.Min.X+first, sb.Min.Y, sb.Min.X+first+n, sb.Max.Y)
			}
			band = &image.RGBA{Pix: bandBuf[:r.Dx()*r.Dy()*4], Stride: r.Dx() * 4, Rect: r}
			draw.Draw(band, r, src, r.Min, draw.Src)
		}
		// Row y as shown starts at the pixel of src at (x, sy) and runs
		// along x (or, for columns, along y) forwards or backwards.
		fromEnd := orientation == 3 || orientation == 4 || orientation == 7 || orientation == 8
		backwards := orientation == 2 || orientation == 3 || orientation == 6 || orientation == 7
		k := y
		if fromEnd {
			k = sh - 1 - y
		}
		x0, y0 := sb.Min.X, sb.Min.Y+k
		step = 4
		if columns {
			x0, y0 = sb.Min.X+k, sb.Min.Y
			step = band.Stride
		}
		if backwards {
			if columns {
				y0 = sb.Max.Y - 1
			} else {
				x0 = sb.Max.X - 1
			}
			step = -step
		}
		return band.Pix, band.PixOffset(x0, y0), step
	}

	n := down.most
	ringBuf := make([]float32, n*w*4)
	ring := func(y int) []float32 { i := y % n * w * 4; return ringBuf[i : i+w*4 : i+w*4] }
	acc := make([]float32, w*4)
	next := 0 // the next row as shown for the first pass
	for y := range h {
		first, ws := down.start[y], down.weights[y]
		for ; next < first+len(ws); next++ {
			px, off, step := line(next)
			horizontal(ring(next), px, off, step, across)
		}
		clear(acc)
		for k, wk := range ws {
			for i, v := range ring(first + k) {
				acc[i] += wk * v
			}
		}
		d := dst.Pix[y*dst.Stride : y*dst.Stride+w*4]
		for x := range w {
			a := acc[x*4+3]
			if a <= 0 {
				continue
			}
			d[x*4] = clamp8(acc[x*4] * 255 / a)
			d[x*4+1] = clamp8(acc[x*4+1] * 255 / a)
			d[x*4+2] = clamp8(acc[x*4+2] * 255 / a)
			d[x*4+3] = clamp8(a)
		}
	}
	return dst
}

// horizontal resamples one row of premultiplied RGBA pixels into out,
// four floats a pixel: the row's pixel i is at px[off+i*step:].
func horizontal(out []float32, px []uint8, off, step int, t taps) {
	for x, s := range t.start {
		var r, g, b, a float32
		for k, w := range t.weights[x] {
			i := off + (s+k)*step
			q := px[i : i+4 : i+4]
			r += w * float32(q[0])
			g += w * float32(q[1])
			b += w * float32(q[2])
			a += w * float32(q[3])
		}
		// Kept to what a pixel can hold, as imaging keeps it in bytes (a
		// colour and an opacity of 0 to 255 each), so that the overshoot of
		// one pass is not carried into the next.
		o := out[x*4 : x*4+4 : x*4+4]
		if a <= 0 {
			o[0], o[1], o[2], o[3] = 0, 0, 0, 0
			continue
		}
		ac := min(a, 255)
		k := ac / a
		o[0], o[1], o[2], o[3] = min(max(r*k, 0), ac), min(max(g*k, 0), ac), min(max(b*k, 0), ac), ac
	}
}

// clamp8 rounds v to a byte, as imaging does.
func clamp8(v float32) uint8 {
	switch i := int64(v + 0.5); {
	case i > 255:
		return 255
	case i > 0:
		return uint8(i)
	}
	return 0
}
