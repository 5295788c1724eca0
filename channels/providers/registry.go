package providers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/tocsin/tocsin/channels"
	"github.com/tocsin/tocsin/channels/cap"
	"github.com/tocsin/tocsin/channels/etn"
	"github.com/tocsin/tocsin/channels/fallback"
	"github.com/tocsin/tocsin/channels/fax"
	"github.com/tocsin/tocsin/channels/neighborhood"
	"github.com/tocsin/tocsin/channels/providerhttp"
	"github.com/tocsin/tocsin/channels/push"
	"github.com/tocsin/tocsin/channels/ratelimit"
	"github.com/tocsin/tocsin/channels/social"
	"github.com/tocsin/tocsin/channels/teamchat"
	"github.com/tocsin/tocsin/channels/voice"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/channelstate"
)

// CallbackPath is the path of our status-callback operation for a channel
// (voice or etn) and tenant.
func CallbackPath(ch channels.Channel, tenant string) string {
	return "/v2/callbacks/" + string(ch) + "/" + tenant
}

// Registry builds and caches each tenant's Sender per channel.
type Registry struct {
	Store   *Store
	DB      *storage.DB
	Objects *storage.Objects
	// PublicURL is where providers reach our callback operations.
	PublicURL string
	// Concurrency bounds requests in flight to one provider within a batch.
	Concurrency int
	// TTL is how long a built Sender is used before the settings' change
	// time is checked again (default 10s).
	TTL time.Duration
	// Timeout is how long a provider has to answer a request (default
	// DefaultTimeout); CAP endpoints have cap.Timeout.
	Timeout time.Duration

	// Guard checks every connection to a provider (loopback, private and
	// other reserved addresses are refused unless allowed): the outbound
	// policy the wiring builds. A registry without one builds no Sender.
	Guard URLGuard
	// Limiters holds the token buckets of the tenants' ratePerSecond,
	// shared with the other registries of the process (one per worker
	// lane); nil gives each built Sender a bucket of its own.
	Limiters *ratelimit.Limiters

	mu      sync.Mutex
	clients map[time.Duration]*http.Client
	cache   map[cacheKey]*cached
}

// DefaultTimeout is the answer timeout of the registry's provider clients
// when Registry.Timeout is not set.
const DefaultTimeout = 15 * time.Second

// timeout is the answer timeout of the registry's provider clients but
// CAP's (cap.Timeout).
func (r *Registry) timeout() time.Duration {
	if r.Timeout > 0 {
		return r.Timeout
	}
	return DefaultTimeout
}

type cacheKey struct {
	tenant string
	ch     channels.Channel
}

type cached struct {
	updated time.Time
	checked time.Time
	sender  channels.Sender
}

// ErrNotConfigured is wrapped by errors for a tenant without settings for a channel.
var ErrNotConfigured = channels.ErrNoProvider

// Sender returns the tenant's Sender of ch, built from its settings.
func (r *Registry) Sender(ctx context.Context, tenant string, ch channels.Channel) (channels.Sender, error) {
	k := cacheKey{tenant, ch}
	ttl := r.TTL
	if ttl <= 0 {
		ttl = 10 * time.Second
	}
	r.mu.Lock()
	if r.cache == nil {
		r.cache = map[cacheKey]*cached{}
	}
	c := r.cache[k]
	r.mu.Unlock()
	if c != nil && time.Since(c.checked) < ttl {
		return c.sender, nil
	}
	updated, err := r.Store.UpdatedAt(ctx, tenant, ch)
	if errors.Is(err, storage.ErrNotFound) {
		r.mu.Lock()
		delete(r.cache, k)
		r.mu.Unlock()
		return nil, fmt.Errorf("%s for tenant %s: %w", ch, tenant, ErrNotConfigured)
	}
	if err != nil {
		return nil, err
	}
	if c != nil && c.updated.Equal(updated) {
		r.mu.Lock()
		c.checked = time.Now()
		r.mu.Unlock()
		return c.sender, nil
	}
	e, err := r.Store.Get(ctx, tenant, ch)
	if err != nil {
		return nil, err
	}
	snd, err := r.Build(tenant, ch, e.Settings)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.cache[k] = &cached{updated: e.UpdatedAt, checked: time.Now(), sender: snd}
	r.mu.Unlock()
	return snd, nil
}

