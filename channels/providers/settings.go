// Package providers keeps each tenant's provider configuration per channel
// (sealed at rest with AES-256-GCM) and turns it into channel Senders: the
// primary provider with the fallback behind it, under the channel's rate
// limit. Its Senders dispatch every message to its tenant's configuration.
package providers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/tocsin/tocsin/channels"
	"github.com/tocsin/tocsin/hooks"
	"github.com/tocsin/tocsin/internal/secrets"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/channelstate"
)

// Configurable lists the channels whose providers a tenant configures here
// (email and text use the deployment's SMTP server and SMS provider).
var Configurable = []channels.Channel{
	channels.Voice, channels.Etn, channels.Push, channels.MyAlertsApp, channels.Fax, channels.Eas,
	channels.MobileBroadcast, channels.TeamChat, channels.SocialPostA, channels.SocialPostB, channels.Neighborhood,
}

// Settings is a tenant's configuration of one channel.
type Settings struct {
	// Providers holds the primary provider and, optionally, the fallback.
	Providers []Provider `json:"providers,omitempty"`
	// RatePerSecond limits messages per second on the channel (0: no limit);
	// Burst is the most sent at once.
	RatePerSecond float64 `json:"ratePerSecond,omitempty"`
	Burst         int     `json:"burst,omitempty"`
	// MaxConcurrentCalls bounds ETN calls in progress (default 10).
	MaxConcurrentCalls int `json:"maxConcurrentCalls,omitempty"`
	// Targets are team-chat webhooks.
	Targets []Target `json:"targets,omitempty"`
	// Accounts are social-network and neighborhood-network accounts.
	Accounts []Account `json:"accounts,omitempty"`
}

// Provider is one provider's address and credentials.
type Provider struct {
	Name string `json:"name,omitempty"`
	URL  string `json:"url"`
	// Token is the provider's API credential (secret).
	Token string `json:"token,omitempty"`
	// SigningSecret signs voice and ETN status callbacks (secret).
	SigningSecret string `json:"signingSecret,omitempty"`
	// From is the caller id or fax number.
	From string `json:"from,omitempty"`
	// SenderID is the CAP sender.
	SenderID string `json:"senderId,omitempty"`
}

// Target is a team-chat incoming webhook.
type Target struct {
	Name string `json:"name"`
	// URL is the webhook (secret: whoever has it can post).
	URL   string `json:"url"`
	Style string `json:"style"`
}

// Account is a social or neighborhood account.
type Account struct {
	ID     string  `json:"id"`
	Name   string  `json:"name"`
	Token  string  `json:"token"`
	Groups []Group `json:"groups,omitempty"`
}

// Group is a neighborhood group of an account.
type Group struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// FieldError names the field of Settings that is wrong.
type FieldError struct {
	Field, Message string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Message }

