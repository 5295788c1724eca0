// Package teamchat posts alerts to team-chat channels through their
// incoming webhooks, in Slack-style (blocks) or Teams-style (an Adaptive
// Card in a message) payloads. A message's To names one of the tenant's
// configured targets; the webhook URLs, which are secrets, stay in the
// tenant's provider settings and never travel with the message.
package teamchat

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/tocsin/tocsin/channels"
	"github.com/tocsin/tocsin/channels/providerhttp"
)

// Payload styles.
const (
	StyleSlack = "slack"
	StyleTeams = "teams"
)

// Options are the settings of a team-chat message (its
// channels.Message.Options).
type Options struct {
	// Urgent marks the post (a siren in the header or the attention colour).
	Urgent bool
}

// Target is one incoming webhook.
type Target struct {
	Name  string
	URL   string
	Style string
}

// SlackPayload is a Slack-style incoming-webhook body.
type SlackPayload struct {
	Text   string       `json:"text"`
	Blocks []SlackBlock `json:"blocks"`
}

// SlackBlock is one layout block.
type SlackBlock struct {
	Type string     `json:"type"`
	Text *SlackText `json:"text,omitempty"`
}

// SlackText is a block's text.
type SlackText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// TeamsPayload is a Teams-style webhook body: a message with one Adaptive Card.
type TeamsPayload struct {
	Type        string            `json:"type"`
	Attachments []TeamsAttachment `json:"attachments"`
}

// TeamsAttachment carries the card.
type TeamsAttachment struct {
	ContentType string       `json:"contentType"`
	Content     AdaptiveCard `json:"content"`
}

// AdaptiveCard is the card.
type AdaptiveCard struct {
	Schema  string      `json:"$schema"`
	Type    string      `json:"type"`
	Version string      `json:"version"`
	Body    []TextBlock `json:"body"`
}

// TextBlock is a card element.
type TextBlock struct {
	Type   string `json:"type"`
	Text   string `json:"text"`
	Wrap   bool   `json:"wrap"`
	Size   string `json:"size,omitempty"`
	Weight string `json:"weight,omitempty"`
	Color  string `json:"color,omitempty"`
}

// AdaptiveCardType is the attachment content type of an Adaptive Card.
const AdaptiveCardType = "application/vnd.microsoft.card.adaptive"

// Sender posts to team-chat webhooks: a message's To names one of Targets.
// Client sends the posts: the provider registry's, which follows the
// outbound URL policy.
type Sender struct {
	Targets []Target
	Client  *http.Client
}

// Payload builds the webhook body of msg in style.
func Payload(style string, msg channels.Message) (any, error) {
	title := strings.TrimSpace(msg.Subject)
	text := strings.TrimSpace(msg.Text)
	if text == "" && title == "" {
		return nil, fmt.Errorf("a team-chat post needs a subject or text")
	}
	urgent := channels.OptionsOf[Options](msg).Urgent
	switch style {
	case StyleSlack, "":
		p := SlackPayload{Text: strings.TrimSpace(title + "\n" + text)}
		if title != "" {
			h := title
			if urgent {
				h = "🚨 " + h
			}
			p.Blocks = append(p.Blocks, SlackBlock{Type: "header", Text: &SlackText{Type: "plain_text", Text: h}})
		}
		if text != "" {
			p.Blocks = append(p.Blocks, SlackBlock{Type: "section", Text: &SlackText{Type: "mrkdwn", Text: text}})
		}
		return p, nil
	case StyleTeams:
		card := AdaptiveCard{Schema: "http://adaptivecards.io/schemas/adaptive-card.json", Type: "AdaptiveCard", Version: "1.4"}
		if title != "" {
			tb := TextBlock{Type: "TextBlock", Text: title, Wrap: true, Size: "Large", Weight: "Bolder"}
			if urgent {
				tb.Color = "Attention"
			}
			card.Body = append(card.Body, tb)
		}
		if text != "" {
			card.Body = append(card.Body, TextBlock{Type: "TextBlock", Text: text, Wrap: true})
		}
		return TeamsPayload{Type: "message", Attachments: []TeamsAttachment{{ContentType: AdaptiveCardType, Content: card}}}, nil
	}
	return nil, fmt.Errorf("unknown team-chat style %q", style)
}

// Send implements channels.Sender.
func (s *Sender) Send(ctx context.Context, msgs []channels.Message) ([]channels.Result, error) {
	return channels.SendEach(ctx, msgs, 8, s.post), nil
}

func (s *Sender) post(ctx context.Context, msg channels.Message) channels.Result {
	t, ok := channels.Find(s.Targets, msg.To, func(t Target) string { return t.Name })
	if !ok {
		return providerhttp.Refused(msg.Key, fmt.Sprintf("no team-chat target named %q", msg.To))
	}
	p, err := Payload(t.Style, msg)
	if err != nil {
		return providerhttp.Refused(msg.Key, err.Error())
	}
	// The webhook URL is the credential: no token, no idempotency key.
	err = providerhttp.Endpoint{URL: t.URL, Client: s.Client}.Post(ctx, "", providerhttp.Request{JSON: p}, "", nil)
	return providerhttp.Answer(msg.Key, err, channels.Delivered, t.Name, "")
}
