// Package fax sends faxes through an HTTP fax provider: a stored document
// (read from the object store) or the rendered message, as a multipart
// upload with the destination number.
package fax

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"html"
	"mime/multipart"
	"net/textproto"
	"path"
	"strings"

	"github.com/tocsin/tocsin/channels"
	"github.com/tocsin/tocsin/channels/providerhttp"
)

// Options are the settings of a fax message (its channels.Message.Options).
type Options struct {
	// DocumentKey is the object key of a stored document to fax instead
	// of the rendered message.
	DocumentKey string
	// Document is the stored document's name as the alert gives it, for
	// the delivery's error when it cannot be read.
	Document string
	// CoverPage asks the provider for a cover page.
	CoverPage bool
}

// Accepted document types.
var Accepted = []string{"application/pdf", "image/tiff", "text/plain", "text/html"}

// MaxDocumentBytes bounds one faxed document.
const MaxDocumentBytes = 20 << 20

// ObjectReader reads stored files.
type ObjectReader interface {
	Read(ctx context.Context, key string) ([]byte, string, error)
}

// Response is the provider's answer.
type Response struct {
	FaxID  string `json:"faxId"`
	Status string `json:"status"`
}

// Sender sends faxes through the provider's API at Endpoint: each is
// POSTed to /faxes under URL (providerhttp.JoinPath), from the number From, with Concurrency faxes of
// a batch in flight (DefaultConcurrency when not set).
type Sender struct {
	providerhttp.Endpoint
	From    string
	Objects ObjectReader
}

// DefaultConcurrency is how many faxes a batch has in flight when the
// Endpoint does not say.
const DefaultConcurrency = 8

// Document returns the file faxed for msg: the stored document when the
// message names one, else the message rendered as HTML (when it has HTML)
// or plain text.
func (s *Sender) Document(ctx context.Context, msg channels.Message) (name, contentType string, data []byte, err error) {
	if o := channels.OptionsOf[Options](msg); o.DocumentKey != "" {
		key := o.DocumentKey
		if s.Objects == nil {
			return "", "", nil, fmt.Errorf("no object store to read the document from")
		}
		data, ct, err := s.Objects.Read(ctx, key)
		if err != nil {
			return "", "", nil, errors.New(channels.FileProblem("document", o.Document, err))
		}
		ct, _, _ = strings.Cut(ct, ";")
		if !accepted(ct) {
			return "", "", nil, fmt.Errorf("a %s document cannot be faxed (accepted: %s)", ct, strings.Join(Accepted, ", "))
		}
		if len(data) > MaxDocumentBytes {
			return "", "", nil, fmt.Errorf("the document is larger than %d bytes", MaxDocumentBytes)
		}
		return path.Base(key), ct, data, nil
	}
	if msg.HTML != "" {
		doc := "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>" + html.EscapeString(msg.Subject) +
			"</title></head><body><h1>" + html.EscapeString(msg.Subject) + "</h1>" + msg.HTML + "</body></html>"
		return "message.html", "text/html", []byte(doc), nil
	}
	if strings.TrimSpace(msg.Text) == "" {
		return "", "", nil, fmt.Errorf("a fax needs a document or a message")
	}
	var b strings.Builder
	if msg.Subject != "" {
		b.WriteString(msg.Subject + "\n" + strings.Repeat("=", min(len(msg.Subject), 72)) + "\n\n")
	}
	b.WriteString(msg.Text + "\n")
	return "message.txt", "text/plain", []byte(b.String()), nil
}

func accepted(ct string) bool {
	for _, a := range Accepted {
		if ct == a {
			return true
		}
	}
	return false
}

// Send implements channels.Sender.
func (s *Sender) Send(ctx context.Context, msgs []channels.Message) ([]channels.Result, error) {
	return channels.SendEach(ctx, msgs, s.Limit(DefaultConcurrency), s.send), nil
}

func (s *Sender) send(ctx context.Context, msg channels.Message) channels.Result {
	name, ct, data, err := s.Document(ctx, msg)
	if err != nil {
		return providerhttp.Refused(msg.Key, err.Error())
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	_ = mw.WriteField("to", msg.To)
	_ = mw.WriteField("from", s.From)
	_ = mw.WriteField("reference", msg.Key)
	if channels.OptionsOf[Options](msg).CoverPage {
		_ = mw.WriteField("coverPage", "true")
		_ = mw.WriteField("subject", msg.Subject)
	}
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="document"; filename=%q`, name))
	h.Set("Content-Type", ct)
	pw, _ := mw.CreatePart(h)
	_, _ = pw.Write(data)
	_ = mw.Close()
	var fr Response
	err = s.Post(ctx, "/faxes", providerhttp.Request{Body: body.Bytes(), ContentType: mw.FormDataContentType()}, msg.Key, &fr)
	return providerhttp.Answer(msg.Key, err, channels.Sent, fr.FaxID, "the provider returned no fax id")
}
