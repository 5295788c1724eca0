package etn

import (
	"fmt"

	"github.com/tocsin/tocsin/internal/geo"
	"github.com/tocsin/tocsin/storage/channelstate"
)

// LatLng is a point in WGS 84 degrees.
type LatLng struct {
	Lat float64 `json:"lat"`
	Lng float64 `json:"lng"`
}

// Area is where an ETN alert calls: a polygon (three or more points) or a
// circle (centre and radius in metres).
type Area struct {
	Polygon      []LatLng `json:"polygon,omitempty"`
	Center       *LatLng  `json:"center,omitempty"`
	RadiusMeters float64  `json:"radiusMeters,omitempty"`
}

// Validate checks the area.
func (a Area) Validate() error {
	switch {
	case len(a.Polygon) > 0 && a.Center != nil:
		return fmt.Errorf("an area is a polygon or a circle, not both")
	case len(a.Polygon) > 0:
		if len(a.Polygon) < 3 {
			return fmt.Errorf("a polygon needs at least three points")
		}
		ring := make([][2]float64, len(a.Polygon))
		for i, p := range a.Polygon {
			if err := p.valid(); err != nil {
				return err
			}
			ring[i] = [2]float64{p.Lng, p.Lat}
		}
		return geo.CheckAntimeridian(ring)
	case a.Center != nil:
		if err := a.Center.valid(); err != nil {
			return err
		}
		if a.RadiusMeters <= 0 || a.RadiusMeters > 500_000 {
			return fmt.Errorf("radiusMeters must be in (0, 500000]")
		}
	default:
		return fmt.Errorf("an area needs a polygon or a circle")
	}
	return nil
}

func (p LatLng) valid() error {
	if p.Lat < -90 || p.Lat > 90 || p.Lng < -180 || p.Lng > 180 {
		return fmt.Errorf("point (%g, %g) is outside latitude -90..90, longitude -180..180", p.Lat, p.Lng)
	}
	return nil
}

// Row returns the area as storage takes it.
func (a Area) Row() channelstate.Area {
	r := channelstate.Area{RadiusMeters: a.RadiusMeters}
	for _, p := range a.Polygon {
		r.Polygon = append(r.Polygon, channelstate.LatLng(p))
	}
	if a.Center != nil {
		c := channelstate.LatLng(*a.Center)
		r.Center = &c
	}
	return r
}
