package activities_test

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/tocsin/tocsin/activities"
	"github.com/tocsin/tocsin/alert"
	"github.com/tocsin/tocsin/channels"
	"github.com/tocsin/tocsin/channels/voice"
	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/files"
	"github.com/tocsin/tocsin/storage/storagetest"
)

// fakeSender refuses one number permanently, fails another temporarily
// while failTemp is set, and records every key it was given.
type fakeSender struct {
	mu       sync.Mutex
	keys     []string
	failTemp bool
	down     bool
}

func (f *fakeSender) Send(_ context.Context, msgs []channels.Message) ([]channels.Result, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		return nil, errors.New("connection refused")
	}
	out := make([]channels.Result, len(msgs))
	for i, m := range msgs {
		f.keys = append(f.keys, m.Key)
		switch {
		case m.To == "+15550000002":
			out[i] = channels.Result{Key: m.Key, Outcome: channels.Failed, Permanent: true, Error: "invalid number"}
		case m.To == "+15550000003" && f.failTemp:
			out[i] = channels.Result{Key: m.Key, Outcome: channels.Failed, Error: "provider answered 503"}
		default:
			out[i] = channels.Result{Key: m.Key, Outcome: channels.Sent, ProviderMessageID: "p-" + m.To}
		}
	}
	return out, nil
}

func (f *fakeSender) sent() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	k := f.keys
	f.keys = nil
	return k
}

func newAlert(t *testing.T, db *storage.DB, tenant string) int64 {
	t.Helper()
	return storeAlert(t, db, tenant, alert.Settings{
		Type:     alert.TypeDefault,
		Message:  alert.MessageSettings{Subject: "S", Body: "Hi {{firstName}}"},
		Channels: &alert.Channels{Text: &alert.TextMessageChannel{Enabled: true}},
	}, nil, []alert.AdHocRecipient{
		{FirstName: "One", Phone: "+15550000001"}, {FirstName: "Two", Phone: "+15550000002"},
		{FirstName: "Three", Phone: "+15550000003"}, {FirstName: "Four", Email: "four@example.com"},
	})
}

// testTag is the tag of the alerts storeAlert stores.
const testTag = "abcdefgh"

// storeAlert stores a queued alert of settings, with the tag testTag,
// attaching the stored objects refs, with its ad-hoc recipients resolved,
// as the API accepts one, and returns its id.
func storeAlert(t *testing.T, db *storage.DB, tenant string, s alert.Settings, refs []storage.AttachmentRef, adhoc []alert.AdHocRecipient) int64 {
	t.Helper()
	return storeTaggedAlert(t, db, tenant, testTag, s, refs, adhoc)
}

