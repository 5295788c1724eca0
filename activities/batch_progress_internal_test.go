package activities

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tocsin/tocsin/channels"
)

// TestProgressTakesAMessageAsSentOnlyToTheSameAddress: a recipient whose
// first device token was removed between two attempts has their second
// token at index 0 and a new one at index 1; only the message to the
// token the earlier attempt reached counts as sent.
func TestProgressTakesAMessageAsSentOnlyToTheSameAddress(t *testing.T) {
	prior := BatchProgress{Sent: []SentMessage{
		{Seq: 7, Device: 0, To: addressHash("tok-a"), ProviderMessageID: "p-a"},
		{Seq: 7, Device: 1, To: addressHash("tok-b"), ProviderMessageID: "p-b"},
	}}
	p := newProgress(prior)
	msgs := []channels.Message{{Key: "k", To: "tok-b"}, {Key: "k:1", To: "tok-c"}}
	refs := []messageRef{{seq: 7, device: 0, to: addressHash("tok-b")}, {seq: 7, device: 1, to: addressHash("tok-c")}}
	done, left := p.begin(msgs, refs)
	if len(done) != 0 || len(left) != 2 {
		t.Fatalf("taken as sent %+v, left to send %+v", done, left)
	}
	// The same tokens at the same places are not sent again.
	p = newProgress(prior)
	msgs = []channels.Message{{Key: "k", To: "tok-a"}, {Key: "k:1", To: "tok-b"}}
	refs = []messageRef{{seq: 7, device: 0, to: addressHash("tok-a")}, {seq: 7, device: 1, to: addressHash("tok-b")}}
	done, left = p.begin(msgs, refs)
	if len(left) != 0 || done[1].ProviderMessageID != "p-b" || done[1].Key != "k:1" {
		t.Fatalf("taken as sent %+v, left to send %+v", done, left)
	}
}

// TestProgressStaysWithinItsBound: the encoded details never pass
// maxProgressBytes, even with provider ids JSON escapes.
func TestProgressStaysWithinItsBound(t *testing.T) {
	p := newProgress(BatchProgress{})
	id := strings.Repeat("<&>", 30)
	for i := range 20000 {
		p.add(SentMessage{Seq: int64(1_000_000 + i), Device: 12, To: addressHash("tok"), ProviderMessageID: id, Delivered: true})
	}
	b, err := json.Marshal(p.details())
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > maxProgressBytes || len(b) < maxProgressBytes*9/10 {
		t.Fatalf("the details take %d bytes, bound %d", len(b), maxProgressBytes)
	}
}
