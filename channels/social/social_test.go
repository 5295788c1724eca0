package social_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tocsin/tocsin/channels"
	"github.com/tocsin/tocsin/channels/providerhttp"
	"github.com/tocsin/tocsin/channels/social"
	"github.com/tocsin/tocsin/channels/social/socialtest"
)

func TestPostsOnBothNetworks(t *testing.T) {
	srv := socialtest.New(t, map[string]string{"county": "tok-county", "city": "tok-city", "page-9": "tok-page"})
	long := strings.Repeat("Shelter in place until further notice. ", 12)
	a := &social.Sender{Network: social.NetworkA, Endpoint: providerhttp.Endpoint{URL: srv.URL, Client: providerhttp.NewClient(0, 0)}, Accounts: []social.Account{
		{ID: "county", Name: "County OEM", Token: "tok-county"}, {ID: "city", Name: "City", Token: "tok-city"}, {ID: "stale", Token: "revoked"}}}
	b := &social.Sender{Network: social.NetworkB, Endpoint: providerhttp.Endpoint{URL: srv.URL, Client: providerhttp.NewClient(0, 0)}, Accounts: []social.Account{{ID: "page-9", Name: "County page", Token: "tok-page"}}}
	resA, err := a.Send(context.Background(), []channels.Message{
		{Key: "a1", To: "county", Subject: "Chemical spill", Text: long, Options: social.Options{Link: "https://county.example/spill", Hashtags: []string{"#spill", "#CountyOEM"}}},
		{Key: "a2", To: "city", Subject: "Chemical spill", Text: "Shelter in place."},
		{Key: "a3", To: "stale", Text: "x"},
		{Key: "a4", To: "unknown", Text: "x"},
	})
	if err != nil {
		t.Fatal(err)
	}
	resB, err := b.Send(context.Background(), []channels.Message{{Key: "b1", To: "page-9", Subject: "Chemical spill", Text: long, Options: social.Options{Link: "https://county.example/spill", Hashtags: []string{"#spill"}}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range slices.Concat(resA[:2], resB) {
		if r.Outcome != channels.Delivered || r.ProviderMessageID == "" {
			t.Fatalf("%+v", r)
		}
	}
	for _, r := range resA[2:] {
		if r.Outcome != channels.Failed || !r.Permanent {
			t.Fatalf("%+v", r)
		}
	}
	if p := srv.Problems(); len(p) != 1 || !strings.Contains(p[0], "unknown access token") {
		t.Fatalf("problems %v", p)
	}
	posts := map[string]socialtest.Post{}
	for _, p := range srv.Posts() {
		posts[p.Account] = p
	}
	// The text is cut to leave room for the link and the hashtags, which
	// stay whole at its end.
	if p := posts["county"]; p.Network != "A" || utf8.RuneCountInString(p.Text) > social.LimitA || !strings.HasPrefix(p.Text, "Chemical spill: Shelter") ||
		!strings.HasSuffix(p.Text, " until https://county.example/spill #spill #CountyOEM") {
		t.Fatalf("network A post %+v", p)
	}
	if p := posts["city"]; p.Text != "Chemical spill: Shelter in place." {
		t.Fatalf("network A post without options %+v", p)
	}
	if p := posts["page-9"]; p.Network != "B" || !strings.HasSuffix(p.Text, "notice. #spill") || p.Link != "https://county.example/spill" {
		t.Fatalf("network B post %+v", p)
	}
}

// TestTextKeepsItsTail: the text is cut at a word boundary to leave room
// for the tail, which follows whole; a tail that cannot fit is cut with the
// rest rather than passing the limit.
func TestTextKeepsItsTail(t *testing.T) {
	msg := channels.Message{Text: strings.Repeat("word ", 20)}
	for _, c := range []struct {
		limit      int
		tail, want string
	}{
		{30, "#a #b", "word word word word word #a #b"},
		{200, "#a", strings.Repeat("word ", 20) + "#a"},
		{12, "#toolongforthelimit", "word word"},
		{30, "", "word word word word word word"},
	} {
		got := social.Text(msg, c.limit, c.tail)
		if got != c.want || utf8.RuneCountInString(got) > c.limit {
			t.Errorf("limit %d, tail %q: %q, want %q", c.limit, c.tail, got, c.want)
		}
	}
	// A word boundary early in the text is no place to cut, however many
	// bytes its characters take.
	accented := strings.Repeat("é", 11) + " " + strings.Repeat("x", 40)
	if got, want := social.Text(channels.Message{Text: accented}, 30, ""), strings.Repeat("é", 11)+" "+strings.Repeat("x", 18); got != want {
		t.Errorf("accented text cut to %q, want %q", got, want)
	}
}
