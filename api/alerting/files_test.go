package alerting_test

import (
	"bytes"
	"fmt"
	"image"
	"image/png"
	"mime/multipart"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/api/rest"
	"github.com/tocsin/tocsin/internal/stacktest"
)

// uploadFile stores data as the tenant's file folder/name through the files
// API, with the encodings flags asks for ("EncodeForVoiceAudio", ...).
func uploadFile(t *testing.T, s *stacktest.Stack, tenant, tok, folder, name, contentType string, data []byte, flags ...string) {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	fields := map[string]string{"FileName": name, "FolderName": folder, "ContentType": contentType, "ContentLength": strconv.Itoa(len(data))}
	for _, f := range flags {
		fields[f] = "true"
	}
	for k, v := range fields {
		_ = mw.WriteField(k, v)
	}
	fw, _ := mw.CreateFormFile("HttpFile", name)
	_, _ = fw.Write(data)
	_ = mw.Close()
	if r := s.Do(t, http.MethodPost, "/v4/"+tenant+"/files", tok, &b, "Content-Type", mw.FormDataContentType()); r.Status != http.StatusCreated {
		t.Fatalf("upload %s/%s: %d %s", folder, name, r.Status, r.Body)
	}
}

// pngImage is a small PNG image.
func pngImage(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, 4, 4))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestChannelFilesAreCheckedWhenTheAlertIsMade: a stored file a channel
// block names (voice, ETN and EAS audio, the fax document) that does not
// exist, is of the wrong kind, lacks the version its channel uses or is
// ambiguous is a 400 naming the field, when the alert is made or
// previewed and for an alert of a bulk send, instead of an accepted alert
// whose every delivery fails.
func TestChannelFilesAreCheckedWhenTheAlertIsMade(t *testing.T) {
	t.Parallel()
	s := stacktest.Start(t)
	tenant, tok := s.NewTenant(t)
	w := wavTone(t)
	uploadFile(t, s, tenant, tok, "sirens", "tone.wav", "audio/wav", w, "EncodeForVoiceAudio")
	uploadFile(t, s, tenant, tok, "alarms", "tone.wav", "audio/wav", w)
	uploadFile(t, s, tenant, tok, "brand", "logo.png", "image/png", pngImage(t))

	alertWith := func(channels map[string]any) map[string]any {
		return map[string]any{"settings": map[string]any{
			"message":    map[string]any{"subject": "Siren test", "body": "This is a siren test."},
			"channels":   channels,
			"recipients": map[string]any{"adHoc": []map[string]any{{"phone": "+12025550121"}}},
		}}
	}
	cases := []struct {
		name     string
		channels map[string]any
		field    string
		msg      string
	}{
		{"missing voice audio", map[string]any{"voice": map[string]any{"enabled": true, "audioFileName": "nope/nothing.wav"}},
			"channels.voice.audioFileName", "no stored file nope/nothing.wav"},
		{"an object key", map[string]any{"voice": map[string]any{"enabled": true, "audioFileName": "tenants/" + tenant + "/sirens/tone.wav"}},
			"channels.voice.audioFileName", "no stored file"},
		{"an image for ETN", map[string]any{"etn": map[string]any{"enabled": true, "audioFileName": "brand/logo.png"}},
			"channels.etn.audioFileName", "an image file"},
		{"an image for voice", map[string]any{"voice": map[string]any{"enabled": true, "audioFileName": "logo.png"}},
			"channels.voice.audioFileName", "an image file"},
		{"audio without an EAS version", map[string]any{"eas": map[string]any{"enabled": true, "eventCode": "RWT", "audioFileName": "sirens/tone.wav"}},
			"channels.eas.audioFileName", "no EAS version"},
		{"missing EAS audio", map[string]any{"eas": map[string]any{"enabled": true, "eventCode": "RWT", "audioFileName": "gone.wav"}},
			"channels.eas.audioFileName", "no stored file gone.wav"},
		{"an image to fax", map[string]any{"fax": map[string]any{"enabled": true, "fileName": "brand/logo.png"}},
			"channels.fax.fileName", "a fax sends"},
		{"missing fax document", map[string]any{"fax": map[string]any{"enabled": true, "fileName": "maps/evacuation.pdf"}},
			"channels.fax.fileName", "no stored file maps/evacuation.pdf"},
		{"two files of that name", map[string]any{"voice": map[string]any{"enabled": true, "audioFileName": "tone.wav"}},
			"channels.voice.audioFileName", "alarms/tone.wav, sirens/tone.wav"},
		{"a disabled block's file", map[string]any{"text": map[string]any{"enabled": true}, "voice": map[string]any{"enabled": false, "audioFileName": "nope.wav"}},
			"channels.voice.audioFileName", "no stored file nope.wav"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			body := alertWith(c.channels)
			for _, path := range []string{"/v2/alerts", "/v2/alerts/preview"} {
				r := s.Do(t, http.MethodPost, path, tok, body)
				if r.Status != http.StatusBadRequest {
					t.Fatalf("%s: %d %s", path, r.Status, r.Body)
				}
				expectFailure(t, problem(t, r).Errors, "body.settings."+c.field, c.msg, r.Body)
			}
			r := s.Do(t, http.MethodPost, "/v4/"+tenant+"/alerts/bulkSend", tok, map[string]any{"alerts": []any{body}})
			var res struct {
				Rejected int
				Results  []struct {
					Status int
					Errors []struct{ Location, ErrorMessage string }
				}
			}
			r.JSON(t, &res)
			if r.Status != http.StatusOK || res.Rejected != 1 || len(res.Results) != 1 || res.Results[0].Status != http.StatusBadRequest {
				t.Fatalf("bulkSend: %d %s", r.Status, r.Body)
			}
			found := false
			for _, e := range res.Results[0].Errors {
				found = found || (e.Location == "body.alerts[0].settings."+c.field && strings.Contains(e.ErrorMessage, c.msg))
			}
			if !found {
				t.Fatalf("bulkSend: no failure at body.alerts[0].settings.%s mentioning %q: %s", c.field, c.msg, r.Body)
			}
		})
	}
	if n := alertCount(t, s, tok); n != 0 {
		t.Fatalf("refused alerts left %d alerts", n)
	}

	// The files that serve are accepted, by full name or by the name alone
	// when only one file has it.
	for _, ch := range []map[string]any{
		{"voice": map[string]any{"enabled": true, "audioFileName": "sirens/tone.wav"}},
		{"etn": map[string]any{"enabled": true, "audioFileName": "alarms/tone.wav"}},
		{"voice": map[string]any{"enabled": true, "audioFileName": "sirens/tone.wav"}, "push": map[string]any{"enabled": true}},
	} {
		if r := s.Do(t, http.MethodPost, "/v2/alerts/preview", tok, alertWith(ch)); r.Status != http.StatusOK {
			t.Errorf("preview of %v: %d %s", ch, r.Status, r.Body)
		}
	}
}

