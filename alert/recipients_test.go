package alert

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func TestRecipientSpecOf(t *testing.T) {
	s, err := RecipientSpecOf(Recipients{
		ContactIDs: []int64{1}, DistributionListIDs: []int64{3},
		Groups:       []GroupTarget{{ID: 5}, {ID: 6, IncludeSubgroups: true}},
		Directory:    &DirectorySettings{DirectoryID: "main", UserIDs: []string{"17"}},
		Areas:        []SelectedArea{{Center: &LatLng{Lat: 41, Lng: -87}, RadiusMeters: 1000}},
		AccessFilter: &AccessFilter{Match: "Any", Conditions: []AccessFilterCondition{{Field: "language", Operator: "In", Values: []string{"en"}}}},
		AdHoc:        []AdHocPerson{{FirstName: "G", Email: "G@Example.com"}, {Email: "g@example.com"}, {Phone: "+15550000001"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.GroupIDs) != 1 || s.GroupIDs[0] != 5 || len(s.SubtreeGroupIDs) != 1 || s.SubtreeGroupIDs[0] != 6 ||
		len(s.DirectoryUserIDs) != 1 || s.DirectoryUserIDs[0] != 17 || len(s.Circles) != 1 || s.Filter == nil || !s.Filter.Any ||
		len(s.ListIDs) != 1 || len(s.ContactIDs) != 1 {
		t.Errorf("spec %+v", s)
	}
	if len(s.AdHoc) != 3 || s.AdHoc[0].Email != "g@example.com" {
		t.Errorf("ad hoc recipients are not lower-cased and kept as given: %+v", s.AdHoc)
	}
	for _, id := range []string{"x", "0", "-17", ""} {
		if _, err := RecipientSpecOf(Recipients{Directory: &DirectorySettings{DirectoryID: "main", UserIDs: []string{id}}}); err == nil ||
			!strings.HasPrefix(err.Error(), "directory") {
			t.Errorf("bad directory user id %q: %v", id, err)
		}
	}
	// Alerts stored before ids were held to one way of writing them are
	// still sent: "017" is user 17 (new alerts are refused it when accepted).
	for _, id := range []string{"017", "+17"} {
		s, err := RecipientSpecOf(Recipients{Directory: &DirectorySettings{DirectoryID: "main", UserIDs: []string{id}}})
		if err != nil || len(s.DirectoryUserIDs) != 1 || s.DirectoryUserIDs[0] != 17 {
			t.Errorf("stored directory user id %q: %+v %v", id, s.DirectoryUserIDs, err)
		}
	}
}

func TestAreaOf(t *testing.T) {
	poly := func(coords string, crs *IcrsObject) SelectedArea {
		return SelectedArea{Geometry: &FeatureCollection{Type: "FeatureCollection", Features: []Feature{{Type: "Feature",
			Geometry: IGeometryObject{Type: "Polygon", Coordinates: json.RawMessage(coords), Crs: crs}}}}}
	}
	square := `[[[-87.7,41.8],[-87.6,41.8],[-87.6,41.9],[-87.7,41.9],[-87.7,41.8]]]`
	ps, c, err := AreaOf(poly(square, &IcrsObject{Type: "name", Properties: map[string]string{"name": "EPSG:4326"}}))
	if err != nil || c != nil || len(ps) != 1 || ps[0].MinLat != 41.8 || ps[0].MaxLng != -87.6 {
		t.Errorf("polygon: %+v %+v %v", ps, c, err)
	}
	_, c, err = AreaOf(SelectedArea{Center: &LatLng{Lat: 41, Lng: -87}, RadiusMeters: 1000})
	if err != nil || c == nil || c.RadiusMeters != 1000 || c.MinLat >= 41 || c.MaxLat <= 41 {
		t.Errorf("circle: %+v %v", c, err)
	}
	for name, a := range map[string]SelectedArea{
		"other wkid":  {Center: &LatLng{}, RadiusMeters: 1, SpatialReference: &SpatialReference{Wkid: 3857}},
		"both":        {Geometry: &FeatureCollection{}, Center: &LatLng{}, RadiusMeters: 1},
		"neither":     {},
		"no radius":   {Center: &LatLng{}},
		"other crs":   poly(square, &IcrsObject{Type: "name", Properties: map[string]string{"name": "EPSG:3857"}}),
		"no polygon":  {Geometry: &FeatureCollection{Type: "FeatureCollection"}},
		"bad polygon": poly(`[[[0,0],[1,1]]]`, nil),
	} {
		if _, _, err := AreaOf(a); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestConditionsOnLanguageAndZoneMatchTheStoredForm: a condition on
// language or timeZone matches the value as written and in the form people
// store it in; other fields compare what was written.
func TestConditionsOnLanguageAndZoneMatchTheStoredForm(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in     AccessFilterCondition
		op     string
		values []string
	}{
		{AccessFilterCondition{Field: "language", Operator: "Equals", Values: []string{"en-us"}}, "In", []string{"en-us", "en-US"}},
		{AccessFilterCondition{Field: "language", Operator: "NotIn", Values: []string{"iw", "he", "fr"}}, "NotIn", []string{"iw", "he", "fr"}},
		{AccessFilterCondition{Field: "timeZone", Operator: "NotEquals", Values: []string{"us/eastern"}}, "NotIn", []string{"us/eastern", "US/Eastern"}},
		{AccessFilterCondition{Field: "timeZone", Operator: "Equals", Values: []string{"Local"}}, "Equals", []string{"Local"}},
		{AccessFilterCondition{Field: "language", Operator: "Equals", Values: []string{"en"}}, "Equals", []string{"en"}},
		{AccessFilterCondition{Field: "externalId", Operator: "Equals", Values: []string{"en-us"}}, "Equals", []string{"en-us"}},
	} {
		got := conditionOf(c.in)
		if got.Field != c.in.Field || got.Op != c.op || strings.Join(got.Values, "|") != strings.Join(c.values, "|") {
			t.Errorf("%+v: %+v, want %s %v", c.in, got, c.op, c.values)
		}
	}
}

// TestAnAreaHoldsAtMostMaxPositions: the bound on positions is the
// area's, across every polygon of its features, not each polygon's.
func TestAnAreaHoldsAtMostMaxPositions(t *testing.T) {
	ring := func(n int) string {
		var b strings.Builder
		b.WriteString("[")
		for i := 0; i < n-1; i++ {
			fmt.Fprintf(&b, "[%f,%f],", float64(i)/float64(n), float64(i%2)/10)
		}
		b.WriteString("[0,0]]")
		return b.String()
	}
	multi := func(polygons, positions int) SelectedArea {
		ps := make([]string, polygons)
		for i := range ps {
			ps[i] = "[" + ring(positions) + "]"
		}
		return SelectedArea{Geometry: &FeatureCollection{Type: "FeatureCollection", Features: []Feature{{Type: "Feature",
			Geometry: IGeometryObject{Type: "MultiPolygon", Coordinates: json.RawMessage("[" + strings.Join(ps, ",") + "]")}}}}}
	}
	if _, err := PolygonsOf(multi(2, 5000)); err != nil {
		t.Errorf("10000 positions in two polygons: %v", err)
	}
	if _, err := PolygonsOf(multi(3, 5000)); err == nil || !strings.Contains(err.Error(), "more than 10000 positions") {
		t.Errorf("15000 positions in three polygons: %v", err)
	}
}
