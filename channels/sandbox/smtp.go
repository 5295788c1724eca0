// Package sandbox runs loopback counterparts of tocsin's channel providers
// that speak the real protocols: an SMTP server and an HTTP text-message
// endpoint. They keep what they receive in memory, so tests and `make run`
// users can read verification codes and alerts without real providers.
package sandbox

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/emersion/go-message/mail"
	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// Attachment is a file received with an email.
type Attachment struct {
	Name        string `json:"name"`
	ContentType string `json:"contentType"`
	Data        []byte `json:"data"`
}

// Email is one message the SMTP server received.
type Email struct {
	// From and To are the envelope sender and recipients.
	From string   `json:"from"`
	To   []string `json:"to"`
	// HeaderFrom and FromName are the From header's address and display
	// name (RFC 2047 encoded words decoded); ReplyTo the addresses of the
	// Reply-To header.
	HeaderFrom  string       `json:"headerFrom"`
	FromName    string       `json:"fromName,omitempty"`
	ReplyTo     []string     `json:"replyTo,omitempty"`
	Subject     string       `json:"subject"`
	MessageID   string       `json:"messageId"`
	Text        string       `json:"text"`
	HTML        string       `json:"html,omitempty"`
	Attachments []Attachment `json:"attachments,omitempty"`
	// Headers are the message's header fields as received, by their
	// canonical names.
	Headers    map[string][]string `json:"-"`
	ReceivedAt time.Time           `json:"receivedAt"`
}

// SMTPServer is a loopback SMTP server that keeps every message it accepts.
type SMTPServer struct {
	srv *smtp.Server
	ln  net.Listener
	box mailbox[Email]

	sessions    atomic.Int64
	requireAuth bool

	mu      sync.Mutex
	rejects map[string]*smtp.SMTPError
	// hold, when not nil, is closed when held messages are released;
	// holdAfter messages are taken before they are held (HoldAfter).
	hold      chan struct{}
	holdAfter int
}

// StartSMTP listens on addr ("127.0.0.1:0" picks a free port) and serves SMTP.
// It accepts any PLAIN credentials, so senders configured with a username work.
func StartSMTP(addr string) (*SMTPServer, error) {
	return StartSMTPWith(addr, SMTPOptions{})
}

// SMTPOptions add TLS to the sandbox SMTP server.
type SMTPOptions struct {
	// TLS, when set, offers STARTTLS with this configuration; with Implicit
	// the connection is TLS from the start instead.
	TLS      *tls.Config
	Implicit bool
	// RequireAuth refuses mail from sessions that did not authenticate.
	RequireAuth bool
}

// StartSMTPWith is StartSMTP with options.
func StartSMTPWith(addr string, o SMTPOptions) (*SMTPServer, error) {
	var ln net.Listener
	var err error
	if o.TLS != nil && o.Implicit {
		ln, err = tls.Listen("tcp", addr, o.TLS)
	} else {
		ln, err = net.Listen("tcp", addr)
	}
	if err != nil {
		return nil, fmt.Errorf("sandbox smtp listen %s: %w", addr, err)
	}
	s := &SMTPServer{ln: ln, box: newMailbox[Email](), rejects: map[string]*smtp.SMTPError{}, requireAuth: o.RequireAuth}
	s.srv = smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) {
		s.sessions.Add(1)
		return &session{s: s}, nil
	}))
	s.srv.Domain = "sandbox.localhost"
	s.srv.AllowInsecureAuth = true
	s.srv.MaxMessageBytes = 50 << 20
	s.srv.MaxRecipients = 100
	s.srv.ReadTimeout = time.Minute
	s.srv.WriteTimeout = time.Minute
	if o.TLS != nil && !o.Implicit {
		s.srv.TLSConfig = o.TLS
	}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// Addr is the host:port the server listens on.
func (s *SMTPServer) Addr() string { return s.ln.Addr().String() }

// Close stops the server, releasing held messages (HoldAfter).
func (s *SMTPServer) Close() error {
	s.release()
	return s.srv.Close()
}

// HoldAfter makes the server take n more messages and then hold every
// later one without an answer, as a stalled server would, until the
// function it returns is called: held messages are then refused for now
// (451), none of them kept, and later ones are taken again. A sender
// whose process dies meanwhile has had n messages taken and no answer
// for the next.
func (s *SMTPServer) HoldAfter(n int) (release func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hold == nil {
		s.hold = make(chan struct{})
	}
	s.holdAfter = n
	return s.release
}

// release releases the messages HoldAfter holds.
func (s *SMTPServer) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hold != nil {
		close(s.hold)
		s.hold = nil
	}
}

// held is, for a message about to be taken, the channel to wait on before
// refusing it: nil when the server takes it (HoldAfter).
func (s *SMTPServer) held() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hold == nil {
		return nil
	}
	if s.holdAfter > 0 {
		s.holdAfter--
		return nil
	}
	return s.hold
}

