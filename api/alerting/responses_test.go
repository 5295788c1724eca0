package alerting_test

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage/results"
)

// Whoever holds a response link cannot flip its answer back and forth into
// an event (and a hook delivery per subscription) per request: past the
// link's allowance of changes a change is a 429 with Retry-After and emits
// nothing, the results keep the last answer accepted, and the other
// recipients' links are not affected.
func TestFlippingAnAnswerThroughALinkIsLimited(t *testing.T) {
	t.Parallel()
	sb, withSandbox := stacktest.Sandbox(t)
	s := stacktest.Start(t, withSandbox)
	tenant, tok := s.NewTenant(t)
	a := &contact{First: "Ann", Last: "A", Phone: "+15551120001"}
	b := &contact{First: "Bob", Last: "B", Phone: "+15551120002"}
	seed(t, s, tenant, a, b)
	res := send(t, s, tok, pollAlert("Are you safe? {{responseLink}}", a, b))
	_, annLink := responseLink(t, s, sb, a.Phone)
	_, bobLink := responseLink(t, s, sb, b.Phone)
	answer := func(link string, option int) stacktest.Response {
		return s.Do(t, http.MethodPost, fmt.Sprintf("%s?optionId=%d", link, option), "", nil)
	}
	responded := func() int {
		return strings.Count(strings.Join(events(t, s, tenant), ","), "alert.recipient.responded")
	}

	// The first answer, then as many changes as the allowance holds: each
	// is taken and emits its event.
	option := 1
	if r := answer(annLink, option); r.Status != 200 {
		t.Fatalf("first answer: %d %s", r.Status, r.Body)
	}
	for i := range results.AnswerChangeBurst {
		option = 3 - option
		if r := answer(annLink, option); r.Status != 200 || !strings.Contains(string(r.Body), fmt.Sprintf(`"optionId":%d`, option)) {
			t.Fatalf("change %d: %d %s", i+1, r.Status, r.Body)
		}
	}
	accepted := option
	if n := responded(); n != 1+results.AnswerChangeBurst {
		t.Fatalf("%d responded events after the first answer and %d changes", n, results.AnswerChangeBurst)
	}

	// Past it, every change is refused with Retry-After and emits nothing.
	for range 10 {
		r := answer(annLink, 3-accepted)
		p := problem(t, r)
		secs, err := strconv.Atoi(r.Header.Get("Retry-After"))
		if r.Status != http.StatusTooManyRequests || p.Status != http.StatusTooManyRequests || err != nil ||
			secs < 1 || secs > int(results.AnswerChangeInterval.Seconds()) {
			t.Fatalf("change past the allowance: %d, Retry-After %q, %s", r.Status, r.Header.Get("Retry-After"), r.Body)
		}
	}
	// A browser is sent back to the page, which says the answer was not
	// changed.
	rb, _ := browserPost(t, s, fmt.Sprintf("%s?optionId=%d", annLink, 3-accepted))
	loc := rb.Header.Get("Location")
	if rb.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, annLink+"?retryAfter=") {
		t.Fatalf("browser change past the allowance: %d to %q", rb.StatusCode, loc)
	}
	if page := s.Do(t, http.MethodGet, loc, "", nil); page.Status != 200 || !strings.Contains(string(page.Body), "Your answer was not changed") {
		t.Fatalf("page after a refused change: %d %s", page.Status, page.Body)
	}
	// The answer already given, given again, changes nothing and is no
	// change to refuse.
	if r := answer(annLink, accepted); r.Status != 200 {
		t.Fatalf("the accepted answer again: %d %s", r.Status, r.Body)
	}
	if n := responded(); n != 1+results.AnswerChangeBurst {
		t.Fatalf("%d responded events after refused changes, want %d", n, 1+results.AnswerChangeBurst)
	}

	// Bob's link of the same alert answers and changes its mind.
	if r := answer(bobLink, 2); r.Status != 200 {
		t.Fatalf("Bob's answer: %d %s", r.Status, r.Body)
	}
	if r := answer(bobLink, 1); r.Status != 200 {
		t.Fatalf("Bob's change: %d %s", r.Status, r.Body)
	}
	if n := responded(); n != 3+results.AnswerChangeBurst {
		t.Fatalf("%d responded events after Bob's answer and change", n)
	}

	// The results show each recipient's last answer accepted.
	waitDone(t, s, tok, res.AlertID)
	for option, want := range map[int]string{accepted: "Ann", 3 - accepted: "Bob"} {
		r := s.Do(t, http.MethodGet, fmt.Sprintf("/v2/alerts/%d/results/recipients?pollOptionId=%d", res.AlertID, option), tok, nil)
		var page struct {
			TotalCount int64
			Items      []struct{ Name struct{ First string } }
		}
		r.JSON(t, &page)
		if page.TotalCount != 1 || page.Items[0].Name.First != want {
			t.Errorf("recipients who chose option %d: %s, want %s", option, r.Body, want)
		}
	}
}
