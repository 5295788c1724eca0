// Package geo checks the areas of geo-targeted alerts and turns them into
// what PostgreSQL's built-in geometric types understand: polygons with their
// bounding boxes, and circles as a bounding box plus a haversine distance.
package geo

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// EarthRadiusMeters is the mean Earth radius the haversine distance uses.
const EarthRadiusMeters = 6371008.8

// MaxPositions bounds the positions of one area: of every ring of every
// polygon it has.
const MaxPositions = 10000

// Box is a latitude/longitude bounding box.
type Box struct {
	MinLat, MaxLat, MinLng, MaxLng float64
}

// Polygon is an outer ring with optional holes; each ring is a list of
// [lng, lat] positions, closed.
type Polygon struct {
	Outer [][2]float64
	Holes [][][2]float64
}

// Positions counts the positions of every ring of p.
func (p Polygon) Positions() int {
	n := len(p.Outer)
	for _, h := range p.Holes {
		n += len(h)
	}
	return n
}

// Bounds is the bounding box of the outer ring.
func (p Polygon) Bounds() Box {
	b := Box{MinLat: 90, MaxLat: -90, MinLng: 180, MaxLng: -180}
	for _, pt := range p.Outer {
		b.MinLng, b.MaxLng = math.Min(b.MinLng, pt[0]), math.Max(b.MaxLng, pt[0])
		b.MinLat, b.MaxLat = math.Min(b.MinLat, pt[1]), math.Max(b.MaxLat, pt[1])
	}
	return b
}

// Literal is the ring as a PostgreSQL polygon literal, x = longitude,
// y = latitude: "((x1,y1),(x2,y2),...)".
func Literal(ring [][2]float64) string {
	var b strings.Builder
	b.WriteByte('(')
	for i, pt := range ring {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('(')
		b.WriteString(strconv.FormatFloat(pt[0], 'f', -1, 64))
		b.WriteByte(',')
		b.WriteString(strconv.FormatFloat(pt[1], 'f', -1, 64))
		b.WriteByte(')')
	}
	b.WriteByte(')')
	return b.String()
}

// ParseGeometry reads the coordinates of a GeoJSON Polygon or MultiPolygon.
// Errors describe what is wrong in words a client can act on.
func ParseGeometry(typ string, coords json.RawMessage) ([]Polygon, error) {
	if len(coords) == 0 {
		return nil, fmt.Errorf("coordinates are missing")
	}
	switch typ {
	case "Polygon":
		var rings [][][]float64
		if err := json.Unmarshal(coords, &rings); err != nil {
			return nil, fmt.Errorf("a Polygon's coordinates must be an array of rings of [longitude, latitude] positions")
		}
		p, err := polygon(rings)
		if err != nil {
			return nil, err
		}
		return []Polygon{p}, nil
	case "MultiPolygon":
		var polys [][][][]float64
		if err := json.Unmarshal(coords, &polys); err != nil {
			return nil, fmt.Errorf("a MultiPolygon's coordinates must be an array of polygons")
		}
		if len(polys) == 0 {
			return nil, fmt.Errorf("a MultiPolygon needs at least one polygon")
		}
		var out []Polygon
		for i, rings := range polys {
			p, err := polygon(rings)
			if err != nil {
				return nil, fmt.Errorf("polygon %d: %w", i, err)
			}
			out = append(out, p)
		}
		return out, nil
	default:
		return nil, fmt.Errorf("geometry type %q is not supported; use Polygon or MultiPolygon", typ)
	}
}

func polygon(rings [][][]float64) (Polygon, error) {
	if len(rings) == 0 {
		return Polygon{}, fmt.Errorf("a polygon needs an outer ring")
	}
	var p Polygon
	total := 0
	for i, r := range rings {
		ring, err := checkRing(r)
		if err != nil {
			return Polygon{}, fmt.Errorf("ring %d: %w", i, err)
		}
		total += len(ring)
		if total > MaxPositions {
			return Polygon{}, fmt.Errorf("more than %d positions", MaxPositions)
		}
		if i == 0 {
			p.Outer = ring
		} else {
			p.Holes = append(p.Holes, ring)
		}
	}
	return p, nil
}

func checkRing(r [][]float64) ([][2]float64, error) {
	if len(r) < 4 {
		return nil, fmt.Errorf("a linear ring needs at least 4 positions, got %d", len(r))
	}
	out := make([][2]float64, len(r))
	for i, pos := range r {
		if len(pos) < 2 || len(pos) > 3 {
			return nil, fmt.Errorf("position %d must be [longitude, latitude]", i)
		}
		lng, lat := pos[0], pos[1]
		if math.IsNaN(lng) || math.IsNaN(lat) || lng < -180 || lng > 180 || lat < -90 || lat > 90 {
			return nil, fmt.Errorf("position %d [%g, %g] is outside longitude -180..180, latitude -90..90", i, lng, lat)
		}
		out[i] = [2]float64{lng, lat}
	}
	if out[0] != out[len(out)-1] {
		return nil, fmt.Errorf("the ring is not closed: its first and last positions differ")
	}
	if area(out) == 0 {
		return nil, fmt.Errorf("the ring has no area")
	}
	if err := CheckAntimeridian(out); err != nil {
		return nil, err
	}
	return out, nil
}

// area is the shoelace area in squared degrees (only compared with zero).
func area(ring [][2]float64) float64 {
	s := 0.0
	for i := 0; i+1 < len(ring); i++ {
		s += ring[i][0]*ring[i+1][1] - ring[i+1][0]*ring[i][1]
	}
	return math.Abs(s / 2)
}

// CircleBounds is a bounding box that contains every point within radius
// meters of (lat, lng): its longitudes are the widest the circle reaches
// (the tangent meridians), and all of them when the circle takes in a pole
// or its box would cross the antimeridian, so that one range serves.
func CircleBounds(lat, lng, radius float64) Box {
	r := radius / EarthRadiusMeters // radians of arc
	dLat := r * 180 / math.Pi
	b := Box{MinLat: math.Max(-90, lat-dLat), MaxLat: math.Min(90, lat+dLat), MinLng: -180, MaxLng: 180}
	if b.MinLat > -90 && b.MaxLat < 90 {
		// The circle reaches neither pole, so sin r < cos lat.
		dLng := math.Asin(math.Sin(r)/math.Cos(lat*math.Pi/180)) * 180 / math.Pi
		if lng-dLng >= -180 && lng+dLng <= 180 {
			b.MinLng, b.MaxLng = lng-dLng, lng+dLng
		}
	}
	return b
}

// CheckAntimeridian refuses a ring with an edge that crosses the
// antimeridian (two consecutive positions, [longitude, latitude], more
// than 180° of longitude apart): read on a plane such a ring goes the long
// way round the world.
func CheckAntimeridian(ring [][2]float64) error {
	for i := range ring {
		j := (i + 1) % len(ring)
		if math.Abs(ring[i][0]-ring[j][0]) > 180 {
			return fmt.Errorf("positions %d and %d are more than 180° of longitude apart: a polygon must not cross the antimeridian (longitude ±180); split it in two (RFC 7946 3.1.9)", i, j)
		}
	}
	return nil
}
