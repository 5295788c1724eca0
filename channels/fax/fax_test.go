package fax_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/tocsin/tocsin/channels"
	"github.com/tocsin/tocsin/channels/fax"
	"github.com/tocsin/tocsin/channels/fax/faxtest"
	"github.com/tocsin/tocsin/channels/providerhttp"
)

type objects map[string]struct {
	ct   string
	data []byte
}

func (o objects) Read(_ context.Context, key string) ([]byte, string, error) {
	f, ok := o[key]
	if !ok {
		return nil, "", errors.New("no such object")
	}
	return f.data, f.ct, nil
}

func TestFaxDocumentsEndToEnd(t *testing.T) {
	srv := faxtest.New(t, "fax-token")
	store := objects{
		"tenants/1/evac.pdf": {"application/pdf", []byte("%PDF-1.4 evacuation map")},
		"tenants/1/logo.png": {"image/png", []byte("png")},
	}
	snd := &fax.Sender{Endpoint: providerhttp.Endpoint{URL: srv.URL, Token: "fax-token", Client: providerhttp.NewClient(0, 0)}, From: "+15550001111", Objects: store}
	msgs := []channels.Message{
		{Key: "f1", To: "+15550000001", Subject: "Boil water", Text: "Boil tap water before drinking."},
		{Key: "f2", To: "+15550000002", Subject: "Evacuation", Text: "See map", Options: fax.Options{DocumentKey: "tenants/1/evac.pdf", CoverPage: true}},
		{Key: "f3", To: "+15550000003", Subject: "Notice", HTML: "<p>Roads <b>closed</b></p>"},
		{Key: "f4", To: "+15550000004", Options: fax.Options{DocumentKey: "tenants/1/logo.png"}},
		{Key: "f5", To: "+15550000005", Options: fax.Options{DocumentKey: "tenants/1/missing.pdf"}},
		{Key: "f6", To: "not-a-number", Text: "x"},
	}
	res, err := snd.Send(context.Background(), msgs)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res[:3] {
		if r.Outcome != channels.Sent || r.ProviderMessageID == "" {
			t.Fatalf("result %d %+v", i, r)
		}
	}
	for i, r := range res[3:] {
		if r.Outcome != channels.Failed || !r.Permanent {
			t.Fatalf("result %d %+v", i+3, r)
		}
	}
	faxes := map[string]faxtest.Fax{}
	for _, f := range srv.Faxes() {
		faxes[f.Reference] = f
	}
	if f := faxes["f1"]; f.ContentType != "text/plain" || !strings.Contains(string(f.Document), "Boil tap water") || f.From != "+15550001111" {
		t.Fatalf("rendered text fax %+v", f)
	}
	if f := faxes["f2"]; f.ContentType != "application/pdf" || string(f.Document) != "%PDF-1.4 evacuation map" || f.Filename != "evac.pdf" || !f.CoverPage {
		t.Fatalf("stored document fax %+v", f)
	}
	if f := faxes["f3"]; f.ContentType != "text/html" || !strings.Contains(string(f.Document), "<b>closed</b>") {
		t.Fatalf("rendered HTML fax %+v", f)
	}
	if p := srv.Problems(); len(p) != 1 || !strings.Contains(p[0], "E.164") {
		t.Fatalf("problems %v", p)
	}
}
