package directory_test

import (
	"context"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/api/rest"
	"github.com/tocsin/tocsin/channels/sandbox"
	"github.com/tocsin/tocsin/internal/config"
	"github.com/tocsin/tocsin/internal/secrets"
	"github.com/tocsin/tocsin/internal/stacktest"
	storagedir "github.com/tocsin/tocsin/storage/directory"
	"github.com/tocsin/tocsin/storage/storagetest"
	"github.com/tocsin/tocsin/workflows"
)

// env is a running stack with a sandbox, a fresh tenant and a directory.
type env struct {
	s      *stacktest.Stack
	sb     *sandbox.Sandbox
	tenant string
	dir    string
	tok    string
}

func start(t *testing.T, configure ...func(*config.Config)) *env {
	t.Helper()
	sb, point := stacktest.Sandbox(t)
	s := stacktest.Start(t, append([]func(*config.Config){point, func(c *config.Config) { c.TestingEndpoints = true }}, configure...)...)
	tenant := stacktest.NewTenant()
	return &env{s: s, sb: sb, tenant: tenant, dir: "staff", tok: s.Token(t, tenant, "directory:public")}
}

// base is the path of the directory.
func (e *env) base() string { return "/" + e.tenant + "/directory/" + e.dir }

func (e *env) do(t *testing.T, method, path string, body any) stacktest.Response {
	t.Helper()
	return e.s.Do(t, method, path, e.tok, body)
}

// want fails the test unless r has the status.
func want(t *testing.T, r stacktest.Response, status int) stacktest.Response {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d: %s", r.Status, status, r.Body)
	}
	return r
}

// wantProblem checks a problem answer: status, content type, and a
// failure located at field when field is not empty.
func wantProblem(t *testing.T, r stacktest.Response, status int, field string) rest.ProblemDetails {
	t.Helper()
	want(t, r, status)
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/problem+json") {
		t.Fatalf("content type %q: %s", ct, r.Body)
	}
	var p rest.ProblemDetails
	r.JSON(t, &p)
	if field != "" {
		found := false
		for _, f := range p.Errors {
			if strings.HasPrefix(f.Location, field) {
				found = true
			}
		}
		if !found {
			t.Fatalf("no failure at %s: %s", field, r.Body)
		}
	}
	return p
}

// createUser creates a user and returns its id.
func (e *env) createUser(t *testing.T, first, last string, extra ...map[string]any) string {
	t.Helper()
	body := map[string]any{"name": map[string]any{"first": first, "last": last}}
	for _, x := range extra {
		for k, v := range x {
			body[k] = v
		}
	}
	var u struct{ ID string }
	want(t, e.do(t, "POST", e.base()+"/users", body), 201).JSON(t, &u)
	if u.ID == "" {
		t.Fatal("no id")
	}
	return u.ID
}

func (e *env) user(id string) string { return e.base() + "/users/" + id }

func emailPath(e *env, id, addr string) string {
	return e.user(id) + "/contact/emails/" + url.PathEscape(addr)
}

func phonePath(e *env, id, number string) string {
	return e.user(id) + "/contact/phones/" + strings.ReplaceAll(url.PathEscape(number), "+", "%2B")
}

var codeRE = regexp.MustCompile(`\b(\d{6})\b`)

func codeIn(t *testing.T, text string) string {
	t.Helper()
	m := codeRE.FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no code in %q", text)
	}
	return m[1]
}

// emailCode waits for the n-th (1-based) email to addr and returns its code.
func (e *env) emailCode(t *testing.T, addr string, n int) string {
	t.Helper()
	var got []sandbox.Email
	stacktest.Eventually(t, 60*time.Second, "verification email to "+addr, func() bool {
		got = nil
		for _, m := range e.sb.SMTP.Messages() {
			if len(m.To) == 1 && m.To[0] == addr {
				got = append(got, m)
			}
		}
		return len(got) >= n
	})
	if got[n-1].Subject == "" {
		t.Fatalf("email without subject: %+v", got[n-1])
	}
	return codeIn(t, got[n-1].Text)
}

// textCode waits for the n-th text to number and returns its code.
func (e *env) textCode(t *testing.T, number string, n int) string {
	t.Helper()
	var got []sandbox.Text
	stacktest.Eventually(t, 60*time.Second, "verification text to "+number, func() bool {
		got = nil
		for _, m := range e.sb.SMS.Messages() {
			if m.To == number {
				got = append(got, m)
			}
		}
		return len(got) >= n
	})
	return codeIn(t, got[n-1].Body)
}

// resend reserves a fresh nonce for the address path and spends it on a resend.
func (e *env) resend(t *testing.T, addrPath string) {
	t.Helper()
	nonce := "nonce-" + stacktest.Suffix()
	want(t, e.do(t, "POST", addrPath+"/verification/nonce", map[string]any{"nonce": nonce}), 201)
	want(t, e.do(t, "POST", addrPath+"/verification/resend", map[string]any{"nonce": nonce}), 202)
}

// verificationID is the id of the Verification workflow of a user's address.
func (e *env) verificationID(t *testing.T, user, address string) string {
	t.Helper()
	uid, err := strconv.ParseInt(user, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	idKey, err := secrets.Derive(e.s.Config.SecretsKey, "workflow ids")
	if err != nil {
		t.Fatal(err)
	}
	kind := storagedir.KindPhone
	if strings.Contains(address, "@") {
		kind = storagedir.KindEmail
	}
	aid, err := storagedir.AddressID(context.Background(), e.s.DB, e.tenant, uid, kind, address)
	if err != nil {
		t.Fatal(err)
	}
	return workflows.VerificationWorkflowID(idKey, e.tenant, uid, address, aid)
}

// eventCount counts the tenant's events of a type.
func (e *env) eventCount(t *testing.T, typ string) int {
	t.Helper()
	events, err := storagetest.TenantEvents(context.Background(), e.s.DB, e.tenant)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ev := range events {
		if ev.Type == typ {
			n++
		}
	}
	return n
}
