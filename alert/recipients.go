package alert

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/tocsin/tocsin/internal/geo"
	"github.com/tocsin/tocsin/internal/locale"
	"github.com/tocsin/tocsin/internal/names"
)

// RecipientSpec says who an alert goes to, as its recipient settings
// resolve: every source adds people; the resolution keeps each person once.
type RecipientSpec struct {
	ContactIDs        []int64
	GroupIDs          []int64 // members of these groups
	SubtreeGroupIDs   []int64 // members of these groups and every group below them
	ListIDs           []int64
	DirectoryID       string
	DirectoryUserIDs  []int64
	AllDirectoryUsers bool
	// Areas: the people located inside them.
	Areas
	// RelatedAlertID, when not zero, is an earlier alert whose resolved
	// recipients join: its people as selected there, its ad-hoc
	// recipients after AdHoc.
	RelatedAlertID int64
	Filter         *RecipientFilter
	// AdHoc are the ad-hoc entries as given (emails in lower case); the
	// resolution sends each address once per channel (see storage's
	// resolution).
	AdHoc []AdHocRecipient
}

// Areas are the places an alert's areas cover (AreasOf): its polygons,
// each without its holes, and its circles. Whatever counts as inside
// them, contacts' locations and ETN's address points alike, is inside by
// one rule (storage.InsideAreas).
type Areas struct {
	Polygons []AreaPolygon
	Circles  []AreaCircle
}

// AreasOf checks the areas of an alert and returns the places they cover.
// Errors name the area.
func AreasOf(areas []SelectedArea) (Areas, error) {
	var out Areas
	for i, a := range areas {
		ps, circle, err := AreaOf(a)
		if err != nil {
			return Areas{}, fmt.Errorf("area %d: %w", i, err)
		}
		out.Polygons = append(out.Polygons, ps...)
		if circle != nil {
			out.Circles = append(out.Circles, *circle)
		}
	}
	return out, nil
}

// Place is one place of an alert's areas: a polygon or a circle.
type Place struct {
	Polygon *AreaPolygon
	Circle  *AreaCircle
}

// Places are the places of a: each polygon, then each circle.
func (a Areas) Places() []Place {
	var out []Place
	for i := range a.Polygons {
		out = append(out, Place{Polygon: &a.Polygons[i]})
	}
	for i := range a.Circles {
		out = append(out, Place{Circle: &a.Circles[i]})
	}
	return out
}

// AreaPolygon is a polygon as PostgreSQL polygon literals (x = longitude,
// y = latitude) with its bounding box.
type AreaPolygon struct {
	Outer                          string
	Holes                          []string
	MinLat, MaxLat, MinLng, MaxLng float64
}

// AreaCircle is a circle with its bounding box.
type AreaCircle struct {
	Lat, Lng, RadiusMeters         float64
	MinLat, MaxLat, MinLng, MaxLng float64
}

// RecipientFilter keeps the people whose fields match.
type RecipientFilter struct {
	Any        bool
	Conditions []RecipientCondition
}

// RecipientCondition is one condition: Field is language, timeZone,
// externalId or custom.<name>; Op is Equals, NotEquals, In or NotIn.
type RecipientCondition struct {
	Field  string
	Op     string
	Values []string
}

// AdHocRecipient is a recipient given by address.
type AdHocRecipient struct {
	FirstName, LastName, Email, Phone string
}

// Recipient is a resolved recipient with the values messages use. Its db
// tags name the columns storage reads it from.
type Recipient struct {
	Seq          int64   `db:"seq"`
	PersonID     *int64  `db:"person_id"`
	ExternalID   string  `db:"external_id"`
	FirstName    string  `db:"first_name"`
	LastName     string  `db:"last_name"`
	Email        *string `db:"email"`
	Phone        *string `db:"phone"`
	VoicePhone   *string `db:"voice_phone"`
	CustomFields []byte  `db:"custom_fields"`
	IsMandatory  bool    `db:"is_mandatory"`
	// EmailReachedAs, PhoneReachedAs and VoicePhoneReachedAs, when set,
	// are the earlier recipient (seq) whose message reaches the row's
	// email, text phone or voice phone: the row's delivery there is
	// Skipped, so no address gets a second message (an ad-hoc entry's
	// addresses that earlier recipients have).
	EmailReachedAs      *int64 `db:"email_reached_as"`
	PhoneReachedAs      *int64 `db:"phone_reached_as"`
	VoicePhoneReachedAs *int64 `db:"voice_phone_reached_as"`
}

