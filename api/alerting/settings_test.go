package alerting

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/alert"
	"github.com/tocsin/tocsin/api/model"
)

// jsonShape lists every JSON path of t with the kind of value found there,
// so two types with the same JSON form have the same shape.
func jsonShape(t reflect.Type, path string, out map[string]string, seen map[reflect.Type]bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == reflect.TypeOf(time.Time{}) || t == reflect.TypeOf(json.RawMessage{}):
		out[path] = t.String()
		return
	case t.Kind() == reflect.Slice:
		jsonShape(t.Elem(), path+"[]", out, seen)
		return
	case t.Kind() == reflect.Map:
		out[path] = "map[" + t.Key().Kind().String() + "]" + t.Elem().Kind().String()
		return
	case t.Kind() != reflect.Struct:
		out[path] = t.Kind().String()
		return
	}
	if seen[t] {
		out[path] = "recursive"
		return
	}
	seen[t] = true
	defer delete(seen, t)
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" || !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		out[path+"."+name+"("+opts+")"] = ""
		jsonShape(f.Type, path+"."+name, out, seen)
	}
}

// TestSettingsMatchTheModel: alert.Settings and model.AlertSettings have
// the same JSON form, so settingsOf and settingsModel lose nothing and the
// settings stored before alert.Settings existed still decode.
func TestSettingsMatchTheModel(t *testing.T) {
	a, m := map[string]string{}, map[string]string{}
	jsonShape(reflect.TypeOf(alert.Settings{}), "settings", a, map[reflect.Type]bool{})
	jsonShape(reflect.TypeOf(model.AlertSettings{}), "settings", m, map[reflect.Type]bool{})
	for p, k := range m {
		if ak, ok := a[p]; !ok || ak != k {
			t.Errorf("%s: model %q, alert %q (present %v)", p, k, ak, ok)
		}
	}
	for p := range a {
		if _, ok := m[p]; !ok {
			t.Errorf("%s: only in alert.Settings", p)
		}
	}
	if len(a) < 200 {
		t.Fatalf("only %d paths: the shape walk is broken", len(a))
	}
}

// TestSettingsRoundTrip: a full model maps to alert.Settings and back
// unchanged, and stores the same JSON the model did.
func TestSettingsRoundTrip(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	yes := true
	in := model.AlertSettings{
		Type:    model.AlertTypePoll,
		Message: model.MessageSettings{Subject: "S", Body: "B {{shelter}}", Language: "en", Variables: &model.CustomMessageVariables{Values: []model.AlertSettingsValue{{Name: "shelter", Source: model.VariableCustomField, Value: "Gym", Field: "building"}}}},
		Channels: &model.ChannelSettings{Email: &model.EmailChannel{Enabled: true, IncludeAttachments: &yes}, Text: &model.TextMessageChannel{Enabled: true, MaxSegments: 3},
			Voice: &model.VoiceChannel{Enabled: true, CallAttempts: 2}, Etn: &model.EtnChannel{Enabled: true, AddressPointLists: []string{"wells"}},
			Eas: &model.EasChannel{Enabled: true, SameCodes: []string{"017031"}}, Neighborhood: &model.NeighborhoodChannel{Enabled: true, Groups: []string{"g"}}},
		Recipients: model.RecipientSettings{ContactIDs: []int64{1}, Groups: []model.AlertGroupTarget{{ID: 2, IncludeSubgroups: true}},
			Directory: &model.DirectorySettings{DirectoryID: "main", UserIDs: []string{"17"}}, AdHoc: []model.AlertAdHocRecipient{{FirstName: "G", Phone: "+15551230000"}},
			Areas: []model.SelectedArea{{Name: "A", Geometry: &model.FeatureCollection{Type: "FeatureCollection", Features: []model.Feature{{Type: "Feature",
				Geometry: model.IGeometryObject{Type: "Polygon", Coordinates: json.RawMessage(`[[[-87.7,41.8],[-87.6,41.8],[-87.6,41.9],[-87.7,41.8]]]`)}}}}},
				{Center: &model.LatLng{Lat: 41, Lng: -87}, RadiusMeters: 1500}},
			AccessFilter: &model.AccessFilter{Match: "Any", Conditions: []model.AccessFilterCondition{{Field: "language", Operator: "In", Values: []string{"en"}}}}},
		Priority:   &model.PrioritySettings{Priority: model.PriorityEmergency, LoudTone: &model.LoudToneSettings{Enabled: true}},
		Schedule:   &model.ScheduleSettings{Type: model.ScheduleLater, SendAt: &at},
		Workflow:   &model.WorkflowSettings{ConfirmationRequested: &yes, Cycles: ptr(2)},
		Pipeline:   &model.PipelineSettings{Order: model.OrderSequential, Sequence: []model.DeliveryChannel{"text", "email"}},
		Incident:   &model.IncidentSettings{Name: "Storm", Event: &model.IncidentEvent{Name: "Snow", OccurredAt: &at}},
		Survey:     &model.SurveySettings{Questions: []model.PollQuestionModel{{ID: 1, Text: "Safe?", Options: []model.PollOptionModel{{ID: 1, Text: "Yes"}, {ID: 2, Text: "No", Severity: "High"}}}}},
		Conference: &model.ConferenceInvitation{BridgeNumber: "+15550199", StartsAt: &at},
		Related:    &model.RelatedAlert{AlertID: 41, Relation: "Update", Actions: &model.RelatedAlertActions{IncludeOriginalRecipients: true}},
	}
	s, err := settingsOf(in)
	if err != nil {
		t.Fatal(err)
	}
	if s.Type != alert.TypePoll || s.Recipients.Areas[1].RadiusMeters != 1500 || s.Survey.Questions[0].Options[1].Severity != "High" || !s.Recipients.Groups[0].IncludeSubgroups {
		t.Fatalf("mapped settings lost values: %+v", s)
	}
	stored, _ := json.Marshal(s)
	before, _ := json.Marshal(in)
	if string(stored) != string(before) {
		t.Fatalf("stored form changed:\n%s\n%s", stored, before)
	}
	back, err := settingsModel(&s)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, in) {
		t.Fatalf("round trip changed the settings:\n%+v\n%+v", back, in)
	}
}
