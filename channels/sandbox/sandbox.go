package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
)

// Config says where the sandbox listens.
type Config struct {
	// SMTPAddr is host:port of the SMTP server.
	SMTPAddr string
	// SMSURL is the URL senders post texts to; its host:port is where the
	// endpoint listens and its path where it accepts messages.
	SMSURL string
	// SMSToken is the bearer token the endpoint demands (any when empty).
	SMSToken string
}

// Sandbox is a running SMTP server and text-message endpoint.
type Sandbox struct {
	SMTP *SMTPServer
	SMS  *SMSServer
}

// Start runs both servers.
func Start(c Config) (*Sandbox, error) {
	u, err := url.Parse(c.SMSURL)
	if err != nil || u.Host == "" || u.Scheme != "http" {
		return nil, fmt.Errorf("sandbox sms url %q: want http://host:port/path", c.SMSURL)
	}
	smtpSrv, err := StartSMTP(c.SMTPAddr)
	if err != nil {
		return nil, err
	}
	smsSrv, err := StartSMS(u.Host, u.Path, c.SMSToken)
	if err != nil {
		_ = smtpSrv.Close()
		return nil, err
	}
	return &Sandbox{SMTP: smtpSrv, SMS: smsSrv}, nil
}

// Close stops both servers.
func (s *Sandbox) Close() error {
	return errors.Join(s.SMTP.Close(), s.SMS.Close())
}

// Received is what the inspect handler serves.
type Received struct {
	Emails []Email `json:"emails"`
	Texts  []Text  `json:"texts"`
}

// Handler serves what the sandbox received: GET /messages answers every
// email and text as JSON (GET /messages/emails and /messages/texts one kind),
// DELETE /messages forgets them.
func (s *Sandbox) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /messages", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, Received{Emails: nonNil(s.SMTP.Messages()), Texts: nonNil(s.SMS.Messages())})
	})
	mux.HandleFunc("GET /messages/emails", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, nonNil(s.SMTP.Messages()))
	})
	mux.HandleFunc("GET /messages/texts", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, nonNil(s.SMS.Messages()))
	})
	mux.HandleFunc("DELETE /messages", func(w http.ResponseWriter, _ *http.Request) {
		s.SMTP.Clear()
		s.SMS.Clear()
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{
			"smtp": s.SMTP.Addr(), "sms": s.SMS.URL(), "messages": "/messages",
		})
	})
	return mux
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
