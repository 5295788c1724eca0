package alerting_test

import (
	"fmt"
	"math"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/channels/cap"
	"github.com/tocsin/tocsin/channels/cap/captest"
	"github.com/tocsin/tocsin/internal/stacktest"
)

// capAreasAlert is an Emergency alert on EAS and mobile broadcast to four
// areas: a polygon with a hole, a feature collection of a polygon and a
// multipolygon, a named circle and an unnamed one.
func capAreasAlert() map[string]any {
	feature := func(typ string, coords any) map[string]any {
		return map[string]any{"type": "Feature", "properties": map[string]any{}, "geometry": map[string]any{"type": typ, "coordinates": coords}}
	}
	collection := func(fs ...map[string]any) map[string]any {
		return map[string]any{"type": "FeatureCollection", "features": fs}
	}
	return map[string]any{"settings": map[string]any{
		"message":         map[string]any{"subject": "Tsunami warning", "body": "Go inland"},
		"priority":        map[string]any{"priority": "Emergency"},
		"mobileBroadcast": map[string]any{"expiresInMinutes": 15, "languages": []string{"es-US"}},
		"channels": map[string]any{
			"eas":             map[string]any{"enabled": true, "eventCode": "TSW", "durationMinutes": 30, "sameCodes": []string{"006075"}},
			"mobileBroadcast": map[string]any{"enabled": true},
		},
		"recipients": map[string]any{"areas": []map[string]any{
			{"name": "Coastal strip", "geometry": collection(feature("Polygon", [][][]float64{
				{{-122.5, 37.7}, {-122.4, 37.7}, {-122.4, 37.8}, {-122.5, 37.8}, {-122.5, 37.7}},
				{{-122.46, 37.74}, {-122.44, 37.74}, {-122.44, 37.76}, {-122.46, 37.74}}, // a hole
			}))},
			{"name": "Bay islands", "geometry": collection(
				feature("Polygon", [][][]float64{{{-122.3, 37.6}, {-122.2, 37.6}, {-122.25, 37.65}, {-122.3, 37.6}}}),
				feature("MultiPolygon", [][][][]float64{
					{{{-122.42, 37.82}, {-122.41, 37.82}, {-122.41, 37.83}, {-122.42, 37.83}, {-122.42, 37.82}}},
					{{{-122.37, 37.81}, {-122.36, 37.81}, {-122.365, 37.825}, {-122.37, 37.81}}},
				}))},
			{"name": "Harbor", "center": map[string]any{"lat": 37.8, "lng": -122.4}, "radiusMeters": 1500},
			{"center": map[string]any{"lat": 37.75, "lng": -122.45}, "radiusMeters": 250},
		}},
	}}
}

// capAreas are the CAP areas of capAreasAlert: each area's name and shapes,
// latitude first, polygons by their outer ring.
var capAreas = []cap.Area{
	{AreaDesc: "Coastal strip", Polygon: []string{"37.7,-122.5 37.7,-122.4 37.8,-122.4 37.8,-122.5 37.7,-122.5"}},
	{AreaDesc: "Bay islands", Polygon: []string{
		"37.6,-122.3 37.6,-122.2 37.65,-122.25 37.6,-122.3",
		"37.82,-122.42 37.82,-122.41 37.83,-122.41 37.83,-122.42 37.82,-122.42",
		"37.81,-122.37 37.81,-122.36 37.825,-122.365 37.81,-122.37",
	}},
	{AreaDesc: "Harbor", Circle: []string{"37.8,-122.4 1.5"}},
	{AreaDesc: "Area 4", Circle: []string{"37.75,-122.45 0.25"}},
}