// storeTaggedAlert is storeAlert with the tag tag.
func storeTaggedAlert(t *testing.T, db *storage.DB, tenant, tag string, s alert.Settings, refs []storage.AttachmentRef, adhoc []alert.AdHocRecipient) int64 {
	t.Helper()
	ctx := context.Background()
	raw, _ := json.Marshal(s)
	att, _ := json.Marshal(append([]storage.AttachmentRef{}, refs...))
	var id int64
	err := db.InTx(ctx, func(tx *sqlx.Tx) error {
		var err error
		if id, err = storage.NextAlertID(ctx, tx); err != nil {
			return err
		}
		if err := storage.InsertAlert(ctx, tx, &storage.Alert{ID: id, TenantID: tenant, Type: "Default", Priority: "NonEmergency",
			Subject: s.Message.Subject, Channels: pq.StringArray(s.Channels.Enabled()), Settings: raw, Attachments: att,
			Status: storage.AlertQueued, WorkflowID: alert.WorkflowID(tenant, id, tag), CreatedAt: time.Now()}); err != nil {
			return err
		}
		_, err = storage.ResolveRecipients(ctx, tx, tenant, id, storage.RecipientSpec{RecipientSpec: alert.RecipientSpec{AdHoc: adhoc}})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// deliveries reads the stored deliveries of the batch in, by seq.
func deliveries(t *testing.T, db *storage.DB, in activities.BatchInput) map[int64]storagetest.BatchResult {
	t.Helper()
	rows, err := storagetest.BatchResults(context.Background(), db, storage.BatchKey{Tenant: in.Tenant, AlertID: in.AlertID,
		Channel: in.Channel, Cycle: in.Cycle, Lo: in.Lo, Hi: in.Hi})
	if err != nil {
		t.Fatal(err)
	}
	out := map[int64]storagetest.BatchResult{}
	for _, r := range rows {
		out[r.Seq] = r
	}
	return out
}

func TestDeliverBatchClassifiesErrorsAndNeverDuplicates(t *testing.T) {
	t.Parallel()
	db := stacktest.DB(t)
	snd := &fakeSender{failTemp: true}
	a, in := textBatch(t, db, snd)
	tenant, id := in.Tenant, in.AlertID
	ctx := context.Background()

	out, err := a.DeliverBatch(ctx, in)
	if err == nil || !strings.Contains(err.Error(), "1 temporary failures") {
		t.Fatalf("first attempt: %v", err)
	}
	first := snd.sent()
	if len(first) != 3 || out.Sent != 1 || out.Failed != 2 || out.Retrying != 1 {
		t.Fatalf("first attempt sent %v, outcome %+v", first, out)
	}
	d := deliveries(t, db, in)
	if d[1].Status != "Sent" || d[2].Status != "Failed" || !d[2].Permanent || d[3].Status != "Retrying" ||
		d[4].Status != "Failed" || d[4].Error != "no text address" {
		t.Fatalf("after the first attempt: %+v", d)
	}

	// The retry sends only the temporary failure, with the same key.
	snd.failTemp = false
	if _, err := a.DeliverBatch(ctx, in); err != nil {
		t.Fatal(err)
	}
	second := snd.sent()
	if len(second) != 1 || second[0] != first[2] || second[0] != alert.DeliveryKey(tenant, id, testTag, "text", 1, 3) ||
		second[0] != "alert-"+tenant+"-"+strconv.FormatInt(id, 10)+"-abcdefgh:text:1:3" {
		t.Fatalf("retry sent %v (first attempt %v)", second, first)
	}
	d = deliveries(t, db, in)
	if len(d) != 4 || d[3].Status != "Sent" || d[3].Attempts != 2 || d[1].Attempts != 1 {
		t.Fatalf("after the retry: %+v", d)
	}
	// A batch run again (a worker died after writing) sends nothing more.
	if _, err := a.DeliverBatch(ctx, in); err != nil {
		t.Fatal(err)
	}
	if again := snd.sent(); len(again) != 0 {
		t.Fatalf("a finished batch sent %v again", again)
	}
	cs, err := storage.AlertChannelCounts(ctx, db, tenant, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 1 || cs[0].Total != 4 || cs[0].Sent != 2 || cs[0].Failed != 2 {
		t.Fatalf("batch counts %+v", cs)
	}
}

func TestDeliverBatchGivesUpOnTheLastAttempt(t *testing.T) {
	t.Parallel()
	db := stacktest.DB(t)
	tenant := stacktest.NewTenant()
	id := newAlert(t, db, tenant)
	snd := &fakeSender{failTemp: true, down: true}
	a := &activities.Activities{DB: db, Senders: channels.Senders{channels.Text: snd}}
	in := activities.BatchInput{AlertRef: activities.AlertRef{Tenant: tenant, AlertID: id, Tag: testTag}, Channel: "text", Cycle: 1, Lo: 0, Hi: 4, MaxAttempts: 2}
	ctx := context.Background()
	// The provider is down: nothing is recorded, the batch is retried.
	if _, err := a.DeliverBatch(ctx, in); err == nil {
		t.Fatal("a provider that is down did not fail the attempt")
	}
	if d := deliveries(t, db, in); len(d) != 0 {
		t.Fatalf("recorded %+v", d)
	}
	// On the last attempt what still fails is final.
	snd.down = false
	in.MaxAttempts = 1
	if _, err := a.DeliverBatch(ctx, in); err != nil {
		t.Fatal(err)
	}
	d := deliveries(t, db, in)
	if d[3].Status != "Failed" || !strings.HasPrefix(d[3].Error, "gave up after 1 attempts") || d[1].Status != "Sent" {
		t.Fatalf("after the last attempt: %+v", d)
	}
	// A channel without a provider fails permanently.
	a.Senders = channels.Senders{}
	in.Channel = "voice"
	if _, err := a.DeliverBatch(ctx, in); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range deliveries(t, db, in) {
		if r.Status == storage.DeliveryFailed && r.Permanent {
			n++
		}
	}
	if n != 4 {
		t.Fatalf("%d voice failures, want 4", n)
	}
}

// recordingSender takes every message and keeps them.
type recordingSender struct {
	mu   sync.Mutex
	msgs []channels.Message
}

func (r *recordingSender) Send(_ context.Context, msgs []channels.Message) ([]channels.Result, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]channels.Result, len(msgs))
	for i, m := range msgs {
		r.msgs = append(r.msgs, m)
		out[i] = channels.Result{Key: m.Key, Outcome: channels.Sent}
	}
	return out, nil
}

// emailAlert stores an email alert to one ad-hoc address that attaches the
// stored objects refs, with its recipient resolved.
func emailAlert(t *testing.T, db *storage.DB, tenant string, refs ...storage.AttachmentRef) int64 {
	t.Helper()
	return storeAlert(t, db, tenant, alert.Settings{Type: alert.TypeDefault, Message: alert.MessageSettings{Subject: "Map", Body: "See the map."},
		Channels: &alert.Channels{Email: &alert.EmailChannel{Enabled: true}}}, refs, []alert.AdHocRecipient{{FirstName: "Ann", Email: "ann@example.com"}})
}

// TestDeliverBatchRetriesAnAttachmentTheStoreCouldNotRead: when the object
// store fails, the email deliveries that carry the attachment are Retrying
// (not an error of the whole batch, not a Pending recipient) and the next
// attempt reads the store again; on the last attempt they fail in words,
// without the store's own.
func TestDeliverBatchRetriesAnAttachmentTheStoreCouldNotRead(t *testing.T) {
	t.Parallel()
	db := stacktest.DB(t)
	objs := stacktest.Objects(t)
	tenant := stacktest.NewTenant()
	ctx := context.Background()
	key := storage.TenantKey(tenant, "files/1/map.png")
	if _, err := objs.Client.PutObject(ctx, objs.Bucket, key, strings.NewReader("png"), 3, minio.PutObjectOptions{ContentType: "image/png"}); err != nil {
		t.Fatal(err)
	}
	ref := storage.AttachmentRef{Name: "map.png", FullName: "maps/map.png", ContentType: "image/png", Size: 3, Key: key}
	down, err := minio.New("127.0.0.1:1", &minio.Options{Creds: credentials.NewStaticV4("x", "y", "")})
	if err != nil {
		t.Fatal(err)
	}
	snd := &recordingSender{}
	a := &activities.Activities{DB: db, Objects: &storage.Objects{Client: down, Bucket: objs.Bucket}, Senders: channels.Senders{channels.Email: snd}}

	id := emailAlert(t, db, tenant, ref)
	in := activities.BatchInput{AlertRef: activities.AlertRef{Tenant: tenant, AlertID: id, Tag: testTag}, Channel: "email", Cycle: 1, Lo: 0, Hi: 1, MaxAttempts: 3}
	out, err := a.DeliverBatch(ctx, in)
	if err == nil || out.Retrying != 1 {
		t.Fatalf("store down: outcome %+v, error %v; want the delivery Retrying and the batch retried", out, err)
	}
	if d := deliveries(t, db, in); d[1].Status != "Retrying" || d[1].Error != "attachment maps/map.png could not be read from the file store" {
		t.Fatalf("store down: %+v", d)
	}
	// The store is back: the retry reads it and sends the attachment.
	a.Objects = objs
	if _, err := a.DeliverBatch(ctx, in); err != nil {
		t.Fatal(err)
	}
	if len(snd.msgs) != 1 || len(snd.msgs[0].Attachments) != 1 || string(snd.msgs[0].Attachments[0].Data) != "png" {
		t.Fatalf("sent %+v", snd.msgs)
	}

	// The store stays down through the last attempt: the delivery fails.
	b := &activities.Activities{DB: db, Objects: &storage.Objects{Client: down, Bucket: objs.Bucket}, Senders: channels.Senders{channels.Email: snd}}
	id = emailAlert(t, db, tenant, ref)
	in = activities.BatchInput{AlertRef: activities.AlertRef{Tenant: tenant, AlertID: id, Tag: testTag}, Channel: "email", Cycle: 1, Lo: 0, Hi: 1, MaxAttempts: 1}
	if _, err := b.DeliverBatch(ctx, in); err != nil {
		t.Fatal(err)
	}
	d := deliveries(t, db, in)
	if d[1].Status != "Failed" || d[1].Error != "gave up after 1 attempts: attachment maps/map.png could not be read from the file store" {
		t.Fatalf("store down on the last attempt: %+v", d)
	}
}

// TestStoredAlertFindsItsFileInNFC: an alert accepted before file names
// were put in NFC may name its voice file in another form (here NFD); the
// file is stored under the NFC name (uploaded since, or renamed by the
// migration 00204_file_names_nfc), and the call still plays its voice
// version, by full name and by name alone.
func TestStoredAlertFindsItsFileInNFC(t *testing.T) {
	t.Parallel()
	db := stacktest.DB(t)
	tenant := stacktest.NewTenant()
	ctx := context.Background()
	const nfc, nfd = "\u00C4rger.wav", "A\u0308rger.wav"
	voiceKey := storage.TenantKey(tenant, "files/1/voice")
	err := files.New(db, nil).Create(ctx, files.NewFile{Tenant: tenant, FullName: "sirens/" + nfc, FolderName: "sirens", FileName: nfc,
		Kind: "audio", ContentType: "audio/wav", SizeBytes: 1, ObjectPrefix: storage.TenantKey(tenant, "files/1/"),
		Assets: []files.NewAsset{
			{Kind: "original", Key: storage.TenantKey(tenant, "files/1/original"), ContentType: "audio/wav", SizeBytes: 1},
			{Kind: "voice", Key: voiceKey, ContentType: "audio/wav", SizeBytes: 1},
		}})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"sirens/" + nfd, nfd} {
		id := storeAlert(t, db, tenant, alert.Settings{Type: alert.TypeDefault, Message: alert.MessageSettings{Subject: "Siren", Body: "Siren test."},
			Channels: &alert.Channels{Voice: &alert.VoiceChannel{Enabled: true, AudioFileName: name}}},
			nil, []alert.AdHocRecipient{{FirstName: "Ann", Phone: "+15550000001"}})
		snd := &recordingSender{}
		a := &activities.Activities{DB: db, Senders: channels.Senders{channels.Voice: snd}}
		in := activities.BatchInput{AlertRef: activities.AlertRef{Tenant: tenant, AlertID: id, Tag: testTag}, Channel: "voice", Cycle: 1, Lo: 0, Hi: 1, MaxAttempts: 3}
		if _, err := a.DeliverBatch(ctx, in); err != nil {
			t.Fatal(err)
		}
		if len(snd.msgs) != 1 {
			t.Fatalf("%q: %d calls", name, len(snd.msgs))
		}
		if o, _ := snd.msgs[0].Options.(voice.Options); o.AudioKey != voiceKey {
			t.Errorf("%q: the call plays %q, want the stored file's voice version %q", name, o.AudioKey, voiceKey)
		}
	}
}
