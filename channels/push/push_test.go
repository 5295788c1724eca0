package push_test

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/tocsin/tocsin/channels"
	"github.com/tocsin/tocsin/channels/providerhttp"
	"github.com/tocsin/tocsin/channels/push"
	"github.com/tocsin/tocsin/channels/push/pushtest"
	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/channelstate"
	"github.com/tocsin/tocsin/storage/directory"
)

func TestNotifyLoudTone(t *testing.T) {
	cases := []struct {
		name                     string
		opts                     push.Options
		priority, level, channel string
		critical                 bool
	}{
		{"plain", push.Options{}, "normal", "active", "alerts", false},
		{"emergency", push.Options{Emergency: true}, "high", "time-sensitive", "alerts", false},
		{"loud tone", push.Options{LoudTone: true}, "high", "critical", "emergency", true},
		{"chime for 30 seconds", push.Options{LoudTone: true, Sound: "chime.caf", ToneSeconds: 30}, "high", "critical", "emergency", true},
	}
	for _, c := range cases {
		n := push.Notify(channels.Message{To: "tok", Text: "x", Options: c.opts})
		sound, crit := n.Sound.(push.CriticalSound)
		if n.Priority != c.priority || n.InterruptionLevel != c.level || n.ChannelID != c.channel || crit != c.critical {
			t.Errorf("%s: %+v", c.name, n)
		}
		wantSound, wantSeconds := "", ""
		if c.critical {
			wantSound, wantSeconds = cmp.Or(c.opts.Sound, "loud_tone.caf"), strconv.Itoa(cmp.Or(c.opts.ToneSeconds, 10))
		}
		if sound.Name != wantSound || n.Data[push.DataLoudToneSeconds] != wantSeconds {
			t.Errorf("%s: sound %q for %q seconds, want %q for %q", c.name, sound.Name, n.Data[push.DataLoudToneSeconds], wantSound, wantSeconds)
		}
	}
}

func TestBatchesTicketsAndInvalidTokens(t *testing.T) {
	t.Parallel()
	db := stacktest.DB(t)
	ctx := context.Background()
	tenant := stacktest.NewTenant()
	const n = 230
	var msgs []channels.Message
	var apps []directory.MobileApp
	for i := range n {
		tok := fmt.Sprintf("device-%03d", i)
		apps = append(apps, directory.MobileApp{InstallationID: tok, Platform: "ios", PushToken: tok})
		msgs = append(msgs, channels.Message{Key: fmt.Sprintf("k%d", i), Tenant: tenant, To: tok, Subject: "Flood", Text: "Move to higher ground",
			AlertID: 7, Options: push.Options{LoudTone: true}})
	}
	// The devices of several people, as many as a person may hold each.
	var people []int64
	for apps := range slices.Chunk(apps, storage.MaxDevicesPerPerson) {
		if err := db.InTx(ctx, func(tx *sqlx.Tx) error {
			person, err := directory.CreateUser(ctx, tx, tenant, "", directory.NewUser{Profile: directory.Profile{FirstName: "Ada"}, MobileApps: apps})
			people = append(people, person)
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	srv := pushtest.New(t, "push-token")
	srv.Unregister("device-005", "device-150")
	snd := &push.Sender{Endpoint: providerhttp.Endpoint{URL: srv.URL, Token: "push-token", Client: providerhttp.NewClient(0, 0)}, App: push.AppMyAlerts, Tokens: &channelstate.Devices{DB: db}}
	res, err := snd.Send(ctx, msgs)
	if err != nil {
		t.Fatal(err)
	}
	if p := srv.Problems(); len(p) != 0 {
		t.Fatalf("the service saw bad requests: %v", p)
	}
	if srv.Batches() != 3 {
		t.Fatalf("%d batches, want 3 of at most 100", srv.Batches())
	}
	for i, r := range res {
		gone := i == 5 || i == 150
		switch {
		case r.Key != msgs[i].Key:
			t.Fatalf("result %d is for %s", i, r.Key)
		case gone && (r.Outcome != channels.Failed || !r.Permanent || r.Error != push.ErrDeviceNotRegistered):
			t.Fatalf("result %d: %+v", i, r)
		case !gone && (r.Outcome != channels.Sent || r.ProviderMessageID == ""):
			t.Fatalf("result %d: %+v", i, r)
		}
	}
	got := srv.Received()
	if len(got) != n-2 || got[0].InterruptionLevel != "critical" || got[0].Data[push.DataAlertID] != "7" {
		t.Fatalf("received %d, first %+v", len(got), got[0])
	}
	left, all := 0, 0
	for _, person := range people {
		ci, err := directory.ContactInformation(ctx, db, tenant, person)
		if err != nil {
			t.Fatal(err)
		}
		all += len(ci.Devices)
		for _, d := range ci.Devices {
			if d.Token == "device-005" || d.Token == "device-150" {
				left++
			}
		}
	}
	if left != 0 || all != n-2 {
		t.Fatalf("unregistered tokens left %d, devices %d", left, all)
	}
}

func TestWrongTokenAndOutage(t *testing.T) {
	t.Parallel()
	srv := pushtest.New(t, "right")
	msgs := []channels.Message{{Key: "a", To: "t1", Text: "x"}}
	res, err := (&push.Sender{Endpoint: providerhttp.Endpoint{URL: srv.URL, Token: "wrong", Client: providerhttp.NewClient(0, 0)}}).Send(context.Background(), msgs)
	if err != nil || res[0].Outcome != channels.Failed || !res[0].Permanent {
		t.Fatalf("wrong token: %+v %v", res, err)
	}
	srv.FailWith(503)
	if _, err := (&push.Sender{Endpoint: providerhttp.Endpoint{URL: srv.URL, Token: "right", Client: providerhttp.NewClient(0, 0)}}).Send(context.Background(), msgs); err == nil {
		t.Fatal("an unavailable service is a batch error, to be retried")
	}
}
