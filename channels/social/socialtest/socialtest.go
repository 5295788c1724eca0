// Package socialtest is a loopback of the two social networks for tests: it
// serves network A's POST /2/posts and network B's POST /{account}/feed,
// checks each account's bearer token and the body, and keeps the posts.
package socialtest

import (
	"fmt"
	"net/http"
	"strings"
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
	loopback.Server[Post]
	tokens map[string]string // token -> account; only read once started
}

// New starts the loopback; tokens maps each account id to its token.
func New(t testing.TB, tokens map[string]string) *Server {
	s := &Server{tokens: map[string]string{}}
	for acct, tok := range tokens {
		s.tokens[tok] = acct
	}
	s.Serve(t, s.handle)
	return s
}

// Posts returns the accepted posts.
func (s *Server) Posts() []Post { return s.All() }

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	acct, known := s.tokens[tok]
	if !known {
		s.Problem(w, http.StatusUnauthorized, "unknown access token")
		return
	}
	key := r.Header.Get("Idempotency-Key")
	if r.Method != http.MethodPost || key == "" {
		s.Problem(w, http.StatusBadRequest, "want a POST with an Idempotency-Key")
		return
	}
	p := Post{Account: acct}
	switch {
	case r.URL.Path == "/2/posts":
		var b social.PostA
		if !s.DecodeJSON(w, r, &b) {
			return
		}
		if b.Text == "" || utf8.RuneCountInString(b.Text) > social.LimitA {
			s.Problem(w, http.StatusBadRequest, "network A post of %d characters", utf8.RuneCountInString(b.Text))
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
		if !s.DecodeJSON(w, r, &b) {
			return
		}
		if b.Message == "" {
			s.Problem(w, http.StatusBadRequest, "network B post without a message")
			return
		}
		p.Network, p.Text, p.Link = social.NetworkB, b.Message, b.Link
	default:
		s.Problem(w, http.StatusNotFound, "unexpected path %s", r.URL.Path)
		return
	}
	p, _ = s.Add(p.Network+key, func(n int) Post { p.ID = fmt.Sprintf("%s_%d", acct, n); return p })
	if p.Network == social.NetworkA {
		var a social.AnswerA
		a.Data.ID, a.Data.Text = p.ID, p.Text
		loopback.WriteJSON(w, http.StatusOK, a)
		return
	}
	loopback.WriteJSON(w, http.StatusOK, social.AnswerB{ID: p.ID})
}
