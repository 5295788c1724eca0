package alerting

import (
	"github.com/tocsin/tocsin/alert"
	"github.com/tocsin/tocsin/internal/names"
)

// storedFileNames points at the names of stored files the settings give:
// the attachments, then the files of the channel blocks that have one (the
// blocks catalog.NamedFiles reads, TestStoredFileNamesCoverTheCatalog).
func storedFileNames(s *alert.Settings) []*string {
	var out []*string
	if s.Content != nil {
		for i := range s.Content.Attachments {
			out = append(out, &s.Content.Attachments[i])
		}
	}
	if c := s.Channels; c != nil {
		if c.Voice != nil {
			out = append(out, &c.Voice.AudioFileName)
		}
		if c.Etn != nil {
			out = append(out, &c.Etn.AudioFileName)
		}
		if c.Fax != nil {
			out = append(out, &c.Fax.FileName)
		}
		if c.Eas != nil {
			out = append(out, &c.Eas.AudioFileName)
		}
	}
	return out
}

// normalFileNames puts the names of stored files the settings give in the
// form the files operations store names in (names.Normal, NFC), so
// that the alert is checked, stored and delivered with the file's name.
func normalFileNames(s *alert.Settings) {
	for _, n := range storedFileNames(s) {
		*n = names.Normal(*n)
	}
}
