package fax

import (
	"github.com/tocsin/tocsin/alert"
	"github.com/tocsin/tocsin/channels"
)

// Descriptor describes the fax channel: a fax per recipient, to the
// person's first fax number.
var Descriptor = channels.Descriptor{Channel: channels.Fax}

// FromAlert sets m's Options from the alert's fax block: the cover page
// and the stored document.
func FromAlert(r *alert.Renderer, files alert.FileKeys, m *channels.Message) {
	if f := r.Settings.Channels.Fax; f != nil {
		m.Options = Options{CoverPage: f.CoverPage, DocumentKey: files(alert.FileDocument, f.FileName), Document: f.FileName}
	}
}

// File is the stored document the alert's fax block sends.
func File(c *alert.Channels) (use, name string) {
	if c.Fax == nil {
		return "", ""
	}
	return alert.FileDocument, c.Fax.FileName
}