// httpClient returns the registry's guarded provider client with timeout,
// made on first use and shared by every Sender it builds after.
func (r *Registry) httpClient(timeout time.Duration) *http.Client {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c := r.clients[timeout]; c != nil {
		return c
	}
	if r.clients == nil {
		r.clients = map[time.Duration]*http.Client{}
	}
	c := r.Guard.ProviderClient(timeout)
	r.clients[timeout] = c
	return c
}

// ErrNoGuard is the error of a Registry built without its Guard.
var ErrNoGuard = errors.New("the channel provider registry has no outbound URL guard")

// Build turns settings into the channel's Sender: primary provider, the
// fallback behind it, the rate limit around both.
func (r *Registry) Build(tenant string, ch channels.Channel, s Settings) (channels.Sender, error) {
	if r.Guard == nil {
		return nil, ErrNoGuard
	}
	if err := s.Validate(ch); err != nil {
		return nil, err
	}
	var snd channels.Sender
	switch ch {
	case channels.TeamChat:
		var ts []teamchat.Target
		for _, t := range s.Targets {
			ts = append(ts, teamchat.Target{Name: t.Name, URL: t.URL, Style: t.Style})
		}
		snd = &teamchat.Sender{Targets: ts, Client: r.httpClient(r.timeout())}
	default:
		var built []channels.Sender
		for _, p := range s.Providers {
			built = append(built, r.one(tenant, ch, s, p))
		}
		snd = built[0]
		if len(built) > 1 {
			snd = fallback.New(built[0], built[1])
		}
	}
	return r.Limiters.Wrap(tenant+"|"+string(ch), snd, s.RatePerSecond, s.Burst), nil
}

func (r *Registry) one(tenant string, ch channels.Channel, s Settings, p Provider) channels.Sender {
	api := providerhttp.Endpoint{URL: strings.TrimRight(p.URL, "/"), Token: p.Token, Concurrency: r.Concurrency, Client: r.httpClient(r.timeout())}
	// The networks' posts carry each account's token, at their own concurrency.
	network := providerhttp.Endpoint{URL: api.URL, Client: api.Client}
	objs := &tenantObjects{objects: r.Objects, tenant: tenant}
	switch ch {
	case channels.Voice, channels.Etn:
		vs := voice.Sender{Endpoint: api, From: p.From, Channel: ch,
			CallbackURL: strings.TrimRight(r.PublicURL, "/") + CallbackPath(ch, tenant),
			Calls:       &voice.Calls{DB: r.DB}, Audio: objs}
		if ch == channels.Etn {
			return etn.New(vs, &etn.Slots{DB: r.DB, Limit: s.MaxConcurrentCalls})
		}
		return &vs
	case channels.Push, channels.MyAlertsApp:
		app := push.AppPush
		if ch == channels.MyAlertsApp {
			app = push.AppMyAlerts
		}
		return &push.Sender{Endpoint: api, App: app, Tokens: &channelstate.Devices{DB: r.DB}}
	case channels.Fax:
		return &fax.Sender{Endpoint: api, From: p.From, Objects: objs}
	case channels.Eas, channels.MobileBroadcast:
		return &cap.Sender{Endpoint: providerhttp.Endpoint{URL: p.URL, Token: p.Token, Client: r.httpClient(cap.Timeout)}, Channel: ch, SenderID: p.SenderID, Objects: objs, Log: &cap.Messages{DB: r.DB}}
	case channels.SocialPostA, channels.SocialPostB:
		name := social.NetworkA
		if ch == channels.SocialPostB {
			name = social.NetworkB
		}
		var as []social.Account
		for _, a := range s.Accounts {
			as = append(as, social.Account{ID: a.ID, Name: a.Name, Token: a.Token})
		}
		return &social.Sender{Network: name, Endpoint: network, Accounts: as}
	case channels.Neighborhood:
		var as []neighborhood.Account
		for _, a := range s.Accounts {
			na := neighborhood.Account{ID: a.ID, Name: a.Name, Token: a.Token}
			for _, g := range a.Groups {
				na.Groups = append(na.Groups, neighborhood.Group{ID: g.ID, Name: g.Name})
			}
			as = append(as, na)
		}
		return &neighborhood.Sender{Endpoint: network, Accounts: as, Statuses: &neighborhood.Statuses{DB: r.DB}}
	}
	return nil
}

// Senders returns a Sender per configurable channel that sends each
// message through its tenant's configuration.
func (r *Registry) Senders() channels.Senders {
	out := channels.Senders{}
	for _, ch := range Configurable {
		out[ch] = &TenantSender{Registry: r, Channel: ch}
	}
	return out
}

