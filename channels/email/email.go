// Package email delivers messages over SMTP. One Sender call sends its
// batch over up to Config.Connections SMTP connections at once, each taking
// the next message not yet sent, and reports a result per message: a 5xx
// reply is a permanent failure of that message, a 4xx reply a temporary
// one, and a server that cannot be reached at all is an error for the whole
// batch, which the caller retries. Every email is from the
// configured sender's address; an alert's carries its sender's name as the
// display name and its Reply-To (Options).
package email

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/mail"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	gomail "github.com/wneessen/go-mail"

	"github.com/tocsin/tocsin/channels"
)

// TLS modes of the connection to the SMTP server.
const (
	TLSNone     = "none"
	TLSStartTLS = "starttls"
	TLSImplicit = "tls"
)

// Config says how to reach the SMTP server.
type Config struct {
	// Addr is host:port of the server.
	Addr string
	// Username and Password authenticate when Username is not empty.
	Username, Password string
	// From is the sender, an RFC 5322 address ("tocsin <alerts@example.com>").
	From string
	// TLS is TLSNone, TLSStartTLS (required) or TLSImplicit.
	TLS string
	// Timeout bounds dialing and each SMTP command; 30 seconds when zero.
	Timeout time.Duration
	// TLSConfig overrides the TLS settings (tests use it to trust their own
	// certificate authority).
	TLSConfig *tls.Config
	// Connections is how many SMTP connections one batch sends over at
	// once (DefaultConnections when zero): one connection carries one
	// message at a time, waiting for the server's reply to each.
	Connections int
}

// DefaultConnections is how many connections a batch sends over when the
// configuration does not say.
const DefaultConnections = 4

// perConnection is the fewest messages a batch gives each of its
// connections: a small batch is not worth another SMTP session.
const perConnection = 10

// Sender sends email over SMTP. It implements channels.Sender.
type Sender struct {
	cfg    Config
	host   string
	port   int
	from   *mail.Address
	domain string
}

// New checks cfg and returns a Sender. It does not connect yet.
func New(cfg Config) (*Sender, error) {
	host, portStr, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("smtp address %q: %w", cfg.Addr, err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || port < 1 || port > 65535 {
		return nil, fmt.Errorf("smtp address %q: bad port", cfg.Addr)
	}
	from, err := mail.ParseAddress(cfg.From)
	if err != nil {
		return nil, fmt.Errorf("smtp sender %q: %w", cfg.From, err)
	}
	switch cfg.TLS {
	case "":
		cfg.TLS = TLSNone
	case TLSNone, TLSStartTLS, TLSImplicit:
	default:
		return nil, fmt.Errorf("smtp tls mode %q: want none, starttls or tls", cfg.TLS)
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	if cfg.Connections <= 0 {
		cfg.Connections = DefaultConnections
	}
	domain := "tocsin.localhost"
	if at := strings.LastIndexByte(from.Address, '@'); at >= 0 && at < len(from.Address)-1 {
		domain = from.Address[at+1:]
	}
	return &Sender{cfg: cfg, host: host, port: port, from: from, domain: domain}, nil
}

// MessageID is the Message-ID (without angle brackets) of the message with
// the given key: the same key always gives the same id, so a receiver can
// tell a retried delivery from a new one, and the key itself is not revealed.
func (s *Sender) MessageID(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:16]) + "@" + s.domain
}

func (s *Sender) client() (*gomail.Client, error) {
	opts := []gomail.Option{
		gomail.WithPort(s.port),
		gomail.WithTimeout(s.cfg.Timeout),
		gomail.WithHELO("tocsin"),
	}
	switch s.cfg.TLS {
	case TLSNone:
		opts = append(opts, gomail.WithTLSPolicy(gomail.NoTLS))
	case TLSStartTLS:
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSMandatory))
	case TLSImplicit:
		opts = append(opts, gomail.WithSSL())
	}
	if s.cfg.TLSConfig != nil {
		opts = append(opts, gomail.WithTLSConfig(s.cfg.TLSConfig))
	}
	if s.cfg.Username != "" {
		// Over an encrypted connection the strongest mechanism the server
		// offers is chosen. Without TLS, PLAIN is used, and go-mail sends it
		// only to a server on localhost, so credentials never cross a
		// network in clear.
		mech := gomail.SMTPAuthAutoDiscover
		if s.cfg.TLS == TLSNone {
			mech = gomail.SMTPAuthPlain
		}
		opts = append(opts, gomail.WithSMTPAuth(mech),
			gomail.WithUsername(s.cfg.Username), gomail.WithPassword(s.cfg.Password))
	}
	c, err := gomail.NewClient(s.host, opts...)
	if err != nil {
		return nil, fmt.Errorf("smtp client: %w", err)
	}
	return c, nil
}