// RecipientSpecOf turns an alert's recipient settings into the storage
// query that resolves them. Errors name what is wrong with the settings.
func RecipientSpecOf(r Recipients) (RecipientSpec, error) {
	s := RecipientSpec{ContactIDs: r.ContactIDs, ListIDs: r.DistributionListIDs}
	for _, g := range r.Groups {
		if g.IncludeSubgroups {
			s.SubtreeGroupIDs = append(s.SubtreeGroupIDs, g.ID)
		} else {
			s.GroupIDs = append(s.GroupIDs, g.ID)
		}
	}
	if d := r.Directory; d != nil {
		s.DirectoryID = names.Normal(d.DirectoryID) // as stored; an alert accepted before may give another form
		s.AllDirectoryUsers = d.AllUsers
		for _, u := range d.UserIDs {
			// New alerts are held to ids.Parse when they are accepted; an
			// alert stored before that rule may write an id as "007" and
			// is still sent to user 7.
			id, err := strconv.ParseInt(u, 10, 64)
			if err != nil || id <= 0 {
				return s, fmt.Errorf("directory user id %q is not a user id", u)
			}
			s.DirectoryUserIDs = append(s.DirectoryUserIDs, id)
		}
	}
	areas, err := AreasOf(r.Areas)
	if err != nil {
		return s, err
	}
	s.Areas = areas
	if f := r.AccessFilter; f != nil {
		s.Filter = &RecipientFilter{Any: f.Match == "Any"}
		for _, c := range f.Conditions {
			s.Filter.Conditions = append(s.Filter.Conditions, conditionOf(c))
		}
	}
	for _, h := range r.AdHoc {
		s.AdHoc = append(s.AdHoc, AdHocRecipient{FirstName: h.FirstName, LastName: h.LastName, Email: strings.ToLower(h.Email), Phone: h.Phone})
	}
	return s, nil
}

// conditionOf is the condition c asks for. A value of a condition on
// language or timeZone also matches in the form internal/locale stores it
// in (en-us is en-US, us/eastern is US/Eastern), and one on externalId in
// NFC, the form internal/names stores it in, so a filter matches a
// person's value whichever way either was written, and still matches a
// value stored as given before those rules.
func conditionOf(c AccessFilterCondition) RecipientCondition {
	rc := RecipientCondition{Field: c.Field, Op: c.Operator, Values: c.Values}
	rule := map[string]func(string) (string, error){
		"language": locale.Language, "timeZone": locale.TimeZone,
		"externalId": func(v string) (string, error) { return names.Normal(v), nil },
	}[c.Field]
	if rule == nil {
		return rc
	}
	values := slices.Clone(c.Values)
	for _, v := range c.Values {
		if w, err := rule(v); err == nil && !slices.Contains(values, w) {
			values = append(values, w)
		}
	}
	if len(values) == len(c.Values) {
		return rc
	}
	rc.Values = values
	switch rc.Op {
	case "Equals":
		rc.Op = "In"
	case "NotEquals":
		rc.Op = "NotIn"
	}
	return rc
}

// AreaOf checks one area and returns its polygons or its circle.
func AreaOf(a SelectedArea) ([]AreaPolygon, *AreaCircle, error) {
	polys, err := PolygonsOf(a)
	if err != nil {
		return nil, nil, err
	}
	if polys == nil {
		b := geo.CircleBounds(a.Center.Lat, a.Center.Lng, a.RadiusMeters)
		return nil, &AreaCircle{Lat: a.Center.Lat, Lng: a.Center.Lng, RadiusMeters: a.RadiusMeters,
			MinLat: b.MinLat, MaxLat: b.MaxLat, MinLng: b.MinLng, MaxLng: b.MaxLng}, nil
	}
	out := make([]AreaPolygon, 0, len(polys))
	for _, p := range polys {
		b := p.Bounds()
		ap := AreaPolygon{Outer: geo.Literal(p.Outer), MinLat: b.MinLat, MaxLat: b.MaxLat, MinLng: b.MinLng, MaxLng: b.MaxLng}
		for _, h := range p.Holes {
			ap.Holes = append(ap.Holes, geo.Literal(h))
		}
		out = append(out, ap)
	}
	return out, nil, nil
}

// PolygonsOf checks one area and returns its polygons: each feature's
// Polygon, or each polygon of its MultiPolygon, in order. A circle (center
// and radiusMeters) has none: nil, nil.
func PolygonsOf(a SelectedArea) ([]geo.Polygon, error) {
	if a.SpatialReference != nil && a.SpatialReference.Wkid != 4326 {
		return nil, fmt.Errorf("only WGS 84 (wkid 4326) is supported")
	}
	hasCircle := a.Center != nil || a.RadiusMeters > 0
	switch {
	case a.Geometry != nil && hasCircle:
		return nil, fmt.Errorf("give either geometry or center and radiusMeters, not both")
	case a.Geometry != nil:
		if !crsOK(a.Geometry.Crs) {
			return nil, fmt.Errorf("only the WGS 84 coordinate reference system is supported")
		}
		var out []geo.Polygon
		positions := 0
		for i, f := range a.Geometry.Features {
			if !crsOK(f.Geometry.Crs) {
				return nil, fmt.Errorf("feature %d: only the WGS 84 coordinate reference system is supported", i)
			}
			ps, err := geo.ParseGeometry(f.Geometry.Type, f.Geometry.Coordinates)
			if err != nil {
				return nil, fmt.Errorf("feature %d: %w", i, err)
			}
			for _, p := range ps {
				if positions += p.Positions(); positions > geo.MaxPositions {
					return nil, fmt.Errorf("feature %d: the area has more than %d positions", i, geo.MaxPositions)
				}
			}
			out = append(out, ps...)
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("the geometry has no polygon")
		}
		return out, nil
	case a.Center != nil && a.RadiusMeters > 0:
		return nil, nil
	default:
		return nil, fmt.Errorf("an area needs geometry, or center and radiusMeters")
	}
}

func crsOK(c *IcrsObject) bool {
	if c == nil {
		return true
	}
	name := c.Properties["name"]
	switch name {
	case "EPSG:4326", "urn:ogc:def:crs:OGC:1.3:CRS84", "urn:ogc:def:crs:EPSG::4326":
		return true
	}
	return false
}
