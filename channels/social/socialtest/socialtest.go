// Package socialtest is a loopback of the two social networks for tests: it
// serves network A's POST /2/posts and network B's POST /{account}/feed,
// checks each account's bearer token and the body, and keeps the posts.
package socialtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/tocsin/tocsin/channels/loopback"
	"github.com/tocsin/tocsin/channels/social"
)

// Post is an accepted post.
type Post struct {
	Network, Account, ID, Text, Link string
}

// Server is the loopback network pair.
type Server struct {
	*httptest.Server
	loopback.Recorder

	mu     sync.Mutex
	tokens map[string]string // token -> account
	posts  []Post
	byKey  map[string]string
}

// New starts the loopback; tokens maps each account id to its token.
func New(t testing.TB, tokens map[string]string) *Server {
	s := &Server{tokens: map[string]string{}, byKey: map[string]string{}}
	for acct, tok := range tokens {
		s.tokens[tok] = acct
	}
	s.Server = httptest.NewServer(http.HandlerFunc(s.handle))
	t.Cleanup(s.Server.Close)
	return s
}

// Posts returns the accepted posts.
func (s *Server) Posts() []Post {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Post(nil), s.posts...)
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	s.mu.Lock()
	acct, known := s.tokens[tok]
	s.mu.Unlock()
	if !known {
		s.Problem(w, http.StatusUnauthorized, "unknown access token")
		return
	}
	key := r.Header.Get("Idempotency-Key")
	if r.Method != http.MethodPost || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") || key == "" {
		s.Problem(w, http.StatusBadRequest, "want a JSON POST with an Idempotency-Key")
		return
	}
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	p := Post{Account: acct}
	switch {
	case r.URL.Path == "/2/posts":
		var b social.PostA
		if err := dec.Decode(&b); err != nil || b.Text == "" || utf8.RuneCountInString(b.Text) > social.LimitA {
			s.Problem(w, http.StatusBadRequest, "network A post: %v (%d characters)", err, utf8.RuneCountInString(b.Text))
			return
		}
		p.Network, p.Text = social.NetworkA, b.Text
	case strings.HasSuffix(r.URL.Path, "/feed"):
		page := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/"), "/feed")
		if page != acct {
			s.Problem(w, http.StatusForbidden, "the token of %s cannot post to %s", acct, page)
			return
		}
		var b social.PostB
		if err := dec.Decode(&b); err != nil || b.Message == "" {
			s.Problem(w, http.StatusBadRequest, "network B post: %v", err)
			return
		}
		p.Network, p.Text, p.Link = social.NetworkB, b.Message, b.Link
	default:
		s.Problem(w, http.StatusNotFound, "unexpected path %s", r.URL.Path)
		return
	}
	s.mu.Lock()
	id, dup := s.byKey[p.Network+key]
	if !dup {
		id = fmt.Sprintf("%s_%d", acct, len(s.posts)+1)
		p.ID = id
		s.byKey[p.Network+key] = id
		s.posts = append(s.posts, p)
	}
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if p.Network == social.NetworkA {
		var a social.AnswerA
		a.Data.ID, a.Data.Text = id, p.Text
		_ = json.NewEncoder(w).Encode(a)
		return
	}
	_ = json.NewEncoder(w).Encode(social.AnswerB{ID: id})
}