var (
	e164   = regexp.MustCompile(`^\+[1-9][0-9]{6,14}$`)
	nameRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9 ._@:-]{0,99}$`)
)

// checkURL checks that raw is an absolute http(s) URL without credentials
// whose host follows the rule of hook targets (hooks.CheckHost), and
// returns what is wrong ("" when nothing), calling raw what.
func checkURL(raw, what string) string {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil {
		return "must be an absolute http(s) " + what + " without credentials"
	}
	if _, err := hooks.CheckHost(u); err != nil {
		return err.Error()
	}
	return ""
}

// asciiHost returns raw with an internationalized host in the ASCII form
// it is dialed in (hooks.CheckHost), the rest of raw as it is; raw when
// its host is ASCII or not valid.
func asciiHost(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	dialed, err := hooks.CheckHost(u)
	if err != nil || strings.EqualFold(dialed, u.Hostname()) {
		return raw
	}
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return raw
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	authority := dialed
	if port := u.Port(); port != "" {
		authority += ":" + port
	}
	return scheme + "://" + authority + rest[end:]
}

// Validate checks s for channel ch.
func (s Settings) Validate(ch channels.Channel) error {
	bad := func(field, format string, args ...any) error {
		return &FieldError{Field: field, Message: fmt.Sprintf(format, args...)}
	}
	if !slices.Contains(Configurable, ch) {
		return bad("channel", "%q has no provider settings here", ch)
	}
	if s.RatePerSecond < 0 || s.RatePerSecond > 100000 {
		return bad("ratePerSecond", "must be within 0..100000")
	}
	if s.Burst < 0 || s.Burst > 100000 {
		return bad("burst", "must be within 0..100000")
	}
	needsProvider := ch != channels.TeamChat
	if needsProvider && (len(s.Providers) < 1 || len(s.Providers) > 2) {
		return bad("providers", "give one provider and at most one fallback")
	}
	if !needsProvider && len(s.Providers) > 0 {
		return bad("providers", "team chat posts to the targets' webhooks and has no provider")
	}
	for i, p := range s.Providers {
		f := fmt.Sprintf("providers[%d]", i)
		if msg := checkURL(p.URL, "URL"); msg != "" {
			return bad(f+".url", "%s", msg)
		}
		if ch != channels.SocialPostA && ch != channels.SocialPostB && ch != channels.Neighborhood && p.Token == "" {
			return bad(f+".token", "is required")
		}
		switch ch {
		case channels.Voice, channels.Etn:
			if !e164.MatchString(p.From) {
				return bad(f+".from", "must be the E.164 caller id")
			}
			if len(p.SigningSecret) < 16 {
				return bad(f+".signingSecret", "must have at least 16 characters")
			}
		case channels.Fax:
			if !e164.MatchString(p.From) {
				return bad(f+".from", "must be the E.164 fax number")
			}
		}
	}
	if ch == channels.Etn && (s.MaxConcurrentCalls < 0 || s.MaxConcurrentCalls > 1000) {
		return bad("maxConcurrentCalls", "must be within 1..1000")
	}
	if ch == channels.TeamChat {
		err := keyed("targets", "webhook target", "name", s.Targets, func(t Target) string { return t.Name }, func(f string, t Target) error {
			if msg := checkURL(t.URL, "webhook URL"); msg != "" {
				return bad(f+".url", "%s", msg)
			}
			if t.Style != "slack" && t.Style != "teams" {
				return bad(f+".style", "must be slack or teams")
			}
			return nil
		})
		if err != nil {
			return err
		}
	} else if len(s.Targets) > 0 {
		return bad("targets", "only team chat has webhook targets")
	}
	social := ch == channels.SocialPostA || ch == channels.SocialPostB || ch == channels.Neighborhood
	if social {
		err := keyed("accounts", "account", "id", s.Accounts, func(a Account) string { return a.ID }, func(f string, a Account) error {
			if strings.TrimSpace(a.Name) == "" || a.Token == "" {
				return bad(f, "name and token are required")
			}
			if ch == channels.Neighborhood && len(a.Groups) == 0 {
				return bad(f+".groups", "a neighborhood account needs its groups")
			}
			if ch != channels.Neighborhood && len(a.Groups) > 0 {
				return bad(f+".groups", "only neighborhood accounts have groups")
			}
			for j, g := range a.Groups {
				if g.ID == "" || strings.TrimSpace(g.Name) == "" {
					return bad(fmt.Sprintf("%s.groups[%d]", f, j), "id and name are required")
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	} else if len(s.Accounts) > 0 {
		return bad("accounts", "only social and neighborhood channels have accounts")
	}
	return nil
}

// keyed checks the entries of the list field that messages name by key
// (keyField of each entry): at least one entry, each key a unique name of
// letters, digits and . _ @ : -, and check for the rest of each entry,
// given its field path.
func keyed[T any](field, entry, keyField string, list []T, key func(T) string, check func(f string, x T) error) error {
	if len(list) == 0 {
		return &FieldError{Field: field, Message: "at least one " + entry + " is required"}
	}
	seen := map[string]bool{}
	for i, x := range list {
		f := fmt.Sprintf("%s[%d]", field, i)
		k := key(x)
		if !nameRe.MatchString(k) || seen[k] {
			return &FieldError{Field: f + "." + keyField, Message: "must be a unique " + keyField + " of letters, digits and . _ @ : -"}
		}
		seen[k] = true
		if err := check(f, x); err != nil {
			return err
		}
	}
	return nil
}

// Masked returns s with every secret masked: values as secrets.Mask does,
// URLs as secrets.MaskURL does (some providers take their API key in the
// URL, and a team-chat webhook URL is itself the secret).
func (s Settings) Masked() Settings {
	m := s.clone()
	for i := range m.Providers {
		m.Providers[i].URL = secrets.MaskURL(m.Providers[i].URL)
		m.Providers[i].Token = secrets.Mask(m.Providers[i].Token)
		m.Providers[i].SigningSecret = secrets.Mask(m.Providers[i].SigningSecret)
	}
	for i := range m.Targets {
		m.Targets[i].URL = secrets.MaskURL(m.Targets[i].URL)
	}
	for i := range m.Accounts {
		m.Accounts[i].Token = secrets.Mask(m.Accounts[i].Token)
	}
	return m
}

func (s Settings) clone() Settings {
	b, _ := json.Marshal(s)
	var c Settings
	_ = json.Unmarshal(b, &c)
	return c
}

// keepSecrets replaces masked secrets in s with the ones in old: a client
// may send back what it read and change only what it means to change. A
// masked secret is kept only while the URL it is sent to keeps its
// destination (hooks.SameDestination): a provider's token and signing
// secret belong to its URL, and the accounts' tokens, posted to every
// provider URL, to the providers' URLs. Otherwise the secret must be sent
// again, so that a new URL cannot receive secrets its author never gave.
func (s Settings) keepSecrets(old Settings) error {
	for i := range s.Providers {
		var prev Provider
		if i < len(old.Providers) {
			prev = old.Providers[i]
		}
		u, err := secrets.KeepURL(s.Providers[i].URL, prev.URL)
		if err != nil {
			return &FieldError{Field: fmt.Sprintf("providers[%d].url", i), Message: err.Error()}
		}
		s.Providers[i].URL = u
		same := prev.URL != "" && hooks.SameDestination(s.Providers[i].URL, prev.URL)
		if err := keep(&s.Providers[i].Token, prev.Token, same, fmt.Sprintf("providers[%d].token", i), "the provider's url"); err != nil {
			return err
		}
		if err := keep(&s.Providers[i].SigningSecret, prev.SigningSecret, same, fmt.Sprintf("providers[%d].signingSecret", i), "the provider's url"); err != nil {
			return err
		}
	}
	for i := range s.Targets {
		prev := ""
		for _, t := range old.Targets {
			if t.Name == s.Targets[i].Name {
				prev = t.URL
			}
		}
		// The webhook URL is itself the secret: kept, it is sent where it
		// was sent before.
		u, err := secrets.KeepURL(s.Targets[i].URL, prev)
		if err != nil {
			return &FieldError{Field: fmt.Sprintf("targets[%d].url", i), Message: err.Error()}
		}
		s.Targets[i].URL = u
	}
	// Every provider posts with every account's token: they stay where they
	// were sent while each provider URL is one they were sent to.
	same := true
	for _, p := range s.Providers {
		same = same && slices.ContainsFunc(old.Providers, func(o Provider) bool { return hooks.SameDestination(p.URL, o.URL) })
	}
	for i := range s.Accounts {
		prev := ""
		for _, a := range old.Accounts {
			if a.ID == s.Accounts[i].ID {
				prev = a.Token
			}
		}
		if err := keep(&s.Accounts[i].Token, prev, same, fmt.Sprintf("accounts[%d].token", i), "a provider's url"); err != nil {
			return err
		}
	}
	return nil
}

// keep replaces the masked *v with prev, the stored secret it must be the
// mask of, when sameDestination: the URL the secret is sent to (dest, for
// the message) has the destination it had.
func keep(v *string, prev string, sameDestination bool, field, dest string) error {
	if !secrets.IsMasked(*v) {
		return nil
	}
	if prev == "" || secrets.Mask(prev) != *v {
		return &FieldError{Field: field, Message: "is masked but no stored secret matches it"}
	}
	if !sameDestination {
		return &FieldError{Field: field, Message: "is masked but the destination changed (" + dest + " has a new scheme, host, port, path or query): " +
			"send the secret itself again, the stored one is only sent where it was sent before"}
	}
	*v = prev
	return nil
}

// Store keeps settings sealed in channel_providers.
type Store struct {
	DB  *storage.DB
	Box *secrets.Box
	// Guard, when set, refuses provider and webhook URLs the outbound
	// policy forbids when settings are saved.
	Guard URLGuard
}

// URLGuard is the outbound URL policy (hooks.Policy) applied to provider
// URLs: checked when settings are saved, and at every connection.
type URLGuard interface {
	CheckProviderURL(ctx context.Context, raw string) (*url.URL, error)
	ProviderClient(timeout time.Duration) *http.Client
}

// CheckURLs checks every provider and webhook URL of s against g; a refusal
// is a *FieldError naming the URL's field.
func (s Settings) CheckURLs(ctx context.Context, g URLGuard) error {
	check := func(field, raw string) error {
		if _, err := g.CheckProviderURL(ctx, raw); err != nil {
			return &FieldError{Field: field, Message: strings.TrimPrefix(err.Error(), hooks.ErrTarget.Error()+": ")}
		}
		return nil
	}
	for i, p := range s.Providers {
		if err := check(fmt.Sprintf("providers[%d].url", i), p.URL); err != nil {
			return err
		}
	}
	for i, t := range s.Targets {
		if err := check(fmt.Sprintf("targets[%d].url", i), t.URL); err != nil {
			return err
		}
	}
	return nil
}

// Entry is stored settings with their times.
type Entry struct {
	Channel   channels.Channel
	Settings  Settings
	CreatedAt time.Time
	UpdatedAt time.Time
}

func aad(tenant string, ch channels.Channel) []byte {
	return []byte("channel_providers/" + tenant + "/" + string(ch))
}

// SettingsStore keeps sealed settings (channelstate.Providers).
type SettingsStore interface {
	Get(ctx context.Context, tenant, channel string) (channelstate.ProviderSettings, error)
	UpdatedAt(ctx context.Context, tenant, channel string) (time.Time, error)
	List(ctx context.Context, tenant string) ([]channelstate.ProviderSettings, error)
	Put(ctx context.Context, tenant, channel string, sealed []byte) (channelstate.ProviderSettings, bool, error)
	Delete(ctx context.Context, tenant, channel string) error
}

var _ SettingsStore = (*channelstate.Providers)(nil)

func (st *Store) store() SettingsStore { return &channelstate.Providers{DB: st.DB} }

func (st *Store) open(tenant string, r channelstate.ProviderSettings) (Entry, error) {
	ch := channels.Channel(r.Channel)
	plain, err := st.Box.Open(r.Sealed, aad(tenant, ch))
	if err != nil {
		return Entry{}, fmt.Errorf("open %s settings: %w", ch, err)
	}
	var s Settings
	if err := json.Unmarshal(plain, &s); err != nil {
		return Entry{}, fmt.Errorf("decode %s settings: %w", ch, err)
	}
	return Entry{Channel: ch, Settings: s, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}, nil
}

// Get returns the tenant's settings of ch, or storage.ErrNotFound.
func (st *Store) Get(ctx context.Context, tenant string, ch channels.Channel) (Entry, error) {
	r, err := st.store().Get(ctx, tenant, string(ch))
	if err != nil {
		return Entry{}, err
	}
	return st.open(tenant, r)
}

// UpdatedAt returns when the tenant's settings of ch last changed, or
// storage.ErrNotFound.
func (st *Store) UpdatedAt(ctx context.Context, tenant string, ch channels.Channel) (time.Time, error) {
	return st.store().UpdatedAt(ctx, tenant, string(ch))
}

// List returns every channel the tenant configured.
func (st *Store) List(ctx context.Context, tenant string) ([]Entry, error) {
	rows, err := st.store().List(ctx, tenant)
	if err != nil {
		return nil, err
	}
	out := make([]Entry, 0, len(rows))
	for _, r := range rows {
		e, err := st.open(tenant, r)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// Put validates and stores s as the tenant's settings of ch. Masked secrets
// keep their stored values. It reports whether the settings were created.
func (st *Store) Put(ctx context.Context, tenant string, ch channels.Channel, s Settings) (Entry, bool, error) {
	old, err := st.Get(ctx, tenant, ch)
	if err != nil && !errors.Is(err, storage.ErrNotFound) {
		return Entry{}, false, err
	}
	s = s.clone()
	if err := s.keepSecrets(old.Settings); err != nil {
		return Entry{}, false, err
	}
	if ch == channels.Etn && s.MaxConcurrentCalls == 0 {
		s.MaxConcurrentCalls = 10
	}
	if err := s.Validate(ch); err != nil {
		return Entry{}, false, err
	}
	for i := range s.Providers {
		s.Providers[i].URL = asciiHost(s.Providers[i].URL)
	}
	for i := range s.Targets {
		s.Targets[i].URL = asciiHost(s.Targets[i].URL)
	}
	if st.Guard != nil {
		if err := s.CheckURLs(ctx, st.Guard); err != nil {
			return Entry{}, false, err
		}
	}
	plain, err := json.Marshal(s)
	if err != nil {
		return Entry{}, false, fmt.Errorf("encode settings: %w", err)
	}
	sealed, err := st.Box.Seal(plain, aad(tenant, ch))
	if err != nil {
		return Entry{}, false, err
	}
	r, created, err := st.store().Put(ctx, tenant, string(ch), sealed)
	if err != nil {
		return Entry{}, false, err
	}
	return Entry{Channel: ch, Settings: s, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}, created, nil
}

// Delete removes the tenant's settings of ch; storage.ErrNotFound when none.
func (st *Store) Delete(ctx context.Context, tenant string, ch channels.Channel) error {
	return st.store().Delete(ctx, tenant, string(ch))
}