// expectFailure fails t unless failures hold one at location whose message
// mentions msg.
func expectFailure(t *testing.T, failures []rest.ValidationFailure, location, msg string, body []byte) {
	t.Helper()
	for _, f := range failures {
		if f.Location == location && strings.Contains(f.ErrorMessage, msg) {
			return
		}
	}
	t.Fatalf("no failure at %s mentioning %q: %s", location, msg, body)
}

// TestAFileDeletedAfterTheAlertWasAcceptedFailsInWords: an alert names a
// stored audio file for voice and EAS, the file is deleted before the alert
// is sent, and the deliveries fail saying the file no longer exists, by
// the name the alert gave, with no object key or object-store message.
func TestAFileDeletedAfterTheAlertWasAcceptedFailsInWords(t *testing.T) {
	t.Parallel()
	s := startWithPublicURL(t)
	tenant, tok := s.NewTenant(t)
	configureLoopbacks(t, s, tok, nil)
	ada := &apiPerson{First: "Ada", Phone: "+12025550121", Email: "ada-" + tenant + "@example.com"}
	directoryUser(t, s, tenant, tok, ada, nil)
	uploadFile(t, s, tenant, tok, "sirens", "gone.wav", "audio/wav", wavTone(t), "EncodeForVoiceAudio", "EncodeForEasAudio")

	res := send(t, s, tok, map[string]any{"settings": map[string]any{
		"message": map[string]any{"subject": "Siren test", "body": "This is a siren test."},
		"channels": map[string]any{
			"voice": map[string]any{"enabled": true, "audioFileName": "sirens/gone.wav"},
			"eas":   map[string]any{"enabled": true, "eventCode": "RWT", "audioFileName": "sirens/gone.wav"},
		},
		"recipients": map[string]any{"contactIds": []int64{ada.ID}},
		"schedule":   map[string]any{"type": "Later", "sendAt": time.Now().Add(4 * time.Second).UTC().Format(time.RFC3339Nano)},
	}})
	if r := s.Do(t, http.MethodDelete, "/v4/"+tenant+"/files/"+url.PathEscape("sirens/gone.wav"), tok, nil); r.Status/100 != 2 {
		t.Fatalf("delete the file: %d %s", r.Status, r.Body)
	}
	if st := waitDone(t, s, tok, res.AlertID); st.Status != "Failed" {
		t.Fatalf("alert %+v, want Failed", st)
	}
	r := s.Do(t, http.MethodGet, fmt.Sprintf("/v2/alerts/%d/results/recipients/1", res.AlertID), tok, nil)
	body := string(r.Body)
	for _, want := range []string{"audio file sirens/gone.wav no longer exists", "EAS audio file sirens/gone.wav no longer exists"} {
		if !strings.Contains(body, want) {
			t.Errorf("the recipient's deliveries do not say %q: %s", want, body)
		}
	}
	for _, leak := range []string{"tenants/", "specified key", "stat ", "bucket"} {
		if strings.Contains(body, leak) {
			t.Errorf("the recipient's deliveries show %q: %s", leak, body)
		}
	}
}