// Sessions is the number of SMTP connections accepted so far.
func (s *SMTPServer) Sessions() int64 { return s.sessions.Load() }

// Reject makes the server refuse the recipient addr with the given SMTP code
// (a 5xx code is a permanent refusal, 4xx a temporary one). Code 0 removes
// the rule.
func (s *SMTPServer) Reject(addr string, code int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	addr = strings.ToLower(addr)
	if code == 0 {
		delete(s.rejects, addr)
		return
	}
	enh := smtp.EnhancedCode{5, 1, 1}
	if code < 500 {
		enh = smtp.EnhancedCode{4, 2, 0}
	}
	s.rejects[addr] = &smtp.SMTPError{Code: code, EnhancedCode: enh, Message: "rejected by the sandbox"}
}

func (s *SMTPServer) rejection(addr string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.rejects[strings.ToLower(addr)]; ok {
		return e
	}
	return nil
}

// Messages returns every email received so far, oldest first.
func (s *SMTPServer) Messages() []Email { return s.box.all() }

// Clear forgets the received emails.
func (s *SMTPServer) Clear() { s.box.clear() }

// WaitFor returns the first received email (already or in the future) for
// which match is true, or an error when ctx ends first.
func (s *SMTPServer) WaitFor(ctx context.Context, match func(Email) bool) (Email, error) {
	return s.box.waitFor(ctx, match)
}

// WaitTo waits for an email whose envelope recipients include to.
func (s *SMTPServer) WaitTo(ctx context.Context, to string) (Email, error) {
	return s.WaitFor(ctx, func(e Email) bool {
		for _, r := range e.To {
			if strings.EqualFold(r, to) {
				return true
			}
		}
		return false
	})
}

type session struct {
	s      *SMTPServer
	from   string
	to     []string
	authed bool
}

var _ smtp.AuthSession = (*session)(nil)

func (ss *session) AuthMechanisms() []string { return []string{sasl.Plain} }

func (ss *session) Auth(mech string) (sasl.Server, error) {
	if mech != sasl.Plain {
		return nil, smtp.ErrAuthUnknownMechanism
	}
	return sasl.NewPlainServer(func(identity, username, password string) error {
		if username == "" {
			return smtp.ErrAuthFailed
		}
		ss.authed = true
		return nil
	}), nil
}

func (ss *session) Mail(from string, _ *smtp.MailOptions) error {
	if ss.s.requireAuth && !ss.authed {
		return smtp.ErrAuthRequired
	}
	ss.from = from
	return nil
}

func (ss *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	if err := ss.s.rejection(to); err != nil {
		return err
	}
	ss.to = append(ss.to, to)
	return nil
}

func (ss *session) Data(r io.Reader) error {
	if held := ss.s.held(); held != nil {
		<-held
		return &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "held by the sandbox, not kept"}
	}
	e, err := parseEmail(r)
	if err != nil {
		return &smtp.SMTPError{Code: 554, EnhancedCode: smtp.EnhancedCode{5, 6, 0}, Message: "unparsable message: " + err.Error()}
	}
	e.From = ss.from
	e.To = append([]string(nil), ss.to...)
	e.ReceivedAt = time.Now().UTC()
	ss.s.box.add(e)
	return nil
}

func (ss *session) Reset() {
	ss.from = ""
	ss.to = nil
}

func (ss *session) Logout() error { return nil }

// parseEmail reads an RFC 5322 message with its MIME parts.
func parseEmail(r io.Reader) (Email, error) {
	mr, err := mail.CreateReader(r)
	if err != nil {
		return Email{}, err
	}
	var e Email
	e.Headers = map[string][]string(mr.Header.Header.Map())
	e.Subject, _ = mr.Header.Subject()
	e.MessageID, _ = mr.Header.MessageID()
	if from, err := mr.Header.AddressList("From"); err == nil && len(from) > 0 {
		e.HeaderFrom, e.FromName = from[0].Address, from[0].Name
	}
	if rt, err := mr.Header.AddressList("Reply-To"); err == nil {
		for _, a := range rt {
			e.ReplyTo = append(e.ReplyTo, a.Address)
		}
	}
	for {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil && p == nil {
			return e, err
		}
		body, err := io.ReadAll(p.Body)
		if err != nil {
			return e, err
		}
		switch h := p.Header.(type) {
		case *mail.InlineHeader:
			ct, _, _ := h.ContentType()
			if ct == "text/html" {
				e.HTML += string(body)
			} else {
				e.Text += string(body)
			}
		case *mail.AttachmentHeader:
			name, _ := h.Filename()
			ct, _, _ := h.ContentType()
			e.Attachments = append(e.Attachments, Attachment{Name: name, ContentType: ct, Data: body})
		}
	}
	return e, nil
}
