// Package catalog is the one table of every channel's description: how it
// is addressed and batched (the channels.Descriptor its package exports),
// which of an alert's settings its messages carry and which of the
// tenant's destinations an alert selects.
package catalog

import (
	"github.com/tocsin/tocsin/alert"
	"github.com/tocsin/tocsin/channels"
	"github.com/tocsin/tocsin/channels/cap"
	"github.com/tocsin/tocsin/channels/email"
	"github.com/tocsin/tocsin/channels/etn"
	"github.com/tocsin/tocsin/channels/fax"
	"github.com/tocsin/tocsin/channels/neighborhood"
	"github.com/tocsin/tocsin/channels/push"
	"github.com/tocsin/tocsin/channels/sms"
	"github.com/tocsin/tocsin/channels/social"
	"github.com/tocsin/tocsin/channels/teamchat"
	"github.com/tocsin/tocsin/channels/voice"
)

// Entry describes one channel.
type Entry struct {
	channels.Descriptor
	// Options sets a message's options from the channel block (nil: none).
	Options alert.Options
	// Select names the destinations a PerDestination channel's block asks
	// for (nil: all of them).
	Select alert.Selection
	// File names the stored file the channel's block uses (nil: none);
	// FileField is the block's field that names it.
	File      alert.StoredFile
	FileField string
}

// entries are every channel's entry in a fixed order; table indexes them.
// Both are built once and only read.
var entries = []Entry{
	{Descriptor: email.Descriptor, Options: email.FromAlert},
	{Descriptor: sms.Descriptor, Options: sms.FromAlert},
	{Descriptor: voice.Descriptor, Options: voice.FromAlert, File: voice.File, FileField: "audioFileName"},
	{Descriptor: etn.Descriptor, Options: etn.FromAlert, File: etn.File, FileField: "audioFileName"},
	{Descriptor: push.Descriptor, Options: push.FromAlert},
	{Descriptor: push.MyAlertsDescriptor, Options: push.FromAlert},
	{Descriptor: fax.Descriptor, Options: fax.FromAlert, File: fax.File, FileField: "fileName"},
	{Descriptor: cap.EasDescriptor, Options: cap.FromAlert, File: cap.EasFile, FileField: "audioFileName"},
	{Descriptor: cap.BroadcastDescriptor, Options: cap.FromAlert},
	{Descriptor: teamchat.Descriptor, Options: teamchat.FromAlert, Select: teamchat.Select},
	{Descriptor: social.DescriptorA, Options: social.FromAlert, Select: social.SelectA},
	{Descriptor: social.DescriptorB, Options: social.FromAlert, Select: social.SelectB},
	{Descriptor: neighborhood.Descriptor, Options: neighborhood.FromAlert, Select: neighborhood.Select},
}

var table = index(entries)

func index(entries []Entry) map[channels.Channel]Entry {
	out := make(map[channels.Channel]Entry, len(entries))
	for _, e := range entries {
		out[e.Channel] = e
	}
	return out
}

// For returns the entry of ch; a channel the table does not know is
// addressed PerRecipient with no address (its recipients fail with "no
// address") and no options.
func For(ch channels.Channel) Entry {
	if e, ok := table[ch]; ok {
		return e
	}
	return Entry{Descriptor: channels.Descriptor{Channel: ch}}
}

// Apply sets the options of m's channel, read from the alert r renders,
// on m. An alert without channel blocks sets none.
func (e Entry) Apply(r *alert.Renderer, files alert.FileKeys, m *channels.Message) {
	if r.Settings.Channels == nil || e.Options == nil {
		return
	}
	e.Options(r, files, m)
}

// NamedFile is a stored file an alert's channel block names.
type NamedFile struct {
	// Field is the field that names it, under the alert's settings
	// ("channels.voice.audioFileName").
	Field string
	// Use is the version the channel uses (alert.FileVoice, FileEas or
	// FileDocument), Name the file's name as the block gives it.
	Use, Name string
}

// NamedFiles lists the stored files the alert's channel blocks c name, in
// the table's order; a block names its file whether it is enabled or not.
func NamedFiles(c *alert.Channels) []NamedFile {
	if c == nil {
		return nil
	}
	var out []NamedFile
	for _, e := range entries {
		if e.File == nil {
			continue
		}
		if use, name := e.File(c); name != "" {
			out = append(out, NamedFile{Field: "channels." + string(e.Channel) + "." + e.FileField, Use: use, Name: name})
		}
	}
	return out
}
