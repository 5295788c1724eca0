package subscriptions_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/tocsin/tocsin/api/model"
	"github.com/tocsin/tocsin/internal/stacktest"
)

// A target url often carries the receiver's credentials in its path, its
// matrix parameters, its query (a bare key too) or its fragment: answers
// mask each of those parts, what was read and sent back keeps the stored
// url and its header values, and a masked url never stands for another
// destination.
func TestTargetURLIsAnsweredMaskedAndKeptWhenSentBack(t *testing.T) {
	t.Parallel()
	s := start(t)
	_, token := s.NewTenant(t)
	rcv, other := newReceiver(t, 200), newReceiver(t, 200)
	const target = "/in/path-secret-A1B2/send;sig=matrix-secret-C3D4?bare-secret-E5F6&key=query-secret-G7H8#frag-secret-I9J0"
	masked := rcv.URL + "/****/****A1B2/****C3D4?****E5F6&key=****G7H8#****I9J0"
	r := s.Do(t, http.MethodPost, base, token, map[string]any{
		"url": rcv.URL + target, "eventTypes": []string{"alert.sent"}, "headers": map[string]string{"X-Api-Key": "api-key-K1L2"},
	})
	if r.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	var sub model.Subscription
	r.JSON(t, &sub)
	path := fmt.Sprintf("%s/%d", base, sub.ID)
	for what, resp := range map[string]stacktest.Response{
		"create": r, "get": s.Do(t, http.MethodGet, path, token, nil), "list": s.Do(t, http.MethodGet, base, token, nil),
	} {
		if resp.Status/100 != 2 || strings.Contains(string(resp.Body), "-secret-") || !strings.Contains(string(resp.Body), `"url":"`+masked+`"`) {
			t.Fatalf("%s answers %d %s, want the url %s", what, resp.Status, resp.Body, masked)
		}
	}

	// What was read, sent back with another description, keeps the url and
	// the header value.
	var got model.Subscription
	s.Do(t, http.MethodGet, path, token, nil).JSON(t, &got)
	if r := s.Do(t, http.MethodPut, path, token, map[string]any{
		"url": got.URL, "eventTypes": got.EventTypes, "headers": got.Headers, "description": "read and sent back",
	}); r.Status != 200 || !strings.Contains(string(r.Body), `"url":"`+masked+`"`) {
		t.Fatalf("put back: %d %s", r.Status, r.Body)
	}
	h := sendTest(t, s, token, sub.ID, rcv)
	last := rcv.received()[len(rcv.received())-1]
	if last.path != "/in/path-secret-A1B2/send;sig=matrix-secret-C3D4" || last.query != "bare-secret-E5F6&key=query-secret-G7H8" || h.Get("X-Api-Key") != "api-key-K1L2" {
		t.Fatalf("after the round trip delivered to %s?%s with %v", last.path, last.query, h)
	}

	// A masked url moved to another host, or changed in any part, matches
	// nothing stored: refused, naming the url, and nothing changes.
	for _, url := range []string{
		strings.Replace(masked, rcv.URL, other.URL, 1),
		strings.Replace(masked, "key=", "bucket=", 1),
		strings.Replace(masked, "/****/****A1B2", "/****", 1),
	} {
		f := failure(t, s.Do(t, http.MethodPut, path, token, map[string]any{"url": url, "eventTypes": []string{"alert.sent"}, "headers": got.Headers}))
		if f.Location != "body.url" || !strings.Contains(f.ErrorMessage, "mask") {
			t.Errorf("%s: %+v", url, f)
		}
	}
	// Nothing is stored for a new subscription to keep.
	if f := failure(t, s.Do(t, http.MethodPost, base, token, map[string]any{"url": masked, "eventTypes": []string{"alert.sent"}})); f.Location != "body.url" {
		t.Errorf("create with a masked url: %+v", f)
	}
	sendTest(t, s, token, sub.ID, rcv)
	if n := len(other.received()); n != 0 {
		t.Fatalf("the other host got %d requests", n)
	}
}

// Sorting by url orders by what answers show whole (scheme, host and
// port), then by id: an order by the masked parts would tell them, one
// comparison with a url of one's own at a time.
func TestSortingByURLTellsNothingMasked(t *testing.T) {
	t.Parallel()
	s := start(t)
	_, token := s.NewTenant(t)
	rcv := newReceiver(t, 200)
	first := create(t, s, token, rcv.URL+"/in?token=zzzz-later-in-the-alphabet", "alert.sent")
	second := create(t, s, token, rcv.URL+"/in?token=aaaa-earlier-in-the-alphabet", "alert.sent")
	for _, sort := range []string{"url", "-url"} {
		var page model.PagedSubscriptionResponse
		s.Do(t, http.MethodGet, base+"?sort="+sort, token, nil).JSON(t, &page)
		if len(page.Items) != 2 || page.Items[0].ID != first.ID || page.Items[1].ID != second.ID {
			t.Errorf("sort=%s: %+v", sort, page.Items)
		}
	}
}
