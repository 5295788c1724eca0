// Package neighborhoodtest is a loopback neighborhood network for tests: it
// serves POST /v1/accounts/{id}/posts, checks the account's bearer token,
// the body and that the groups belong to the account, and answers per group.
package neighborhoodtest

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
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
	loopback.Server[Post]
	accounts map[string]Account
}

// New starts the network with its accounts by id.
func New(t testing.TB, accounts map[string]Account) *Server {
	s := &Server{accounts: accounts}
	s.Serve(t, s.handle)
	return s
}

// Posts returns the accepted posts.
func (s *Server) Posts() []Post { return s.All() }

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	id, ok := strings.CutPrefix(r.URL.Path, "/v1/accounts/")
	id, ok2 := strings.CutSuffix(id, "/posts")
	acct, known := s.accounts[id]
	switch {
	case r.Method != http.MethodPost || !ok || !ok2:
		s.Problem(w, http.StatusNotFound, "unexpected %s %s", r.Method, r.URL.Path)
		return
	case !known:
		s.Problem(w, http.StatusUnauthorized, "no account %q", id)
		return
	case !s.Authorized(w, r, acct.Token):
		return
	case r.Header.Get("Idempotency-Key") == "":
		s.Problem(w, http.StatusBadRequest, "no Idempotency-Key")
		return
	}
	var req neighborhood.PostRequest
	if !s.DecodeJSON(w, r, &req) {
		return
	}
	if req.Body == "" || len(req.GroupIDs) == 0 {
		s.Problem(w, http.StatusBadRequest, "a post needs a body and groups")
		return
	}
	var res neighborhood.PostResponse
	for _, g := range req.GroupIDs {
		switch {
		case !slices.Contains(acct.Groups, g):
			res.Results = append(res.Results, neighborhood.GroupResult{GroupID: g, Status: "failed", Error: "not a group of the account"})
		case slices.Contains(acct.Closed, g):
			res.Results = append(res.Results, neighborhood.GroupResult{GroupID: g, Status: "failed", Error: "the group does not take posts"})
		default:
			p, _ := s.Add("", func(n int) Post {
				return Post{Account: id, Group: g, ID: fmt.Sprintf("post-%d", n), Subject: req.Subject, Body: req.Body, Urgent: req.Urgent}
			})
			res.Results = append(res.Results, neighborhood.GroupResult{GroupID: g, Status: "posted", PostID: p.ID})
		}
	}
	loopback.WriteJSON(w, http.StatusOK, res)
}
