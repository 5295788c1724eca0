// Package neighborhoodtest is a loopback neighborhood network for tests: it
// serves POST /v1/accounts/{id}/posts, checks the account's bearer token,
// the body and that the groups belong to the account, and answers per group.
package neighborhoodtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/tocsin/tocsin/channels/loopback"
	"github.com/tocsin/tocsin/channels/neighborhood"
)

// Account is an account the network knows.
type Account struct {
	Token  string
	Groups []string
	// Closed groups refuse posts.
	Closed []string
}

// Post is an accepted post to one group.
type Post struct {
	Account, Group, ID, Subject, Body string
	Urgent                            bool
}

// Server is the loopback network.
type Server struct {
	*httptest.Server
	loopback.Recorder

	mu       sync.Mutex
	accounts map[string]Account
	posts    []Post
}

// New starts the network with its accounts by id.
func New(t testing.TB, accounts map[string]Account) *Server {
	s := &Server{accounts: accounts}
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
	id, ok := strings.CutPrefix(r.URL.Path, "/v1/accounts/")
	id, ok2 := strings.CutSuffix(id, "/posts")
	acct, known := s.accounts[id]
	switch {
	case r.Method != http.MethodPost || !ok || !ok2:
		s.Problem(w, http.StatusNotFound, "unexpected %s %s", r.Method, r.URL.Path)
		return
	case !known || r.Header.Get("Authorization") != "Bearer "+acct.Token:
		s.Problem(w, http.StatusUnauthorized, "bad token for account %q", id)
		return
	case r.Header.Get("Idempotency-Key") == "":
		s.Problem(w, http.StatusBadRequest, "no Idempotency-Key")
		return
	}
	var req neighborhood.PostRequest
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil || req.Body == "" || len(req.GroupIDs) == 0 {
		s.Problem(w, http.StatusBadRequest, "post: %v", err)
		return
	}
	var res neighborhood.PostResponse
	s.mu.Lock()
	for _, g := range req.GroupIDs {
		switch {
		case !contains(acct.Groups, g):
			res.Results = append(res.Results, neighborhood.GroupResult{GroupID: g, Status: "failed", Error: "not a group of the account"})
		case contains(acct.Closed, g):
			res.Results = append(res.Results, neighborhood.GroupResult{GroupID: g, Status: "failed", Error: "the group does not take posts"})
		default:
			pid := fmt.Sprintf("post-%d", len(s.posts)+1)
			s.posts = append(s.posts, Post{Account: id, Group: g, ID: pid, Subject: req.Subject, Body: req.Body, Urgent: req.Urgent})
			res.Results = append(res.Results, neighborhood.GroupResult{GroupID: g, Status: "posted", PostID: pid})
		}
	}
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(res)
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
