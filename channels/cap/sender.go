package cap

import (
	"cmp"
	"context"
	"crypto/sha1" //nolint:gosec // CAP 1.2 defines the resource digest as SHA-1.
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/tocsin/tocsin/channels"
	"github.com/tocsin/tocsin/channels/providerhttp"
	"github.com/tocsin/tocsin/internal/alertmsg"
)

// Options are the settings of an EAS or mobile-broadcast message (its
// channels.Message.Options).
type Options struct {
	// Input is the document's input; the message's Subject and Text fill
	// its headline and description when those are empty.
	Input Input
	// AudioKey is the object key of the EAS-encoded audio file, embedded
	// in the document as a resource (derefUri, size and SHA-1 digest).
	AudioKey string
	// AudioFile is the stored file's name as the alert gives it, for the
	// delivery's error when the file cannot be read.
	AudioFile string
	// AudioURL is a URL of the EAS-encoded audio, used when there is no key.
	AudioURL string
}

// Wireless emergency alert text limits, in characters: WEA 3.0 handsets
// show up to 360 (the CMAMlongtext parameter), older ones 90 (CMAMtext).
const (
	WEALongTextLimit = 360
	WEATextLimit     = 90
)

// WEAText cuts s to at most limit characters, at a word boundary when one
// is near, and collapses white space.
func WEAText(s string, limit int) string {
	return alertmsg.CutWords(strings.Join(strings.Fields(s), " "), limit)
}

// ObjectReader reads stored files.
type ObjectReader interface {
	Read(ctx context.Context, key string) ([]byte, string, error)
}

// Log records the CAP messages sent.
type Log interface {
	Record(ctx context.Context, tenant string, alertID *int64, ch channels.Channel, a *Alert, doc []byte, sendErr error) error
}

// Sender delivers CAP documents for EAS or mobile broadcast: each is
// POSTed to Endpoint's URL, one after the other, through Endpoint's
// Client (the provider registry's waits Timeout for an answer).
type Sender struct {
	providerhttp.Endpoint
	// Channel is Eas or MobileBroadcast.
	Channel channels.Channel
	// SenderID is the CAP sender when the input names none ("tocsin"
	// when not set).
	SenderID string
	Objects  ObjectReader
	Log      Log
}

// Timeout is how long a CAP endpoint may take to answer: CAP feeds may
// answer slowly.
const Timeout = 30 * time.Second

var notID = regexp.MustCompile(`[\s,<&]+`)

// Document builds the CAP document of msg for the Sender's channel.
func (s *Sender) Document(ctx context.Context, msg channels.Message) (*Alert, error) {
	// The message's input is shared with its copies: what is added here
	// goes to slices of the document's own.
	in := channels.OptionsOf[Options](msg).Input
	in.Parameters, in.Resources = slices.Clone(in.Parameters), slices.Clone(in.Resources)
	if in.Identifier == "" {
		in.Identifier = "tocsin-" + msg.Tenant + "-" + string(s.Channel) + "-" + notID.ReplaceAllString(msg.Key, "_")
	}
	in.Sender = cmp.Or(in.Sender, s.SenderID, "tocsin")
	if in.Sent.IsZero() {
		in.Sent = time.Now().Truncate(time.Second)
	}
	if in.Headline == "" {
		in.Headline = msg.Subject
	}
	if in.Description == "" {
		in.Description = msg.Text
	}
	switch s.Channel {
	case channels.MobileBroadcast:
		// The broadcast text is the message's own (the channel block's
		// text); the document's description when it has none.
		text := msg.Text
		if text == "" {
			text = in.Description
		}
		if text == "" {
			text = in.Headline
		}
		in.Parameters = append(in.Parameters,
			NamedValue{ValueName: "CMAMtext", Value: WEAText(text, WEATextLimit)},
			NamedValue{ValueName: "CMAMlongtext", Value: WEAText(text, WEALongTextLimit)})
	case channels.Eas:
		if in.EventCode == "" {
			in.EventCode = "CEM"
		}
		in.Parameters = append(in.Parameters, NamedValue{ValueName: "EAS-ORG", Value: "CIV"})
		res, err := s.audio(ctx, msg)
		if err != nil {
			return nil, err
		}
		if res != nil {
			in.Resources = append(in.Resources, *res)
		}
	}
	return Build(in)
}

func (s *Sender) audio(ctx context.Context, msg channels.Message) (*Resource, error) {
	o := channels.OptionsOf[Options](msg)
	if key := o.AudioKey; key != "" {
		if s.Objects == nil {
			return nil, fmt.Errorf("no object store to read the EAS audio from")
		}
		data, ct, err := s.Objects.Read(ctx, key)
		if err != nil {
			return nil, errors.New(channels.FileProblem("EAS audio file", o.AudioFile, err))
		}
		if ct == "" {
			ct = "audio/x-wav"
		}
		sum := sha1.Sum(data) //nolint:gosec // the digest CAP defines
		return &Resource{ResourceDesc: "EAS Broadcast Content", MimeType: ct, Size: int64(len(data)),
			DerefURI: base64.StdEncoding.EncodeToString(data), Digest: hex.EncodeToString(sum[:])}, nil
	}
	if u := o.AudioURL; u != "" {
		return &Resource{ResourceDesc: "EAS Broadcast Content", MimeType: "audio/x-wav", URI: u}, nil
	}
	return nil, nil
}

// Send implements channels.Sender: one document per message.
func (s *Sender) Send(ctx context.Context, msgs []channels.Message) ([]channels.Result, error) {
	out := make([]channels.Result, len(msgs))
	for i, m := range msgs {
		out[i] = s.send(ctx, m)
	}
	return out, nil
}

func (s *Sender) send(ctx context.Context, msg channels.Message) channels.Result {
	a, err := s.Document(ctx, msg)
	if err != nil {
		return providerhttp.Refused(msg.Key, err.Error())
	}
	doc, err := Marshal(a)
	if err != nil {
		return providerhttp.Refused(msg.Key, err.Error())
	}
	sendErr := s.Endpoint.Post(ctx, "", providerhttp.Request{Body: doc, ContentType: "application/xml",
		Header: http.Header{"Accept": {"application/xml, application/json"}}}, a.Identifier, nil)
	if s.Log != nil {
		if err := s.Log.Record(ctx, msg.Tenant, msg.Alert(), s.Channel, a, doc, sendErr); err != nil && sendErr == nil {
			sendErr = err
		}
	}
	return providerhttp.Answer(msg.Key, sendErr, channels.Sent, a.Identifier, "")
}
