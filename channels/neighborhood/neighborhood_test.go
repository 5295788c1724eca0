package neighborhood_test

import (
	"context"
	"testing"

	"github.com/tocsin/tocsin/channels"
	"github.com/tocsin/tocsin/channels/neighborhood"
	"github.com/tocsin/tocsin/channels/neighborhood/neighborhoodtest"
	"github.com/tocsin/tocsin/channels/providerhttp"
	"github.com/tocsin/tocsin/internal/stacktest"
)

func TestPostsAndStatusesPerAccountAndGroup(t *testing.T) {
	t.Parallel()
	db := stacktest.DB(t)
	ctx := context.Background()
	tenant := stacktest.NewTenant()
	net := neighborhoodtest.New(t, map[string]neighborhoodtest.Account{
		"police": {Token: "tok-p", Groups: []string{"g1", "g2", "g3"}, Closed: []string{"g3"}},
		"fire":   {Token: "tok-f", Groups: []string{"g9"}},
	})
	store := &neighborhood.Statuses{DB: db}
	snd := &neighborhood.Sender{Endpoint: providerhttp.Endpoint{URL: net.URL, Client: providerhttp.NewClient(0, 0)}, Statuses: store, Accounts: []neighborhood.Account{
		{ID: "police", Name: "Police Department", Token: "tok-p", Groups: []neighborhood.Group{{"g1", "Northside"}, {"g2", "Old Town"}, {"g3", "Closed Group"}}},
		{ID: "fire", Name: "Fire District", Token: "tok-f", Groups: []neighborhood.Group{{"g9", "Hillcrest"}}},
		{ID: "parks", Name: "Aaa Parks", Token: "revoked", Groups: []neighborhood.Group{{"g5", "Lakeside"}}},
	}}
	urgent := neighborhood.Options{Urgent: true}
	res, err := snd.Send(ctx, []channels.Message{
		{Key: "n1", Tenant: tenant, To: "police", Subject: "Missing child", Text: "Call 911 with information.", AlertID: 77, Options: urgent},
		{Key: "n2", Tenant: tenant, To: "fire", Subject: "Missing child", Text: "Call 911 with information.", AlertID: 77, Options: urgent},
		{Key: "n3", Tenant: tenant, To: "parks", Subject: "Missing child", Text: "Call 911 with information.", AlertID: 77, Options: urgent},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Outcome != channels.Delivered || res[1].Outcome != channels.Delivered || res[2].Outcome != channels.Failed || !res[2].Permanent {
		t.Fatalf("%+v", res)
	}
	if len(net.Posts()) != 3 || !net.Posts()[0].Urgent {
		t.Fatalf("posts %+v", net.Posts())
	}
	st, total, err := store.ForAlert(ctx, tenant, 77, "lower(account_name), lower(group_name)", 25, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := ""
	for _, s := range st {
		got += s.AccountName + "/" + s.GroupName + "=" + s.Status + ";"
		if s.Status == neighborhood.StatusPosted && s.PostID == "" || s.Status == neighborhood.StatusFailed && s.Error == "" {
			t.Fatalf("incomplete status %+v", s)
		}
	}
	want := "Aaa Parks/Lakeside=Failed;Fire District/Hillcrest=Posted;Police Department/Closed Group=Failed;Police Department/Northside=Posted;Police Department/Old Town=Posted;"
	if got != want || total != 5 {
		t.Fatalf("statuses (%d)\n%s\nwant\n%s", total, got, want)
	}
	// A retried batch updates the rows instead of adding new ones.
	if _, err := snd.Send(ctx, []channels.Message{{Key: "n2", Tenant: tenant, To: "fire", Text: "again", AlertID: 77, Options: urgent}}); err != nil {
		t.Fatal(err)
	}
	if _, total, _ := store.ForAlert(ctx, tenant, 77, "lower(account_name)", 25, 0); total != 5 {
		t.Fatalf("%d statuses after a retry", total)
	}
	if _, total, _ := store.ForAlert(ctx, stacktest.NewTenant(), 77, "lower(account_name)", 25, 0); total != 0 {
		t.Fatal("another tenant sees the statuses")
	}
}
