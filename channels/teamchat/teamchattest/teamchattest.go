// Package teamchattest is a loopback team-chat service for tests: incoming
// webhooks under /slack/<secret> and /teams/<secret> that check the payload
// shape of their style and keep what they received.
package teamchattest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/tocsin/tocsin/channels/loopback"
	"github.com/tocsin/tocsin/channels/teamchat"
)

// Post is a webhook call the server accepted.
type Post struct {
	Style, Secret string
	Slack         *teamchat.SlackPayload
	Teams         *teamchat.TeamsPayload
}

// Server is the loopback team-chat service.
type Server struct {
	loopback.Server[Post]

	mu       sync.Mutex
	archived map[string]bool
}

// New starts the service.
func New(t testing.TB) *Server {
	s := &Server{archived: map[string]bool{}}
	s.Serve(t, s.handle)
	return s
}

// Webhook returns the URL of a webhook of style with secret.
func (s *Server) Webhook(style, secret string) string { return s.URL + "/" + style + "/" + secret }

// Archive makes the webhook with secret answer 410 Gone.
func (s *Server) Archive(secret string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.archived[secret] = true
}

// Posts returns the accepted posts.
func (s *Server) Posts() []Post { return s.All() }

func (s *Server) problem(w http.ResponseWriter, format string, args ...any) {
	s.Note(format, args...)
	http.Error(w, "invalid_payload", http.StatusBadRequest)
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	parts := strings.SplitN(strings.Trim(r.URL.Path, "/"), "/", 2)
	if r.Method != http.MethodPost || len(parts) != 2 || parts[1] == "" {
		http.Error(w, "no_service", http.StatusNotFound)
		return
	}
	style, secret := parts[0], parts[1]
	s.mu.Lock()
	gone := s.archived[secret]
	s.mu.Unlock()
	if gone {
		http.Error(w, "channel_is_archived", http.StatusGone)
		return
	}
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		s.problem(w, "content type %q", r.Header.Get("Content-Type"))
		return
	}
	body, _ := io.ReadAll(r.Body)
	p := Post{Style: style, Secret: secret}
	var bad string
	switch style {
	case teamchat.StyleSlack:
		p.Slack, bad = slack(body)
	case teamchat.StyleTeams:
		p.Teams, bad = teams(body)
	default:
		http.Error(w, "no_service", http.StatusNotFound)
		return
	}
	if bad != "" {
		s.problem(w, "%s", bad)
		return
	}
	s.Add("", func(int) Post { return p })
	if style == teamchat.StyleTeams {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	_, _ = io.WriteString(w, "ok")
}

// slack decodes a Slack-style payload and says what is wrong with it.
func slack(body []byte) (*teamchat.SlackPayload, string) {
	var sp teamchat.SlackPayload
	if err := strict(body, &sp); err != nil || sp.Text == "" || len(sp.Blocks) == 0 {
		return nil, fmt.Sprintf("slack payload: %v %s", err, body)
	}
	for _, b := range sp.Blocks {
		if (b.Type != "header" && b.Type != "section") || b.Text == nil || b.Text.Text == "" ||
			(b.Type == "header" && b.Text.Type != "plain_text") || len(b.Text.Text) > 3000 {
			return nil, fmt.Sprintf("slack block %+v", b)
		}
	}
	return &sp, ""
}

// teams decodes a Teams-style payload and says what is wrong with it.
func teams(body []byte) (*teamchat.TeamsPayload, string) {
	var tp teamchat.TeamsPayload
	if err := strict(body, &tp); err != nil || tp.Type != "message" || len(tp.Attachments) != 1 {
		return nil, fmt.Sprintf("teams payload: %v %s", err, body)
	}
	a := tp.Attachments[0]
	if a.ContentType != teamchat.AdaptiveCardType || a.Content.Type != "AdaptiveCard" || a.Content.Version == "" || len(a.Content.Body) == 0 {
		return nil, fmt.Sprintf("teams attachment %+v", a)
	}
	return &tp, ""
}

func strict(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}
