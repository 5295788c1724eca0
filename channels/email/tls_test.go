package email_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"testing"
	"time"

	"github.com/tocsin/tocsin/channels"
	"github.com/tocsin/tocsin/channels/email"
	"github.com/tocsin/tocsin/channels/sandbox"
)

// selfSigned returns a server configuration with a certificate for
// 127.0.0.1 and a client configuration that trusts it.
func selfSigned(t *testing.T) (server, client *tls.Config) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "sandbox"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}, MinVersion: tls.VersionTLS12},
		&tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}
}

func TestTLSModes(t *testing.T) {
	serverTLS, clientTLS := selfSigned(t)
	msg := []channels.Message{{Key: "k", To: "ada@example.com", Subject: "s", Text: "x"}}
	cases := []struct {
		name    string
		opts    sandbox.SMTPOptions
		mode    string
		user    string
		wantErr bool
	}{
		{"starttls with authentication", sandbox.SMTPOptions{TLS: serverTLS, RequireAuth: true}, email.TLSStartTLS, "user", false},
		{"implicit tls", sandbox.SMTPOptions{TLS: serverTLS, Implicit: true}, email.TLSImplicit, "", false},
		{"starttls required but not offered", sandbox.SMTPOptions{}, email.TLSStartTLS, "", true},
		{"authentication required but not configured", sandbox.SMTPOptions{TLS: serverTLS, RequireAuth: true}, email.TLSStartTLS, "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv, err := sandbox.StartSMTPWith("127.0.0.1:0", c.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			s := newSender(t, srv.Addr(), func(cfg *email.Config) {
				cfg.TLS, cfg.TLSConfig, cfg.Username, cfg.Password = c.mode, clientTLS, c.user, "secret"
			})
			res, err := s.Send(context.Background(), msg)
			if c.wantErr {
				if err == nil {
					t.Fatalf("sent without the required TLS: %+v", res)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			wantSent := c.user != "" || !c.opts.RequireAuth
			if got := res[0].Outcome == channels.Sent; got != wantSent {
				t.Fatalf("%+v", res[0])
			}
			if !wantSent && !res[0].Permanent {
				t.Fatalf("refusal for missing authentication should be permanent: %+v", res[0])
			}
			if wantSent && len(srv.Messages()) != 1 {
				t.Fatalf("%d messages", len(srv.Messages()))
			}
		})
	}
}
