package geo

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

func TestParseGeometry(t *testing.T) {
	t.Parallel()
	square := `[[[-87.7,41.8],[-87.6,41.8],[-87.6,41.9],[-87.7,41.9],[-87.7,41.8]]]`
	cases := []struct {
		name, typ, coords, err string
	}{
		{"polygon", "Polygon", square, ""},
		{"multipolygon", "MultiPolygon", "[" + square + "]", ""},
		{"with hole", "Polygon", `[[[0,0],[10,0],[10,10],[0,10],[0,0]],[[2,2],[3,2],[3,3],[2,2]]]`, ""},
		{"not closed", "Polygon", `[[[0,0],[1,0],[1,1],[0,1]]]`, "not closed"},
		{"too few", "Polygon", `[[[0,0],[1,0],[0,0]]]`, "at least 4"},
		{"out of range", "Polygon", `[[[0,0],[200,0],[1,1],[0,0]]]`, "outside"},
		{"no area", "Polygon", `[[[0,0],[1,1],[2,2],[0,0]]]`, "no area"},
		{"not numbers", "Polygon", `[[["a","b"]]]`, "array of rings"},
		{"point", "Point", `[1,2]`, "not supported"},
		{"empty", "Polygon", ``, "missing"},
		{"empty multi", "MultiPolygon", `[]`, "at least one"},
		{"across the antimeridian", "Polygon", `[[[179,39],[-179,39],[-179,41],[179,41],[179,39]]]`, "antimeridian"},
		{"up to the antimeridian", "Polygon", `[[[179,39],[180,39],[180,41],[179,41],[179,39]]]`, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseGeometry(c.typ, json.RawMessage(c.coords))
			if c.err == "" && err != nil {
				t.Fatal(err)
			}
			if c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
				t.Fatalf("error %v, want %q", err, c.err)
			}
		})
	}
}

func TestLiteralAndBounds(t *testing.T) {
	t.Parallel()
	ps, err := ParseGeometry("Polygon", json.RawMessage(`[[[-87.7,41.8],[-87.6,41.8],[-87.6,41.9],[-87.7,41.8]]]`))
	if err != nil {
		t.Fatal(err)
	}
	if got := Literal(ps[0].Outer); got != "((-87.7,41.8),(-87.6,41.8),(-87.6,41.9),(-87.7,41.8))" {
		t.Fatal(got)
	}
	b := ps[0].Bounds()
	if b.MinLat != 41.8 || b.MaxLat != 41.9 || b.MinLng != -87.7 || b.MaxLng != -87.6 {
		t.Fatalf("%+v", b)
	}
}

func TestCircle(t *testing.T) {
	t.Parallel()
	// One degree of latitude is about 111.2 km.
	if d := Haversine(0, 0, 1, 0); math.Abs(d-111195) > 100 {
		t.Fatalf("distance %f", d)
	}
	b := CircleBounds(41.88, -87.63, 1000)
	for _, pt := range [][2]float64{{41.889, -87.63}, {41.88, -87.618}} {
		if Haversine(41.88, -87.63, pt[0], pt[1]) <= 1000 && (pt[0] > b.MaxLat || pt[1] > b.MaxLng) {
			t.Fatalf("point %v inside the circle but outside the box %+v", pt, b)
		}
	}
	if b.MaxLat-b.MinLat > 0.02 || b.MaxLng-b.MinLng > 0.03 {
		t.Fatalf("box too large: %+v", b)
	}
}

// TestCircleBoundsNearPoles checks that the box holds the whole circle
// where meridians converge: walking round the circle's edge never leaves it.
func TestCircleBoundsNearPoles(t *testing.T) {
	t.Parallel()
	const radius = 44000
	for _, c := range [][2]float64{{89.5, 0}, {-89.5, 170}, {85, -179.9}, {60, 10}, {89.95, 90}} {
		b := CircleBounds(c[0], c[1], radius)
		rad, r := math.Pi/180, radius/EarthRadiusMeters
		for i := range 3600 {
			// The point at distance r and bearing i/10 degrees.
			brg, lat1 := float64(i)/10*rad, c[0]*rad
			lat := math.Asin(math.Sin(lat1)*math.Cos(r) + math.Cos(lat1)*math.Sin(r)*math.Cos(brg))
			lng := c[1]*rad + math.Atan2(math.Sin(brg)*math.Sin(r)*math.Cos(lat1), math.Cos(r)-math.Sin(lat1)*math.Sin(lat))
			lat, lng = lat/rad, math.Remainder(lng/rad, 360)
			const eps = 1e-9
			if lat < b.MinLat-eps || lat > b.MaxLat+eps || lng < b.MinLng-eps || lng > b.MaxLng+eps {
				t.Fatalf("centre %v: edge point (%g, %g) outside the box %+v", c, lat, lng, b)
			}
		}
	}
}

// Haversine is the great-circle distance in meters, the oracle the
// bounding boxes are checked against.
func Haversine(lat1, lng1, lat2, lng2 float64) float64 {
	rad := math.Pi / 180
	dLat, dLng := (lat2-lat1)*rad, (lng2-lng1)*rad
	a := math.Sin(dLat/2)*math.Sin(dLat/2) + math.Cos(lat1*rad)*math.Cos(lat2*rad)*math.Sin(dLng/2)*math.Sin(dLng/2)
	return 2 * EarthRadiusMeters * math.Asin(math.Sqrt(a))
}
