package alerting_test

import (
	"bytes"
	"context"
	"encoding/json"
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
	"github.com/tocsin/tocsin/storage/storagetest"
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

// TestAFileDeletedAfterTheAlertWasAcceptedIsSaidInWords: an alert names
// a stored audio file for voice and EAS, and the file is deleted before the
// alert is sent. The call still goes out, speaking the message instead,
// and its delivery says why; EAS, which has no message to speak, fails
// saying the file no longer exists. Both name the file as the alert gave
// it, with no object key or object-store message.
func TestAFileDeletedAfterTheAlertWasAcceptedIsSaidInWords(t *testing.T) {
	t.Parallel()
	s := startWithPublicURL(t)
	tenant, tok := s.NewTenant(t)
	l := configureLoopbacks(t, s, tok, nil)
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
	if st := waitDone(t, s, tok, res.AlertID); st.Status != "Sent" {
		t.Fatalf("alert %+v, want Sent by its call", st)
	}
	calls := l.voice.Calls()
	if len(calls) != 1 || calls[0].Request.Play != nil || calls[0].Request.Say == nil || !strings.Contains(calls[0].Request.Say.Text, "This is a siren test.") {
		t.Fatalf("calls %+v, want one speaking the message", calls)
	}
	r := s.Do(t, http.MethodGet, fmt.Sprintf("/v2/alerts/%d/results/recipients/1", res.AlertID), tok, nil)
	body := string(r.Body)
	for _, want := range []string{"audio file sirens/gone.wav no longer exists: the message was spoken instead", "EAS audio file sirens/gone.wav no longer exists"} {
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

// TestAlertFileNamesFollowTheFilesRule: the names of stored files an alert
// gives (attachments, channel blocks' files) follow the files operations'
// rule: written composed or decomposed they name the same file, and the
// alert keeps the name as the file has it; a control or invisible
// character is a 400 naming the field.
func TestAlertFileNamesFollowTheFilesRule(t *testing.T) {
	t.Parallel()
	s := stacktest.Start(t)
	tenant, tok := s.NewTenant(t)
	const nfc, nfd = "odd/\u00C4rger", "odd/A\u0308rger"
	uploadFile(t, s, tenant, tok, "odd", "\u00C4rger.png", "image/png", pngImage(t))
	uploadFile(t, s, tenant, tok, "odd", "\u00C4rger.wav", "audio/wav", wavTone(t), "EncodeForVoiceAudio")
	alertWith := func(attachment, audio string) map[string]any {
		return map[string]any{"settings": map[string]any{
			"message":    map[string]any{"subject": "Siren test", "body": "This is a siren test."},
			"channels":   map[string]any{"email": map[string]any{"enabled": true}, "voice": map[string]any{"enabled": true, "audioFileName": audio}},
			"content":    map[string]any{"attachments": []string{attachment}},
			"recipients": map[string]any{"adHoc": []map[string]any{{"phone": "+12025550121", "email": "ada@example.com"}}},
		}}
	}
	r := s.Do(t, http.MethodPost, "/v2/alerts/preview", tok, alertWith(nfd+".png", nfd+".wav"))
	if r.Status != http.StatusOK {
		t.Fatalf("decomposed names: %d %s", r.Status, r.Body)
	}
	var shown struct {
		Settings struct {
			Content  struct{ Attachments []string }
			Channels struct {
				Voice struct{ AudioFileName string }
			}
		}
		Attachments []struct{ Name string }
	}
	r.JSON(t, &shown)
	if a := shown.Settings.Content.Attachments; len(a) != 1 || a[0] != nfc+".png" || shown.Settings.Channels.Voice.AudioFileName != nfc+".wav" {
		t.Fatalf("the alert keeps names other than the files': %s", r.Body)
	}
	for _, c := range []struct{ name, attachment, audio, field string }{
		{"line separator in an attachment", "odd/a\u2028b.png", nfc + ".wav", "content.attachments[0]"},
		{"Hangul filler in an attachment", "odd/\u3164.png", nfc + ".wav", "content.attachments[0]"},
		{"blank braille in voice audio", nfc + ".png", "odd/\u2800.wav", "channels.voice.audioFileName"},
		{"zero-width joiner in voice audio", nfc + ".png", "odd/a\u200Db.wav", "channels.voice.audioFileName"},
	} {
		r := s.Do(t, http.MethodPost, "/v2/alerts", tok, alertWith(c.attachment, c.audio))
		if r.Status != http.StatusBadRequest {
			t.Fatalf("%s: %d %s", c.name, r.Status, r.Body)
		}
		expectFailure(t, problem(t, r).Errors, "body.settings."+c.field, "not a file name", r.Body)
	}
}

// TestADeletedAttachmentIsLeftOutOfItsEmails: an alert attaches two
// stored files, and one of them is deleted before the alert is sent, then
// uploaded again under the same name. The email still goes out, with the
// other file and without the deleted one (not the new file of its name):
// the delivery is Sent and says, by the name the alert gave, that the
// attachment no longer exists and the email went without it; neither the
// API nor the events show an object key, the object store's words or
// Temporal's.
func TestADeletedAttachmentIsLeftOutOfItsEmails(t *testing.T) {
	t.Parallel()
	sb, withSandbox := stacktest.Sandbox(t)
	s := stacktest.Start(t, withSandbox)
	tenant, tok := s.NewTenant(t)
	c := &contact{First: "At", Last: "Tach", Email: "attach-" + tenant + "@example.com"}
	seed(t, s, tenant, c)
	uploadFile(t, s, tenant, tok, "brand", "tmp.png", "image/png", pngImage(t))
	uploadFile(t, s, tenant, tok, "brand", "keep.png", "image/png", pngImage(t))

	res := send(t, s, tok, map[string]any{"settings": map[string]any{
		"message":    map[string]any{"subject": "Map", "body": "See the map."},
		"channels":   map[string]any{"email": map[string]any{"enabled": true}},
		"recipients": map[string]any{"contactIds": []int64{c.ID}},
		"content":    map[string]any{"attachments": []string{"brand/tmp.png", "brand/keep.png"}},
		"schedule":   map[string]any{"type": "Later", "sendAt": time.Now().Add(4 * time.Second).UTC().Format(time.RFC3339Nano)},
	}})
	if r := s.Do(t, http.MethodDelete, "/v4/"+tenant+"/files/"+url.PathEscape("brand/tmp.png"), tok, nil); r.Status != http.StatusNoContent {
		t.Fatalf("delete the file: %d %s", r.Status, r.Body)
	}
	var other bytes.Buffer
	if err := png.Encode(&other, image.NewGray(image.Rect(0, 0, 9, 9))); err != nil {
		t.Fatal(err)
	}
	uploadFile(t, s, tenant, tok, "brand", "tmp.png", "image/png", other.Bytes())
	st := waitDone(t, s, tok, res.AlertID)
	if st.Status != "Sent" || st.Recipients != 1 || st.Deliveries.Total != 1 || st.Deliveries.Sent != 1 || st.Deliveries.Pending != 0 {
		t.Fatalf("alert %+v, want Sent with its one delivery Sent", st)
	}
	mails := sb.SMTP.Messages()
	if len(mails) != 1 || len(mails[0].Attachments) != 1 || mails[0].Attachments[0].Name != "keep.png" ||
		!bytes.Equal(mails[0].Attachments[0].Data, pngImage(t)) {
		t.Fatalf("emails %+v, want one carrying keep.png alone", mails)
	}
	const want = "attachment brand/tmp.png no longer exists: sent without it"
	leaks := []string{"tenants/", "specified key", "wrapError", "retryable", "activity error", "read attachment"}
	shown := map[string]string{}
	for _, path := range []string{"/status", "/results", "/results/recipients", "/results/recipients/1", "/results/channels/email"} {
		r := s.Do(t, http.MethodGet, fmt.Sprintf("/v2/alerts/%d%s", res.AlertID, path), tok, nil)
		if r.Status != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, r.Status, r.Body)
		}
		shown[path] = string(r.Body)
	}
	var emails struct {
		Items []struct{ Status, Error string }
	}
	if err := json.Unmarshal([]byte(shown["/results/channels/email"]), &emails); err != nil || len(emails.Items) != 1 ||
		emails.Items[0].Status != "Sent" || emails.Items[0].Error != want {
		t.Errorf("email results %s, want one Sent row saying %q", shown["/results/channels/email"], want)
	}
	if !strings.Contains(shown["/results/recipients/1"], want) {
		t.Errorf("the recipient's deliveries do not say %q: %s", want, shown["/results/recipients/1"])
	}
	all, err := storagetest.TenantEvents(context.Background(), s.DB, tenant)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range all {
		shown[e.Type+" event"] = string(e.Payload)
	}
	for where, body := range shown {
		for _, leak := range leaks {
			if strings.Contains(body, leak) {
				t.Errorf("%s shows %q: %s", where, leak, body)
			}
		}
	}
}
