package channelstate_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/tocsin/tocsin/alert"
	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/channelstate"
	"github.com/tocsin/tocsin/storage/directory"
	"github.com/tocsin/tocsin/storage/storagetest"
)

// person adds a user of tenant with a callable phone at (lat, lng) and,
// when token is not empty, a MyAlerts device.
func person(t *testing.T, db *storage.DB, tenant, name, phone string, lat, lng float64, token string) int64 {
	t.Helper()
	ctx := context.Background()
	var id int64
	err := db.InTx(ctx, func(tx *sqlx.Tx) error {
		u := directory.NewUser{Profile: directory.Profile{FirstName: name}}
		if token != "" {
			u.MobileApps = []directory.MobileApp{{InstallationID: "i-" + token, Platform: "ios", PushToken: token}}
		}
		var err error
		if id, err = directory.CreateUser(ctx, tx, tenant, "", u); err != nil {
			return err
		}
		if phone != "" {
			if _, err := directory.AddPhone(ctx, tx, tenant, id, storage.Phone{Number: phone, Type: "mobile", CanCall: true}); err != nil {
				return err
			}
			if _, err := directory.AddLocation(ctx, tx, tenant, id, directory.NewLocation{Name: "home", Latitude: lat, Longitude: lng}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// pointsOf yields ps for AddressPoints.Replace.
func pointsOf(ps []channelstate.AddressPoint) iter.Seq2[channelstate.AddressPoint, error] {
	return func(yield func(channelstate.AddressPoint, error) bool) {
		for _, p := range ps {
			if !yield(p, nil) {
				return
			}
		}
	}
}

// circleAt is the circle of radius metres around (lat, lng), as an
// alert's area gives it.
func circleAt(t *testing.T, lat, lng, radius float64) alert.Place {
	t.Helper()
	return placeOf(t, alert.SelectedArea{Center: &alert.LatLng{Lat: lat, Lng: lng}, RadiusMeters: radius})
}

// polygonOf is the polygon of rings ([lng, lat] positions, closed; the
// first is the outer ring, the others holes), as an alert's area gives it.
func polygonOf(t *testing.T, rings ...[][2]float64) alert.Place {
	t.Helper()
	coords, err := json.Marshal(rings)
	if err != nil {
		t.Fatal(err)
	}
	return placeOf(t, alert.SelectedArea{Geometry: &alert.FeatureCollection{Type: "FeatureCollection",
		Features: []alert.Feature{{Type: "Feature", Geometry: alert.IGeometryObject{Type: "Polygon", Coordinates: coords}}}}})
}

func placeOf(t *testing.T, a alert.SelectedArea) alert.Place {
	t.Helper()
	areas, err := alert.AreasOf([]alert.SelectedArea{a})
	if err != nil || len(areas.Places()) != 1 {
		t.Fatalf("area %+v: %v", a, err)
	}
	return areas.Places()[0]
}

// storeTargets stores the ETN targets of a new alert of tenant and returns
// them as seq/phone/name.
func storeTargets(t *testing.T, db *storage.DB, tenant string, areas []alert.Place, lists []string) []string {
	t.Helper()
	ctx := context.Background()
	id, err := storage.NextAlertID(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	at := &channelstate.AlertETNTargets{DB: db}
	if err := at.StoreOnce(ctx, tenant, id, areas, lists); err != nil {
		t.Fatal(err)
	}
	todo, err := at.Unfinished(ctx, tenant, id, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, x := range todo {
		got = append(got, fmt.Sprintf("%d/%s/%s", x.Seq, x.Phone, x.Name))
	}
	return got
}

func TestCallsFollowAttemptsAndStayWithTheirTenant(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, other := stacktest.DBTenants(t)
	calls := &channelstate.Calls{DB: db}
	alert := int64(7)
	c := channelstate.NewCall{Tenant: tenant, Key: "k1", Channel: "voice", AlertID: &alert, Recipient: "+15550001111",
		Message: []byte(`{"Options":{"Confirm":true}}`), Attempt: 1, MaxAttempts: 2, RetryIntervalSeconds: 30}
	if err := calls.Prepare(ctx, c); err != nil {
		t.Fatal(err)
	}
	if err := calls.Placed(ctx, tenant, "k1", "p1"); err != nil {
		t.Fatal(err)
	}
	if _, err := calls.Get(ctx, other, "k1"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("other tenant's get: %v", err)
	}
	if _, err := calls.Update(ctx, other, "voice", "k1", nil); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("other tenant's update: %v", err)
	}
	if n, _ := calls.Pending(ctx, tenant, &alert); n != 1 {
		t.Fatalf("pending %d", n)
	}
	// Placed and not answered yet: ringing within the window, not past it.
	if o, err := calls.Outlook(ctx, tenant, alert, time.Hour); err != nil || o.Ringing != 1 || o.NextDue != nil {
		t.Fatalf("outlook while ringing %+v %v", o, err)
	}
	time.Sleep(10 * time.Millisecond)
	if o, _ := calls.Outlook(ctx, tenant, alert, time.Millisecond); o.Ringing != 0 {
		t.Fatalf("a call dialled before the ring window counts as ringing: %+v", o)
	}
	got, err := calls.Update(ctx, tenant, "voice", "k1", func(cur channelstate.CurrentCall) (channelstate.CallUpdate, error) {
		if string(cur.Message) != `{"Options": {"Confirm": true}}` || cur.ProviderCallID != "p1" || cur.RetryIntervalSeconds != 30 || cur.Attempts != 1 {
			t.Errorf("current call %+v", cur)
		}
		return channelstate.CallUpdate{Status: "Busy", ProviderCallID: "p1", RetryAfterSeconds: 1}, nil
	})
	if err != nil || got.Status != "Busy" || got.NextAttemptAt == nil {
		t.Fatalf("update: %+v %v", got, err)
	}
	next, err := calls.Outlook(ctx, tenant, alert, time.Hour)
	if err != nil || next.NextDue == nil || next.Ringing != 0 {
		t.Fatalf("outlook %+v %v", next, err)
	}
	if none, _ := calls.Outlook(ctx, other, alert, time.Hour); none.NextDue != nil {
		t.Fatal("other tenant sees a retry")
	}
	time.Sleep(1100 * time.Millisecond)
	due, err := calls.ClaimDue(ctx, tenant, &alert, 10)
	if err != nil || len(due) != 1 || due[0].Attempts != 1 {
		t.Fatalf("due %+v %v", due, err)
	}
	if again, _ := calls.ClaimDue(ctx, tenant, &alert, 10); len(again) != 0 {
		t.Fatal("a claimed call is claimed again")
	}
	c.Attempt = 2
	if err := calls.Prepare(ctx, c); err != nil {
		t.Fatal(err)
	}
	if got, _ := calls.Get(ctx, tenant, "k1"); got.Attempts != 2 || got.ProviderCallID != "" || got.Status != "Requested" {
		t.Fatalf("second attempt %+v", got)
	}
	if _, err := calls.Update(ctx, tenant, "voice", "k1", func(cur channelstate.CurrentCall) (channelstate.CallUpdate, error) {
		if len(cur.EarlierCallIDs) != 1 || cur.EarlierCallIDs[0] != "p1" {
			t.Errorf("earlier calls %v", cur.EarlierCallIDs)
		}
		return channelstate.CallUpdate{}, errors.New("refused")
	}); err == nil || err.Error() != "refused" {
		t.Fatalf("decide's error: %v", err)
	}
	if err := calls.Fail(ctx, tenant, "k1", "gone"); err != nil {
		t.Fatal(err)
	}
	if got, _ := calls.Get(ctx, tenant, "k1"); got.Status != "Failed" || got.Error != "gone" {
		t.Fatalf("failed call %+v", got)
	}
	if n, _ := calls.Pending(ctx, tenant, &alert); n != 0 {
		t.Fatalf("pending %d after failing", n)
	}
}

func TestCAPMessagesAreReplacedByIdentifier(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, other := stacktest.DBTenants(t)
	msgs := &channelstate.CAPMessages{DB: db}
	alert := int64(3)
	m := channelstate.CAPMessage{Tenant: tenant, Identifier: "id-1", AlertID: &alert, Channel: "eas", Sender: "s@x",
		Sent: time.Now().UTC().Truncate(time.Second), MsgType: "Alert", Document: "<alert/>", Status: "Failed", Error: "down"}
	if err := msgs.Record(ctx, m); err != nil {
		t.Fatal(err)
	}
	m.Status, m.Error, m.Document = "Sent", "", "<alert>2</alert>"
	if err := msgs.Record(ctx, m); err != nil {
		t.Fatal(err)
	}
	got, err := msgs.ForAlert(ctx, tenant, alert, "eas")
	if err != nil || len(got) != 1 || got[0].Status != "Sent" || got[0].Document != "<alert>2</alert>" {
		t.Fatalf("%+v %v", got, err)
	}
	if got, _ := msgs.ForAlert(ctx, other, alert, "eas"); len(got) != 0 {
		t.Fatal("another tenant sees the message")
	}
}

func TestDevicesRemoveOnlyTheTenantsTokens(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, other := stacktest.DBTenants(t)
	ada := person(t, db, tenant, "Ada", "", 0, 0, "tok-1")
	bea := person(t, db, other, "Bea", "", 0, 0, "tok-2")
	devs := &channelstate.Devices{DB: db}
	count := func(tn string, id int64) int {
		ci, err := directory.ContactInformation(ctx, db, tn, id)
		if err != nil {
			t.Fatal(err)
		}
		return len(ci.Devices)
	}
	if count(tenant, ada) != 1 || count(other, bea) != 1 {
		t.Fatal("seeded devices missing")
	}
	if err := devs.Remove(ctx, other, "myalerts", []string{"tok-1"}); err != nil {
		t.Fatal(err)
	}
	if count(tenant, ada) != 1 {
		t.Fatal("another tenant removed the token")
	}
	if err := devs.Remove(ctx, tenant, "myalerts", []string{"tok-1", "tok-2"}); err != nil {
		t.Fatal(err)
	}
	if count(tenant, ada) != 0 || count(other, bea) != 1 {
		t.Fatal("remove took the wrong tokens")
	}
}

func TestNeighborhoodStatusesPageByAlert(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, other := stacktest.DBTenants(t)
	st := &channelstate.NeighborhoodStatuses{DB: db}
	alert := int64(9)
	rows := []channelstate.NeighborhoodStatus{
		{Tenant: tenant, AlertID: &alert, MessageKey: "m", AccountID: "a", AccountName: "A", GroupID: "g1", GroupName: "North", Status: "Failed", Error: "x"},
		{Tenant: tenant, AlertID: &alert, MessageKey: "m", AccountID: "a", AccountName: "A", GroupID: "g2", GroupName: "South", Status: "Posted", PostID: "p2"},
		{Tenant: tenant, MessageKey: "n", AccountID: "a", AccountName: "A", GroupID: "g1", GroupName: "North", Status: "Posted"},
	}
	if err := st.Record(ctx, rows); err != nil {
		t.Fatal(err)
	}
	rows[0].Status, rows[0].PostID, rows[0].Error = "Posted", "p1", ""
	if err := st.Record(ctx, rows[:1]); err != nil {
		t.Fatal(err)
	}
	got, total, err := st.ForAlert(ctx, tenant, alert, "lower(group_name) DESC", 1, 0)
	if err != nil || total != 2 || len(got) != 1 || got[0].GroupID != "g2" {
		t.Fatalf("%+v %d %v", got, total, err)
	}
	got, _, _ = st.ForAlert(ctx, tenant, alert, "lower(group_name) DESC", 1, 1)
	if len(got) != 1 || got[0].Status != "Posted" || got[0].PostID != "p1" {
		t.Fatalf("replaced status %+v", got)
	}
	if got, total, _ := st.ForAlert(ctx, other, alert, "status", 10, 0); len(got) != 0 || total != 0 {
		t.Fatal("another tenant sees the statuses")
	}
}

func TestProvidersKeepSealedSettingsPerTenant(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, other := stacktest.DBTenants(t)
	p := &channelstate.Providers{DB: db}
	r, created, err := p.Put(ctx, tenant, "push", []byte("one"))
	if err != nil || !created || r.Channel != "push" {
		t.Fatalf("%+v %v %v", r, created, err)
	}
	r2, created, err := p.Put(ctx, tenant, "push", []byte("two"))
	if err != nil || created || !r2.UpdatedAt.After(r.UpdatedAt) || !r2.CreatedAt.Equal(r.CreatedAt) {
		t.Fatalf("%+v %v %v", r2, created, err)
	}
	if _, _, err := p.Put(ctx, tenant, "fax", []byte("f")); err != nil {
		t.Fatal(err)
	}
	if got, err := p.Get(ctx, tenant, "push"); err != nil || string(got.Sealed) != "two" {
		t.Fatalf("%+v %v", got, err)
	}
	if at, err := p.UpdatedAt(ctx, tenant, "push"); err != nil || !at.Equal(r2.UpdatedAt) {
		t.Fatalf("%v %v", at, err)
	}
	if list, err := p.List(ctx, tenant); err != nil || len(list) != 2 || list[0].Channel != "fax" {
		t.Fatalf("%+v %v", list, err)
	}
	if _, err := p.Get(ctx, other, "push"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("other tenant's get: %v", err)
	}
	if err := p.Delete(ctx, other, "push"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("other tenant's delete: %v", err)
	}
	if err := p.Delete(ctx, tenant, "push"); err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpdatedAt(ctx, tenant, "push"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("deleted: %v", err)
	}
}

func TestCallSlotsLimitHolders(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, other := stacktest.DBTenants(t)
	s := &channelstate.CallSlots{DB: db}
	for _, tn := range []string{tenant, other} {
		if err := s.Ensure(ctx, tn, 1); err != nil {
			t.Fatal(err)
		}
	}
	if ok, err := s.Take(ctx, tenant, 1, "a", time.Minute); !ok || err != nil {
		t.Fatalf("first %v %v", ok, err)
	}
	if ok, _ := s.Take(ctx, tenant, 1, "a", time.Minute); !ok {
		t.Fatal("the holder does not keep its slot")
	}
	if ok, _ := s.Take(ctx, tenant, 1, "b", time.Minute); ok {
		t.Fatal("a second holder got the only slot")
	}
	if ok, _ := s.Take(ctx, other, 1, "b", time.Minute); !ok {
		t.Fatal("another tenant's slot is taken")
	}
	if n, _ := s.InUse(ctx, tenant); n != 1 {
		t.Fatalf("in use %d", n)
	}
	if err := s.Release(ctx, other, "a"); err != nil {
		t.Fatal(err)
	}
	if n, _ := s.InUse(ctx, tenant); n != 1 {
		t.Fatal("another tenant released the slot")
	}
	if err := s.Release(ctx, tenant, "a"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := s.Take(ctx, tenant, 1, "b", time.Minute); !ok {
		t.Fatal("a released slot is not free")
	}
}

func TestETNTargetsFromContactsAndAddressPoints(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, other := stacktest.DBTenants(t)
	person(t, db, tenant, "Pat", "+15550000001", 45, -122, "")
	person(t, db, tenant, "Far", "+15550000009", 10, 10, "")
	person(t, db, other, "Oth", "+15550000002", 45, -122, "")
	pts := &channelstate.AddressPoints{DB: db}
	wells := []channelstate.AddressPoint{
		{Phone: "+15550000003", Name: "Well", Latitude: 45.001, Longitude: -122},
		{Phone: "+15550000001", Name: "Dup", Latitude: 45, Longitude: -122},
	}
	if _, err := pts.Replace(ctx, tenant, "wells", pointsOf(wells)); err != nil {
		t.Fatal(err)
	}
	if lists, _, err := pts.Lists(ctx, tenant, "", 500, 0); err != nil || len(lists) != 1 || lists[0].Points != 2 {
		t.Fatalf("%+v %v", lists, err)
	}
	if lists, _, _ := pts.Lists(ctx, other, "", 500, 0); len(lists) != 0 {
		t.Fatal("another tenant sees the list")
	}
	circle := circleAt(t, 45, -122, 1000)
	square := polygonOf(t, [][2]float64{{-122.1, 44.9}, {-121.9, 44.9}, {-121.9, 45.1}, {-122.1, 45.1}, {-122.1, 44.9}})
	at := &channelstate.AlertETNTargets{DB: db}
	targets := func(tenant string, areas []alert.Place, lists []string) []string {
		return storeTargets(t, db, tenant, areas, lists)
	}
	// The contact's phone is called once, as the contact, not as the
	// list's point with the same number; Far and the other tenant's contact
	// are not called.
	want := []string{"1/+15550000001/Pat", "2/+15550000003/Well"}
	for name, a := range map[string]alert.Place{"circle": circle, "polygon": square} {
		if got := targets(tenant, []alert.Place{a}, []string{"wells"}); !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", name, got, want)
		}
	}
	if got := targets(tenant, []alert.Place{circle}, nil); !slices.Equal(got, want[:1]) {
		t.Errorf("without lists: %v, want only the contact", got)
	}
	if got := targets(other, []alert.Place{square}, []string{"wells"}); !slices.Equal(got, []string{"1/+15550000002/Oth"}) {
		t.Errorf("the other tenant: %v, want only its own contact", got)
	}
	// A hole round Pat and the point with Pat's number, not the well:
	// nothing inside the hole is called or counted, as no contact inside
	// it is a recipient.
	holed := polygonOf(t, [][2]float64{{-122.1, 44.9}, {-121.9, 44.9}, {-121.9, 45.1}, {-122.1, 45.1}, {-122.1, 44.9}},
		[][2]float64{{-122.0005, 44.9995}, {-121.9995, 44.9995}, {-121.9995, 45.0005}, {-122.0005, 45.0005}, {-122.0005, 44.9995}})
	if got := targets(tenant, []alert.Place{holed}, []string{"wells"}); !slices.Equal(got, []string{"1/+15550000003/Well"}) {
		t.Errorf("a polygon with a hole: %v, want only the well outside the hole", got)
	}
	if n, err := at.Count(ctx, tenant, []alert.Place{holed}, []string{"wells"}); err != nil || n != 1 {
		t.Errorf("a polygon with a hole: count %d %v, want 1", n, err)
	}

	alertID, err := storage.NextAlertID(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // the second time stores nothing
		if err := at.StoreOnce(ctx, tenant, alertID, []alert.Place{circle, square}, []string{"wells"}); err != nil {
			t.Fatal(err)
		}
	}
	todo, err := at.Unfinished(ctx, tenant, alertID, 0, 10)
	if err != nil || len(todo) != 2 || todo[0].Seq != 1 || todo[1].Seq != 2 {
		t.Fatalf("%+v %v", todo, err)
	}
	if got, _ := at.Unfinished(ctx, tenant, alertID, 1, 10); len(got) != 1 || got[0].Phone != "+15550000003" {
		t.Fatalf("after the first: %+v", got)
	}
	if got, _ := at.Unfinished(ctx, other, alertID, 0, 10); len(got) != 0 {
		t.Fatal("another tenant sees the targets")
	}
	calls := &channelstate.Calls{DB: db}
	head := "alert-" + tenant + "-" + strconv.FormatInt(alertID, 10) + "-abcdefgh" // the alert's workflow id
	key := head + ":etn:1:1"
	if err := calls.Prepare(ctx, channelstate.NewCall{Tenant: tenant, Key: key, Channel: "etn", AlertID: &alertID, Message: []byte(`{}`), Attempt: 1, MaxAttempts: 1, RetryIntervalSeconds: 30}); err != nil {
		t.Fatal(err)
	}
	if _, err := calls.Update(ctx, tenant, "etn", key, func(channelstate.CurrentCall) (channelstate.CallUpdate, error) {
		return channelstate.CallUpdate{Status: "Answered"}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := at.RecordCalls(ctx, tenant, alertID, head, []channelstate.ETNCallResult{
		{Seq: 1, Status: storage.DeliverySent, ProviderMessageID: "c1"},
		{Seq: 2, Status: storage.DeliveryRetrying, Error: "busy"},
	}); err != nil {
		t.Fatal(err)
	}
	todo, _ = at.Unfinished(ctx, tenant, alertID, 0, 10)
	if len(todo) != 1 || todo[0].Seq != 2 {
		t.Fatalf("after recording: %+v", todo)
	}
	if err := pts.Delete(ctx, other, "wells"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("other tenant's delete: %v", err)
	}
	if err := pts.Delete(ctx, tenant, "wells"); err != nil {
		t.Fatal(err)
	}
}

// A circle that reaches over the antimeridian or round a pole finds the
// contacts and address points on every side of it, and no further.
func TestETNCirclesReachOverTheAntimeridianAndThePoles(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, _ := stacktest.DBTenants(t)
	person(t, db, tenant, "West", "+15550000011", 40, -179.95, "")
	person(t, db, tenant, "Pole180", "+15550000012", 89.9, 180, "")
	person(t, db, tenant, "Far", "+15550000019", 40, -179, "")
	pts := &channelstate.AddressPoints{DB: db}
	points := []channelstate.AddressPoint{
		{Phone: "+15550000013", Name: "East", Latitude: 40, Longitude: 179.95},
		{Phone: "+15550000014", Name: "Pole0", Latitude: 89.9, Longitude: 0},
		{Phone: "+15550000018", Name: "FarPoint", Latitude: 89, Longitude: 0},
	}
	if _, err := pts.Replace(ctx, tenant, "edges", pointsOf(points)); err != nil {
		t.Fatal(err)
	}
	antimeridian := circleAt(t, 40, 179.99, 50000)
	pole := circleAt(t, 89.95, 90, 50000)
	for name, c := range map[string]struct {
		area alert.Place
		want []string
	}{
		"antimeridian": {antimeridian, []string{"1/+15550000011/West", "2/+15550000013/East"}},
		"pole":         {pole, []string{"1/+15550000012/Pole180", "2/+15550000014/Pole0"}},
	} {
		areas, lists := []alert.Place{c.area}, []string{"edges"}
		if n, err := (&channelstate.AlertETNTargets{DB: db}).Count(ctx, tenant, areas, lists); err != nil || n != int64(len(c.want)) {
			t.Errorf("%s: count %d %v, want %d", name, n, err, len(c.want))
		}
		if got := storeTargets(t, db, tenant, areas, lists); !slices.Equal(got, c.want) {
			t.Errorf("%s: stored %v, want %v", name, got, c.want)
		}
	}
	// Both areas at once count each number once, as storing them does.
	both := []alert.Place{antimeridian, pole, antimeridian}
	if n, err := (&channelstate.AlertETNTargets{DB: db}).Count(ctx, tenant, both, []string{"edges"}); err != nil || n != 4 {
		t.Errorf("several areas: count %d %v, want 4", n, err)
	}
}

// TestETNCountIsBounded: counting the numbers inside areas stops after its
// statement timeout with a *CountTimeoutError, rather than holding the
// connection for as long as the query takes (here: while another
// transaction keeps the address points locked).
func TestETNCountIsBounded(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, _ := stacktest.DBTenants(t)
	pts := &channelstate.AddressPoints{DB: db}
	if _, err := pts.Replace(ctx, tenant, "wells", pointsOf([]channelstate.AddressPoint{{Phone: "+15550000021", Name: "Well", Latitude: 40, Longitude: -100}})); err != nil {
		t.Fatal(err)
	}
	areas := []alert.Place{circleAt(t, 40, -100, 1000)}
	counter := &channelstate.AlertETNTargets{DB: db, CountTimeout: 200 * time.Millisecond}
	var before string
	if err := db.GetContext(ctx, &before, `SHOW statement_timeout`); err != nil {
		t.Fatal(err)
	}
	if n, err := counter.Count(ctx, tenant, areas, []string{"wells"}); err != nil || n != 1 {
		t.Fatalf("count %d %v, want 1", n, err)
	}

	lock, err := storagetest.LockAddressPoints(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = lock.Rollback() }()
	// Without a bound the count would wait for the lock as long as the
	// context lets it.
	waitAtMost, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	started := time.Now()
	n, err := counter.Count(waitAtMost, tenant, areas, []string{"wells"})
	var timedOut *channelstate.CountTimeoutError
	if !errors.As(err, &timedOut) || timedOut.After != 200*time.Millisecond {
		t.Fatalf("count under a lock: %d %v after %s, want a CountTimeoutError", n, err, time.Since(started))
	}
	if took := time.Since(started); took > 5*time.Second {
		t.Fatalf("the count stopped after %s, want about its timeout", took)
	}
	_ = lock.Rollback()
	// The bound was the transaction's only: the connections are as they were.
	var setting string
	if err := db.GetContext(ctx, &setting, `SHOW statement_timeout`); err != nil || setting != before {
		t.Fatalf("statement_timeout afterwards %q %v", setting, err)
	}
	if n, err := counter.Count(ctx, tenant, areas, []string{"wells"}); err != nil || n != 1 {
		t.Fatalf("count after the lock: %d %v, want 1", n, err)
	}
}

// TestConcurrentImportsOfAListLeaveOne: imports of one list that run at
// once each replace it whole; the list ends as exactly one of them.
func TestConcurrentImportsOfAListLeaveOne(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, _ := stacktest.DBTenants(t)
	pts := &channelstate.AddressPoints{DB: db}
	const imports, size = 6, 300
	for round := range 3 {
		errs := make(chan error, imports)
		for i := range imports {
			go func() {
				_, err := pts.Replace(ctx, tenant, "wells", func(yield func(channelstate.AddressPoint, error) bool) {
					for j := range size {
						if !yield(channelstate.AddressPoint{Phone: fmt.Sprintf("+1555%03d%04d", i, j), Name: strconv.Itoa(i), Latitude: 45, Longitude: -122}, nil) {
							return
						}
					}
				})
				errs <- err
			}()
		}
		for range imports {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
		if lists, _, err := pts.Lists(ctx, tenant, "", 500, 0); err != nil || len(lists) != 1 || lists[0].Points != size {
			t.Fatalf("round %d: %+v %v", round, lists, err)
		}
	}
}

// TestAnImportHoldsNoConnectionWhileItsPointsArrive: a client that sends
// its list slowly does not hold one of the pool's connections meanwhile.
func TestAnImportHoldsNoConnectionWhileItsPointsArrive(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, _ := stacktest.DBTenants(t)
	pts := &channelstate.AddressPoints{DB: db}
	arrived, more := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, err := pts.Replace(ctx, tenant, "slow", func(yield func(channelstate.AddressPoint, error) bool) {
			if !yield(channelstate.AddressPoint{Phone: "+15550000001", Latitude: 45, Longitude: -122}, nil) {
				return
			}
			close(arrived)
			<-more
			yield(channelstate.AddressPoint{Phone: "+15550000002", Name: "two, \"quoted\"", Latitude: 45.5, Longitude: -122.25}, nil)
		})
		done <- err
	}()
	<-arrived
	if n := db.Stats().InUse; n != 0 {
		t.Errorf("%d connections in use while the points arrive", n)
	}
	close(more)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if lists, _, err := pts.Lists(ctx, tenant, "", 500, 0); err != nil || len(lists) != 1 || lists[0].Points != 2 {
		t.Fatalf("%+v %v", lists, err)
	}
}
