package etn_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/tocsin/tocsin/alert"
	"github.com/tocsin/tocsin/channels"
	"github.com/tocsin/tocsin/channels/etn"
	"github.com/tocsin/tocsin/channels/etn/etntest"
	"github.com/tocsin/tocsin/channels/providerhttp"
	"github.com/tocsin/tocsin/channels/voice"
	"github.com/tocsin/tocsin/channels/voice/voicetest"
	"github.com/tocsin/tocsin/internal/csvheader"
	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/channelstate"
	"github.com/tocsin/tocsin/storage/directory"
)

// parse reads the list in as the import does: its points, the first rows
// left out, and the error that ended it.
func parse(in string) ([]etn.Point, []etn.RowError, error) {
	rd, err := etn.NewReader(strings.NewReader(in))
	if err != nil {
		return nil, nil, err
	}
	var pts []etn.Point
	for p, err := range rd.Points() {
		if err != nil {
			return nil, nil, err
		}
		pts = append(pts, p)
	}
	return pts, rd.Problems(), nil
}

// points yields pts, as a parsed list does.
func points(pts ...etn.Point) iter.Seq2[etn.Point, error] {
	return func(yield func(etn.Point, error) bool) {
		for _, p := range pts {
			if !yield(p, nil) {
				return
			}
		}
	}
}

