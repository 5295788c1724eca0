// Package social posts alerts to the tenant's accounts on two social
// networks through their HTTP APIs: network A, a microblog (short posts of
// at most 280 characters, POST /2/posts), and network B, a page feed (POST
// /{account}/feed). A message's To names one of the tenant's configured
// accounts, whose access token stays in the provider settings. A post's
// text ends with the alert's link (network A; network B shows it beside
// the text) and hashtags, kept whole when the text is cut to the network's
// limit.
package social

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/tocsin/tocsin/channels"
	"github.com/tocsin/tocsin/channels/providerhttp"
	"github.com/tocsin/tocsin/internal/alertmsg"
)

// Networks.
const (
	NetworkA = "A"
	NetworkB = "B"
)

// Post length limits in characters.
const (
	LimitA = 280
	LimitB = 63206
)

// Account is a tenant's account on a network.
type Account struct {
	ID, Name, Token string
}

// PostA is network A's request body; AnswerA its answer.
type PostA struct {
	Text string `json:"text"`
}

// AnswerA is network A's answer to a post.
type AnswerA struct {
	Data struct {
		ID   string `json:"id"`
		Text string `json:"text"`
	} `json:"data"`
}

// PostB is network B's request body.
type PostB struct {
	Message string `json:"message"`
	Link    string `json:"link,omitempty"`
}

// AnswerB is network B's answer.
type AnswerB struct {
	ID string `json:"id"`
}

// Options are the settings of a social post (its channels.Message.Options).
type Options struct {
	// Link is the alert's link: network B shows it with the post, network
	// A's text ends with it.
	Link string
	// Hashtags end the post's text, each with its "#".
	Hashtags []string
}

// Tail is what ends a post's text on network: the link on network A, then
// the hashtags, kept whole when the text is cut.
func (o Options) Tail(network string) string {
	var words []string
	if network == NetworkA && o.Link != "" {
		words = append(words, o.Link)
	}
	return strings.Join(append(words, o.Hashtags...), " ")
}

// Post is the text of msg's post on network: Text within the network's
// limit, ending with Tail.
func (o Options) Post(network string, msg channels.Message) string {
	limit := LimitA
	if network == NetworkB {
		limit = LimitB
	}
	return Text(msg, limit, o.Tail(network))
}

// NetworkOf is the network of channel ch (socialPostA or socialPostB).
func NetworkOf(ch channels.Channel) string {
	if ch == channels.SocialPostB {
		return NetworkB
	}
	return NetworkA
}

// MaxTailA is the most characters of network A's posts an alert's link and
// hashtags may take (Tail), so that half the post is left for its text.
const MaxTailA = LimitA / 2

// Sender posts to one network through its API at Endpoint, with
// Concurrency posts of a batch in flight (DefaultConcurrency when not
// set); a post carries its account's token instead of Endpoint.Token.
type Sender struct {
	providerhttp.Endpoint
	// Network is NetworkA or NetworkB.
	Network  string
	Accounts []Account
}

// DefaultConcurrency is how many posts are in flight when the Endpoint
// does not say.
const DefaultConcurrency = 4

// Text is the text posted for msg on a network whose posts take at most
// limit characters: its subject and text, cut at a word boundary to leave
// room for tail (Options.Tail), which follows whole.
func Text(msg channels.Message, limit int, tail string) string {
	t := strings.TrimSpace(msg.Text)
	if s := strings.TrimSpace(msg.Subject); s != "" && !strings.HasPrefix(t, s) {
		t = s + ": " + t
	}
	room := limit - utf8.RuneCountInString(tail) - 1
	if tail == "" || room < 1 {
		// No tail, or one that cannot be kept whole (submission refuses
		// those): the whole is cut.
		return alertmsg.CutWords(t+" "+tail, limit)
	}
	return strings.TrimSpace(alertmsg.CutWords(t, room) + " " + tail)
}

// Send implements channels.Sender.
func (s *Sender) Send(ctx context.Context, msgs []channels.Message) ([]channels.Result, error) {
	return channels.SendEach(ctx, msgs, s.Limit(DefaultConcurrency), s.post), nil
}

func (s *Sender) post(ctx context.Context, msg channels.Message) channels.Result {
	acct, ok := channels.Find(s.Accounts, msg.To, func(a Account) string { return a.ID })
	if !ok {
		return providerhttp.Refused(msg.Key, fmt.Sprintf("no %s account %q", s.Network, msg.To))
	}
	api := s.As(acct.Token)
	o := channels.OptionsOf[Options](msg)
	var id string
	var err error
	switch s.Network {
	case NetworkA:
		var a AnswerA
		err = api.Post(ctx, "/2/posts", providerhttp.Request{JSON: PostA{Text: o.Post(NetworkA, msg)}}, msg.Key, &a)
		id = a.Data.ID
	case NetworkB:
		var b AnswerB
		post := PostB{Message: o.Post(NetworkB, msg), Link: o.Link}
		err = api.Post(ctx, "/"+url.PathEscape(acct.ID)+"/feed", providerhttp.Request{JSON: post}, msg.Key, &b)
		id = b.ID
	default:
		err = fmt.Errorf("unknown network %q", s.Network)
	}
	return providerhttp.Answer(msg.Key, err, channels.Delivered, id, "the network returned no post id")
}