// TestCapDocumentsCarryTheAlertsAreas sends an alert with polygon,
// multipolygon and circle areas on EAS and mobile broadcast, then updates
// and cancels it: every CAP document is valid against the CAP 1.2 schema,
// carries exactly the alert's areas (EAS one more with its SAME codes),
// expires as the channel's settings say, and mobile broadcast has an info
// block per language.
func TestCapDocumentsCarryTheAlertsAreas(t *testing.T) {
	t.Parallel()
	s := startWithPublicURL(t)
	_, tok := s.NewTenant(t)
	l := configureLoopbacks(t, s, tok, nil)
	res := send(t, s, tok, capAreasAlert())
	if st := waitDone(t, s, tok, res.AlertID); st.Status != "Sent" {
		t.Fatalf("alert status %+v", st)
	}
	easAreas := append(append([]cap.Area(nil), capAreas...),
		cap.Area{AreaDesc: "Alert area", Geocode: []cap.NamedValue{{ValueName: "SAME", Value: "006075"}}})
	check := func(d []byte, msgType string) {
		t.Helper()
		if err := captest.Validate(t, d); err != nil {
			t.Fatalf("%v\n%s", err, d)
		}
		a, err := cap.Parse(d)
		if err != nil {
			t.Fatal(err)
		}
		if a.MsgType != msgType {
			t.Fatalf("msgType %s, want %s", a.MsgType, msgType)
		}
		sent, err := time.Parse(cap.TimeLayout, a.Sent)
		if err != nil {
			t.Fatal(err)
		}
		langs, minutes, areas := []string{"en-US", "es-US"}, 15.0, capAreas
		if strings.Contains(a.Identifier, "-eas-") {
			langs, minutes, areas = []string{"en-US"}, 30, easAreas
		}
		if len(a.Info) != len(langs) {
			t.Fatalf("%s %s: %d info blocks, want %v", a.Identifier, msgType, len(a.Info), langs)
		}
		for i, info := range a.Info {
			if info.Language != langs[i] || info.Headline != "Tsunami warning" {
				t.Errorf("%s %s: info %d in %q headed %q", a.Identifier, msgType, i, info.Language, info.Headline)
			}
			expires, err := time.Parse(cap.TimeLayout, info.Expires)
			if err != nil || expires.Sub(sent).Minutes() != minutes {
				t.Errorf("%s %s: sent %s, expires %s, want %v minutes later", a.Identifier, msgType, a.Sent, info.Expires, minutes)
			}
			if !reflect.DeepEqual(info.Area, areas) {
				t.Errorf("%s %s: areas\n%+v\nwant\n%+v", a.Identifier, msgType, info.Area, areas)
			}
		}
	}
	docs := l.cap.Documents()
	if len(docs) != 2 {
		t.Fatalf("%d CAP documents", len(docs))
	}
	for _, d := range docs {
		check(d, "Alert")
	}
	for i, msgType := range []string{"Update", "Cancel"} {
		r := s.Do(t, http.MethodPost, fmt.Sprintf("/v2/alerts/%d/capUpdates", res.AlertID), tok, map[string]any{"msgType": msgType})
		if r.Status != http.StatusAccepted {
			t.Fatalf("%s: %d %s", msgType, r.Status, r.Body)
		}
		want := 4 + 2*i
		stacktest.Eventually(t, 60*time.Second, msgType+" documents to arrive", func() bool {
			docs = l.cap.Documents()
			return len(docs) == want
		})
		for _, d := range docs[want-2:] {
			check(d, msgType)
		}
	}
	l.checkProblems(t)
}

// TestCapAreasTooLargeAreRefused: an alert whose areas would make a CAP
// document of more than cap.MaxPoints coordinate pairs (counted in each of
// its language blocks), or whose broadcast names a language that is no
// language code, is a 400 naming the field, and no alert is made; the same
// areas on a channel that sends no CAP document are accepted.
func TestCapAreasTooLargeAreRefused(t *testing.T) {
	t.Parallel()
	s := stacktest.Start(t)
	_, tok := s.NewTenant(t)
	// A ring of 4,000 positions around (37.75, -122.45).
	var ring [][]float64
	for i := range 3999 {
		a := 2 * math.Pi * float64(i) / 3999
		ring = append(ring, []float64{-122.45 + 0.05*math.Cos(a), 37.75 + 0.05*math.Sin(a)})
	}
	ring = append(ring, ring[0])
	alertOn := func(chans map[string]any, languages ...string) map[string]any {
		return map[string]any{"settings": map[string]any{
			"message":         map[string]any{"subject": "Tsunami warning", "body": "Go inland"},
			"mobileBroadcast": map[string]any{"languages": languages},
			"channels":        chans,
			"recipients": map[string]any{"areas": []map[string]any{{"name": "Coast", "geometry": map[string]any{"type": "FeatureCollection",
				"features": []map[string]any{{"type": "Feature", "geometry": map[string]any{"type": "Polygon", "coordinates": [][][]float64{ring}}}}}}}},
		}}
	}
	mobile := map[string]any{"mobileBroadcast": map[string]any{"enabled": true}}
	// 4,000 pairs in each of three language blocks.
	r := s.Do(t, http.MethodPost, "/v2/alerts", tok, alertOn(mobile, "es-US", "zh-Hant"))
	if r.Status != http.StatusBadRequest {
		t.Fatalf("a document of 12,000 pairs: %d %s", r.Status, r.Body)
	}
	expectFailure(t, problem(t, r).Errors, "body.settings.recipients.areas", "would carry 12000 coordinate pairs", r.Body)
	r = s.Do(t, http.MethodPost, "/v2/alerts", tok, alertOn(mobile, "español"))
	if r.Status != http.StatusBadRequest && r.Status != http.StatusUnprocessableEntity {
		t.Fatalf("a language that is no code: %d %s", r.Status, r.Body)
	}
	expectFailure(t, problem(t, r).Errors, "body.settings.mobileBroadcast.languages[0]", "", r.Body)
	if n := alertCount(t, s, tok); n != 0 {
		t.Fatalf("refused alerts left %d alerts", n)
	}
	for _, ok := range []map[string]any{
		alertOn(mobile, "es-US"), // 8,000 pairs
		alertOn(map[string]any{"text": map[string]any{"enabled": true}}, "es-US", "zh-Hant"),
	} {
		if r := s.Do(t, http.MethodPost, "/v2/alerts/preview", tok, ok); r.Status != http.StatusOK {
			t.Fatalf("preview: %d %s", r.Status, r.Body)
		}
	}
}
