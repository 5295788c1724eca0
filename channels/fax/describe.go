package fax

import (
	"github.com/tocsin/tocsin/alert"
	"github.com/tocsin/tocsin/channels"
)

// Descriptor describes the fax channel: a fax per recipient, to the
// person's first fax number.
var Descriptor = channels.Descriptor{Channel: channels.Fax, Addressing: channels.PerRecipient, Addresses: channels.FaxNumber}

// Options adds the alert's fax block to m: the cover page and the stored
// document.
func Options(r *alert.Renderer, files alert.FileKeys, m *channels.Message) {
	f := r.Settings.Channels.Fax
	if f == nil {
		return
	}
	if f.CoverPage {
		m.Metadata[MetaCoverPage] = "true"
	}
	if k := files(alert.FileDocument, f.FileName); k != "" {
		m.Metadata[MetaDocumentKey] = k
	}
}

// File is the stored document the alert's fax block sends.
func File(c *alert.Channels) (use, name string) {
	if c.Fax == nil {
		return "", ""
	}
	return alert.FileDocument, c.Fax.FileName
}