func TestParseCSV(t *testing.T) {
	in := "\ufeffPhone,Latitude,Longitude,Name,Address\n" +
		"+15550000001,45.5,-122.6,Mill,1 Main St\n" +
		"555,45.5,-122.6,Bad phone,\n" +
		"+15550000002,95,-122.6,Bad latitude,\n" +
		"+15550000003,45.6,-122.7,,\n"
	pts, bad, err := parse(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(pts) != 2 || pts[0].Name != "Mill" || pts[1].Phone != "+15550000003" {
		t.Fatalf("points %+v", pts)
	}
	if len(bad) != 2 || bad[0].Line != 3 || bad[1].Line != 4 {
		t.Fatalf("row errors %+v", bad)
	}
	if _, _, err := parse("phone,lat,lng\n"); err == nil {
		t.Fatal("a header without latitude is an error")
	}
}

// TestParseCSVTakesDecimalCoordinatesOnly: a coordinate is a decimal
// number. NaN passed every range check and reached the table, whose check
// refused it: the import answered 500. Infinity, hexadecimal floats and
// digits split by underscores, which strconv.ParseFloat also reads, are
// row problems too.
func TestParseCSVTakesDecimalCoordinatesOnly(t *testing.T) {
	in := "phone,latitude,longitude\n" +
		"+15550000001,NaN,0\n" +
		"+15550000002,0,nan\n" +
		"+15550000003,-Inf,0\n" +
		"+15550000004,0x1p-2,0\n" +
		"+15550000005,1_0,0\n" +
		"+15550000006,45.5,-122.6\n" +
		"+15550000007,-.5,+1e1\n" +
		"+15550000008,45.,0\n"
	pts, bad, err := parse(in)
	if err != nil {
		t.Fatal(err)
	}
	var phones []string
	for _, p := range pts {
		phones = append(phones, p.Phone)
	}
	if !slices.Equal(phones, []string{"+15550000006", "+15550000007", "+15550000008"}) {
		t.Fatalf("points %+v, want those of lines 7 to 9", pts)
	}
	var lines []int
	for _, b := range bad {
		lines = append(lines, b.Line)
	}
	if !slices.Equal(lines, []int{2, 3, 4, 5, 6}) {
		t.Fatalf("row errors %+v, want lines 2 to 6", bad)
	}
}

// TestParseCSVNamesTheLinesOfTheFile: a row problem names the line the row
// starts on in the file, with empty lines and line breaks inside quoted
// fields counted, and a row longer than csvheader.MaxRecordBytes refuses the
// file, naming its line.
func TestParseCSVNamesTheLinesOfTheFile(t *testing.T) {
	pts, bad, err := parse(etntest.NumberedLines)
	if err != nil {
		t.Fatal(err)
	}
	if len(pts) != 2 || pts[0].Address != "1 Main St\nBack door" || pts[1].Address != "2\nMain\nSt" {
		t.Fatalf("points %+v", pts)
	}
	var lines []int
	for _, b := range bad {
		lines = append(lines, b.Line)
	}
	if !slices.Equal(lines, etntest.RefusedLines) {
		t.Fatalf("row errors on lines %v, want 5, 11, 12: %+v", lines, bad)
	}

	long := "phone,latitude,longitude\n+15550000001,45.5,-122.6\n\n\"+1555" + strings.Repeat("0,45.5,-122.6\n", 5<<20/13)
	_, _, err = parse(long)
	var tooLong *csvheader.RecordTooLongError
	if !errors.As(err, &tooLong) || tooLong.Line != 4 {
		t.Fatalf("a 5 MiB row: %v, want a RecordTooLongError on line 4", err)
	}
}

// TestReaderBoundsWhatItKeeps: the reader keeps the first
// MaxReportedRows rejected rows and counts the rest, and a problem quotes
// only the start of a rejected value, so what it holds and answers stays
// short whatever the file.
func TestReaderBoundsWhatItKeeps(t *testing.T) {
	var b strings.Builder
	b.WriteString("phone,latitude,longitude\n")
	b.WriteString(strings.Repeat("9", 500_000) + ",45,-122\n")
	for range 150 {
		b.WriteString("555,45,-122\n")
	}
	b.WriteString("+15550000001,45,-122\n")
	rd, err := etn.NewReader(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, err := range rd.Points() {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	bad := rd.Problems()
	if n != 1 || rd.Rejected() != 151 || len(bad) != etn.MaxReportedRows || bad[0].Line != 2 || bad[99].Line != 101 {
		t.Fatalf("%d points, %d rejected, %d kept", n, rd.Rejected(), len(bad))
	}
	if len(bad[0].Message) > 100 || !strings.Contains(bad[0].Message, `"9999999999`) {
		t.Fatalf("a %d-byte problem: %.200s", len(bad[0].Message), bad[0].Message)
	}
}

// TestReaderRefusesWhatIsNotText: a NUL character or bytes that are not
// UTF-8 refuse the file, naming their line, however the reads cut the
// file; characters cut between reads are whole again.
func TestReaderRefusesWhatIsNotText(t *testing.T) {
	head := "phone,latitude,longitude,name\n+15550000001,45,-122,Café ☎ 𝄞\n"
	for name, c := range map[string]struct {
		in   string
		line int
	}{
		"text":                  {head, 0},
		"a NUL":                 {head + "+15550000002,45,-122,a\x00b\n", 3},
		"a NUL in the header":   {"phone,lati\x00tude,longitude\n", 1},
		"a stray byte":          {head + "\n+15550000002,45,-122,\xff\n", 4},
		"a cut character":       {head + "+15550000002,45,-122,\xe2\x98\n", 3},
		"a character cut short": {head + "+15550000002,45,-122,\xe2\x98", 3},
		"a surrogate":           {head + "+15550000002,45,-122,\xed\xa0\x80\n", 3},
	} {
		for _, one := range []bool{false, true} {
			var r io.Reader = strings.NewReader(c.in)
			if one {
				r = iotest.OneByteReader(r)
			}
			rd, err := etn.NewReader(r)
			if err == nil {
				for _, e := range rd.Points() {
					err = e
				}
			}
			var te *etn.TextError
			switch {
			case c.line == 0 && err != nil:
				t.Errorf("%s (one byte at a time %v): %v", name, one, err)
			case c.line > 0 && (!errors.As(err, &te) || te.Line != c.line):
				t.Errorf("%s (one byte at a time %v): %v, want a TextError on line %d", name, one, err, c.line)
			}
		}
	}
}

func addPerson(t *testing.T, db *storage.DB, tenant, phone string, lat, lng float64, canCall bool) {
	t.Helper()
	ctx := context.Background()
	err := db.InTx(ctx, func(tx *sqlx.Tx) error {
		id, err := directory.CreateUser(ctx, tx, tenant, "", directory.NewUser{Profile: directory.Profile{FirstName: "Pat", LastName: phone}})
		if err != nil {
			return err
		}
		if _, err := directory.AddPhone(ctx, tx, tenant, id, storage.Phone{Number: phone, Type: "mobile", CanCall: canCall}); err != nil {
			return err
		}
		_, err = directory.AddLocation(ctx, tx, tenant, id, directory.NewLocation{Name: "home", Latitude: lat, Longitude: lng})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestTargetsInsideTheArea(t *testing.T) {
	t.Parallel()
	db := stacktest.DB(t)
	ctx := context.Background()
	tenant, other := stacktest.NewTenant(), stacktest.NewTenant()
	// Around (45.0, -122.0): 0.001 degrees of latitude is about 111 m.
	addPerson(t, db, tenant, "+15550000001", 45.0005, -122.0005, true)  // inside
	addPerson(t, db, tenant, "+15550000002", 45.02, -122.0, true)       // 2.2 km north: outside
	addPerson(t, db, tenant, "+15550000003", 45.0001, -122.0001, false) // inside, cannot take calls
	addPerson(t, db, other, "+15550000004", 45.0, -122.0, true)         // another tenant
	pts := &etn.Points{DB: db}
	if _, err := pts.Replace(ctx, tenant, "wells", points(
		etn.Point{Phone: "+15550000005", Name: "Well 1", Latitude: 45.001, Longitude: -121.999},
		etn.Point{Phone: "+15550000001", Name: "Same phone as a contact", Latitude: 45.0, Longitude: -122.0},
		etn.Point{Phone: "+15550000006", Name: "Far", Latitude: 46, Longitude: -122},
	)); err != nil {
		t.Fatal(err)
	}
	if _, err := pts.Replace(ctx, tenant, "unused", points(etn.Point{Phone: "+15550000007", Latitude: 45, Longitude: -122})); err != nil {
		t.Fatal(err)
	}
	if _, err := pts.Replace(ctx, other, "wells", points(etn.Point{Phone: "+15550000008", Name: "Another tenant's well", Latitude: 45, Longitude: -122})); err != nil {
		t.Fatal(err)
	}
	circle := alert.SelectedArea{Center: &alert.LatLng{Lat: 45.0, Lng: -122.0}, RadiusMeters: 500}
	square := alert.SelectedArea{Geometry: &alert.FeatureCollection{Type: "FeatureCollection", Features: []alert.Feature{{Type: "Feature",
		Geometry: alert.IGeometryObject{Type: "Polygon", Coordinates: json.RawMessage(`[[[-122.01, 44.99], [-121.99, 44.99], [-121.99, 45.01], [-122.01, 45.01], [-122.01, 44.99]]]`)}}}}}
	targets := &channelstate.AlertETNTargets{DB: db}
	for name, a := range map[string]alert.SelectedArea{"circle": circle, "polygon": square} {
		places := etn.Areas(&alert.Settings{Recipients: alert.Recipients{Areas: []alert.SelectedArea{a}}})
		if len(places) != 1 {
			t.Fatalf("%s: %d places", name, len(places))
		}
		alertID, err := storage.NextAlertID(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		if err := targets.StoreOnce(ctx, tenant, alertID, places, []string{"wells"}); err != nil {
			t.Fatal(err)
		}
		got, err := targets.Unfinished(ctx, tenant, alertID, 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		var phones []string
		for _, g := range got {
			phones = append(phones, fmt.Sprintf("%d/%s/%s", g.Seq, g.Phone, g.Name))
		}
		// The contact, not the point with the same number.
		want := []string{"1/+15550000001/Pat +15550000001", "2/+15550000005/Well 1"}
		if !slices.Equal(phones, want) {
			t.Errorf("%s: %v, want %v", name, phones, want)
		}
		page, err := targets.Unfinished(ctx, tenant, alertID, 1, 100)
		if err != nil || len(page) != 1 || page[0].Phone != "+15550000005" {
			t.Fatalf("%s: second page %+v %v", name, page, err)
		}
		if got, _ := targets.Unfinished(ctx, other, alertID, 0, 100); len(got) != 0 {
			t.Fatalf("%s: another tenant reads the targets %+v", name, got)
		}
	}
	lists, _, err := pts.Lists(ctx, tenant, "", 500, 0)
	if err != nil || len(lists) != 2 || lists[1].Name != "wells" || lists[1].Points != 3 {
		t.Fatalf("lists %+v %v", lists, err)
	}
	if err := pts.Delete(ctx, tenant, "unused"); err != nil {
		t.Fatal(err)
	}
	if err := pts.Delete(ctx, other, "wells"); err != nil {
		t.Fatal(err)
	}
	if err := pts.Delete(ctx, other, "wells"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("another tenant's list: %v", err)
	}
	if lists, _, _ := pts.Lists(ctx, tenant, "", 500, 0); len(lists) != 1 || lists[0].Name != "wells" || lists[0].Points != 3 {
		t.Fatalf("another tenant deleted the list: %+v", lists)
	}
}

// TestConcurrentCallLimit places more calls than the tenant's limit through
// the loopback provider, whose calls last a while, and checks at the
// provider that no more than the limit were ever in progress at once.
func TestConcurrentCallLimit(t *testing.T) {
	t.Parallel()
	db := stacktest.DB(t)
	ctx := context.Background()
	tenant := stacktest.NewTenant()
	const limit, calls = 3, 12
	slots := &etn.Slots{DB: db, Limit: limit, Poll: 50 * time.Millisecond}
	log := &voice.Calls{DB: db}
	prov := voicetest.New(t, "etn-token", "etn-secret")
	cb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		call, err := voice.Receive(r.Context(), log, []string{"etn-secret"}, tenant, channels.Etn, r.Header.Get(voice.SignatureHeader), body)
		if err != nil {
			t.Errorf("callback: %v", err)
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		if call.Final() {
			_ = slots.Release(r.Context(), tenant, call.Key)
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(cb.Close)
	var msgs []channels.Message
	for i := range calls {
		to := fmt.Sprintf("+1555000%04d", i)
		prov.Script(to, voicetest.Outcome{Status: voice.CallbackAnswered, AnsweredBy: "human", Hold: 300 * time.Millisecond})
		msgs = append(msgs, channels.Message{Key: fmt.Sprintf("etn-%d", i), Tenant: tenant, To: to, Text: "Boil water notice"})
	}
	snd := etn.New(voice.Sender{Endpoint: providerhttp.Endpoint{URL: prov.URL, Token: "etn-token", Concurrency: calls, Client: providerhttp.NewClient(0, 0)}, From: "+15550009999", CallbackURL: cb.URL, Calls: log}, slots)
	res, err := snd.Send(ctx, msgs)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Outcome != channels.Sent {
			t.Fatalf("%+v", r)
		}
	}
	stacktest.Eventually(t, 60*time.Second, "every call ended", func() bool {
		n, err := log.Pending(ctx, tenant, nil)
		return err == nil && n == 0
	})
	// More than the limit breaks the promise; fewer than two means calls
	// were not placed in parallel at all.
	if got := prov.MaxActive(); got > limit || got < 2 {
		t.Fatalf("%d calls were in progress at once, want 2..%d", got, limit)
	}
	if len(prov.Calls()) != calls || len(prov.Problems()) != 0 {
		t.Fatalf("calls %d, problems %v", len(prov.Calls()), prov.Problems())
	}
	// The callback records the final status before it releases the slot.
	stacktest.Eventually(t, 30*time.Second, "every slot released", func() bool {
		n, err := slots.InUse(ctx, tenant)
		return err == nil && n == 0
	})
}

// TestTakenSlotsFailTheCallTemporarily: when every slot is held (by a call
// whose final status never came back), a call waits at most SlotWait and
// fails temporarily with the reason, so its batch records it and is tried
// again rather than waiting silently; once a slot is free the call goes out.
func TestTakenSlotsFailTheCallTemporarily(t *testing.T) {
	t.Parallel()
	db := stacktest.DB(t)
	ctx := context.Background()
	tenant := stacktest.NewTenant()
	slots := &etn.Slots{DB: db, Limit: 1, Poll: 50 * time.Millisecond}
	if err := slots.Acquire(ctx, tenant, "a-call-without-callback"); err != nil {
		t.Fatal(err)
	}
	prov := voicetest.New(t, "etn-token", "etn-secret")
	snd := etn.New(voice.Sender{Endpoint: providerhttp.Endpoint{URL: prov.URL, Token: "etn-token", Client: providerhttp.NewClient(0, 0)}, From: "+15550009999", CallbackURL: "http://127.0.0.1:1/cb",
		Calls: &voice.Calls{DB: db}, SlotWait: 300 * time.Millisecond}, slots)
	msgs := []channels.Message{{Key: "etn-1", Tenant: tenant, To: "+15550000001", Text: "Boil water notice"}}
	began := time.Now()
	res, err := snd.Send(ctx, msgs)
	if err != nil {
		t.Fatal(err)
	}
	if r := res[0]; r.Outcome != channels.Failed || r.Permanent || !strings.Contains(r.Error, "no call slot") || time.Since(began) > 10*time.Second {
		t.Fatalf("%+v after %s", r, time.Since(began))
	}
	if n := len(prov.Calls()); n != 0 {
		t.Fatalf("%d calls without a slot", n)
	}
	if err := slots.Release(ctx, tenant, "a-call-without-callback"); err != nil {
		t.Fatal(err)
	}
	if res, err = snd.Send(ctx, msgs); err != nil || res[0].Outcome != channels.Sent {
		t.Fatalf("%+v %v", res, err)
	}
}
