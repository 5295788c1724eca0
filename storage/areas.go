package storage

import (
	"strconv"

	"github.com/tocsin/tocsin/alert"
	"github.com/tocsin/tocsin/internal/geo"
)

// Args are the values of a statement's parameters as the statement is
// written: Add appends one and returns its placeholder.
type Args struct{ Values []any }

// Add appends v and returns its placeholder ($n).
func (a *Args) Add(v any) string {
	a.Values = append(a.Values, v)
	return "$" + strconv.Itoa(len(a.Values))
}

func float(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// InsidePlace is the one rule of "inside an alert's areas", for
// contacts' locations and ETN's address points alike: the condition that
// the point at latCol, lngCol lies inside the place p, its values added
// to a. Inside a polygon is inside its outer ring and in none of its holes
// (PostgreSQL's polygon @> point on (longitude, latitude)); inside a
// circle is within its radius by the haversine distance. Both first hold
// the point to the place's bounding box, written as constants, which the
// (tenant_id, latitude, longitude) indexes serve.
func InsidePlace(a *Args, p alert.Place, latCol, lngCol string) string {
	pt := "point(" + lngCol + ", " + latCol + ")"
	if g := p.Polygon; g != nil {
		q := "(" + latCol + " BETWEEN " + float(g.MinLat) + " AND " + float(g.MaxLat) +
			" AND " + lngCol + " BETWEEN " + float(g.MinLng) + " AND " + float(g.MaxLng) +
			" AND " + a.Add(g.Outer) + "::polygon @> " + pt
		for _, h := range g.Holes {
			q += " AND NOT (" + a.Add(h) + "::polygon @> " + pt + ")"
		}
		return q + ")"
	}
	c := p.Circle
	lat, lng := a.Add(c.Lat), a.Add(c.Lng)
	return "(" + latCol + " BETWEEN " + float(c.MinLat) + " AND " + float(c.MaxLat) +
		" AND " + lngCol + " BETWEEN " + float(c.MinLng) + " AND " + float(c.MaxLng) +
		" AND 2 * " + float(geo.EarthRadiusMeters) + " * asin(sqrt(power(sin(radians(" + latCol + " - " + lat + "::float8) / 2), 2)" +
		" + cos(radians(" + lat + "::float8)) * cos(radians(" + latCol + ")) * power(sin(radians(" + lngCol + " - " + lng + "::float8) / 2), 2)))" +
		" <= " + a.Add(c.RadiusMeters) + "::float8)"
}