// Send delivers msgs and returns one result per message, in order,
// reporting each message the server took or refused as it goes
// (channels.Report). It opens one connection, then, for a batch large
// enough (perConnection messages each), more up to Config.Connections;
// each connection takes the next message not yet sent. It returns an
// error, and no results, when the first connection cannot be opened or the
// server refuses the session; a connection opened later that fails leaves
// its share to the others. A connection lost in the middle of the batch is
// reopened once; when it is lost again it takes no more messages, and the
// messages no connection could carry are temporary failures.
func (s *Sender) Send(ctx context.Context, msgs []channels.Message) ([]channels.Result, error) {
	if len(msgs) == 0 {
		return nil, nil
	}
	first, err := s.dial(ctx)
	if err != nil {
		return nil, err
	}
	results := make([]channels.Result, len(msgs))
	var next atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() { s.sendOver(ctx, first, msgs, results, &next) })
	for range min(s.cfg.Connections, (len(msgs)+perConnection-1)/perConnection) - 1 {
		wg.Go(func() {
			if c, err := s.dial(ctx); err == nil {
				s.sendOver(ctx, c, msgs, results, &next)
			}
		})
	}
	wg.Wait()
	for i, m := range msgs {
		if results[i].Key == "" {
			results[i] = channels.Result{Key: m.Key, ProviderMessageID: s.MessageID(m.Key), Outcome: channels.Failed,
				Error: "not attempted: the connections to the smtp server were lost"}
			channels.Report(ctx, results[i])
		}
	}
	return results, nil
}

// dial opens a connection to the SMTP server.
func (s *Sender) dial(ctx context.Context) (*gomail.Client, error) {
	c, err := s.client()
	if err != nil {
		return nil, err
	}
	if err := c.DialWithContext(ctx); err != nil {
		return nil, fmt.Errorf("connect to smtp server %s: %w", s.cfg.Addr, err)
	}
	return c, nil
}

// sendOver sends, over c, the next message of msgs not yet taken (next
// counts those taken) until none is left or c is lost for good, writing
// each result into results, and closes c.
func (s *Sender) sendOver(ctx context.Context, c *gomail.Client, msgs []channels.Message, results []channels.Result, next *atomic.Int64) {
	defer func() { _ = c.Close() }()
	redialed := false
	for {
		i := int(next.Add(1) - 1)
		if i >= len(msgs) {
			return
		}
		m := msgs[i]
		res := channels.Result{Key: m.Key, ProviderMessageID: s.MessageID(m.Key)}
		if err := ctx.Err(); err != nil {
			res.Outcome, res.Error = channels.Failed, "not attempted: "+err.Error()
			results[i] = res
			continue
		}
		gm, err := s.build(m)
		if err != nil {
			res.Outcome, res.Permanent, res.Error = channels.Failed, true, err.Error()
			results[i] = res
			continue
		}
		err = c.Send(gm)
		lost := err != nil && connectionLost(err)
		if lost && !redialed {
			redialed = true
			_ = c.Close()
			if derr := c.DialWithContext(ctx); derr == nil {
				err = c.Send(gm)
				lost = err != nil && connectionLost(err)
			}
		}
		switch {
		case err == nil:
			res.Outcome = channels.Sent
		default:
			res.Outcome = channels.Failed
			res.Permanent = permanent(err)
			res.Error = err.Error()
		}
		results[i] = res
		channels.Report(ctx, res)
		if lost && redialed {
			return // the other connections, if any, carry the rest
		}
	}
}

// build turns m into a go-mail message.
func (s *Sender) build(m channels.Message) (*gomail.Msg, error) {
	to, err := mail.ParseAddress(m.To)
	if err != nil {
		return nil, fmt.Errorf("recipient %q: %w", m.To, err)
	}
	o := channels.OptionsOf[Options](m)
	from := s.from
	if o.FromName != "" {
		// net/mail writes the name quoted, or as RFC 2047 encoded words
		// when it holds anything but printable ASCII (CR and LF too), so
		// no name can end the header or add one.
		from = &mail.Address{Name: o.FromName, Address: s.from.Address}
	}
	gm := gomail.NewMsg()
	gm.FromMailAddress(from)
	if o.ReplyTo != "" {
		rt, err := mail.ParseAddress(o.ReplyTo)
		if err != nil {
			return nil, fmt.Errorf("reply-to %q: %w", o.ReplyTo, err)
		}
		gm.ReplyToMailAddress(rt)
	}
	gm.ToMailAddress(to)
	gm.Subject(m.Subject)
	gm.SetMessageIDWithValue(s.MessageID(m.Key))
	gm.SetDate()
	gm.SetGenHeader("X-Tocsin-Tenant", m.Tenant)
	switch {
	case m.Text != "" && m.HTML != "":
		gm.SetBodyString(gomail.TypeTextPlain, m.Text)
		gm.AddAlternativeString(gomail.TypeTextHTML, m.HTML)
	case m.HTML != "":
		gm.SetBodyString(gomail.TypeTextHTML, m.HTML)
	default:
		gm.SetBodyString(gomail.TypeTextPlain, m.Text)
	}
	for _, a := range m.Attachments {
		ct := a.ContentType
		if ct == "" {
			ct = "application/octet-stream"
		}
		gm.AttachReadSeeker(a.Name, bytes.NewReader(a.Data), gomail.WithFileContentType(gomail.ContentType(ct)))
	}
	return gm, nil
}

// permanent reports whether the server refused the message with a 5xx reply.
func permanent(err error) bool {
	var se *gomail.SendError
	if errors.As(err, &se) {
		if code := se.ErrorCode(); code >= 500 && code < 600 {
			return true
		}
		switch se.Reason {
		case gomail.ErrGetSender, gomail.ErrGetRcpts, gomail.ErrNoUnencoded:
			return true
		}
	}
	return false
}

// connectionLost reports whether err means the connection broke rather than
// the server answering.
func connectionLost(err error) bool {
	var se *gomail.SendError
	if errors.As(err, &se) {
		return se.Reason == gomail.ErrConnCheck || se.ErrorCode() == 0 && !permanent(err)
	}
	return true
}