// TenantSender sends each message through its tenant's Sender of Channel.
type TenantSender struct {
	Registry *Registry
	Channel  channels.Channel
}

var _ channels.Sender = (*TenantSender)(nil)

// Send implements channels.Sender. Messages of a tenant without settings
// for the channel fail permanently.
func (t *TenantSender) Send(ctx context.Context, msgs []channels.Message) ([]channels.Result, error) {
	out := make([]channels.Result, len(msgs))
	byTenant := map[string][]int{}
	var order []string
	for i, m := range msgs {
		if _, ok := byTenant[m.Tenant]; !ok {
			order = append(order, m.Tenant)
		}
		byTenant[m.Tenant] = append(byTenant[m.Tenant], i)
	}
	for _, tenant := range order {
		idx := byTenant[tenant]
		snd, err := t.Registry.Sender(ctx, tenant, t.Channel)
		if err != nil {
			if !errors.Is(err, ErrNotConfigured) {
				return nil, err
			}
			for _, i := range idx {
				out[i] = channels.Result{Key: msgs[i].Key, Outcome: channels.Failed, Permanent: true, Error: "no " + string(t.Channel) + " provider is configured"}
			}
			continue
		}
		part := make([]channels.Message, len(idx))
		for j, i := range idx {
			part[j] = msgs[i]
		}
		res, err := snd.Send(ctx, part)
		if err != nil {
			return nil, err
		}
		for j, i := range idx {
			out[i] = res[j]
		}
	}
	return out, nil
}

// AudioLinkTTL is how long a provider's link to a stored audio file works.
const AudioLinkTTL = 2 * time.Hour

// AudioURL implements voice.AudioLinker with a presigned GET link.
func (o *tenantObjects) AudioURL(ctx context.Context, key string) (string, error) {
	if err := o.check(key); err != nil {
		return "", err
	}
	if _, err := o.objects.Client.StatObject(ctx, o.objects.Bucket, key, minio.StatObjectOptions{}); err != nil {
		return "", storage.ObjectError("stat", key, err)
	}
	u, err := o.objects.Client.PresignedGetObject(ctx, o.objects.Bucket, key, AudioLinkTTL, nil)
	if err != nil {
		return "", storage.ObjectError("link", key, err)
	}
	return u.String(), nil
}

func (o *tenantObjects) check(key string) error {
	if o.objects == nil {
		return fmt.Errorf("no object store: %w", channels.ErrFileUnavailable)
	}
	if !strings.HasPrefix(key, storage.TenantKey(o.tenant, "")) || strings.Contains(key, "..") {
		return fmt.Errorf("the file is not the tenant's")
	}
	return nil
}

// tenantObjects reads a tenant's stored files and nothing else.
type tenantObjects struct {
	objects *storage.Objects
	tenant  string
}

// Read implements the fax and CAP object readers.
func (o *tenantObjects) Read(ctx context.Context, key string) ([]byte, string, error) {
	if err := o.check(key); err != nil {
		return nil, "", err
	}
	return o.objects.Read(ctx, key, fax.MaxDocumentBytes)
}

// Destination is where a broadcast-style channel posts once per alert: a
// team-chat target, a social or neighborhood account, or the CAP endpoint.
type Destination struct {
	// ID is what a message's To names (target name, account id, "cap").
	ID   string
	Name string
}

// Destinations lists the tenant's destinations of a broadcast-style channel
// (teamChat, socialPostA/B, neighborhood, eas, mobileBroadcast).
func (r *Registry) Destinations(ctx context.Context, tenant string, ch channels.Channel) ([]Destination, error) {
	e, err := r.Store.Get(ctx, tenant, ch)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, fmt.Errorf("%s for tenant %s: %w", ch, tenant, ErrNotConfigured)
	}
	if err != nil {
		return nil, err
	}
	var out []Destination
	switch ch {
	case channels.TeamChat:
		for _, t := range e.Settings.Targets {
			out = append(out, Destination{ID: t.Name, Name: t.Name})
		}
	case channels.SocialPostA, channels.SocialPostB, channels.Neighborhood:
		for _, a := range e.Settings.Accounts {
			out = append(out, Destination{ID: a.ID, Name: a.Name})
		}
	default:
		out = append(out, Destination{ID: string(ch), Name: "CAP endpoint"})
	}
	return out, nil
}
