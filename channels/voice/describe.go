package voice

import (
	"cmp"

	"github.com/tocsin/tocsin/alert"
	"github.com/tocsin/tocsin/channels"
)

// Descriptor describes the voice channel: a call per recipient.
var Descriptor = channels.Descriptor{Channel: channels.Voice, Calls: true}

// FromAlert sets m's Options from the alert's voice block: repeat,
// language (the message's when the block gives none), answering-machine
// behaviour, press-1 confirmation, redials, the stored audio file and the
// caller id (the block's, else the sender's).
func FromAlert(r *alert.Renderer, files alert.FileKeys, m *channels.Message) {
	v := r.Settings.Channels.Voice
	if v == nil {
		v = &alert.VoiceChannel{}
	}
	o := Played(r.Settings, v.Repeat, v.AudioFileName, v.CallerID, files)
	o.Language = cmp.Or(v.Language, o.Language)
	o.AnsweringMachine, o.Confirm = v.AnsweringMachine, v.PressOneToConfirm
	o.MaxAttempts, o.RetryIntervalSeconds = v.CallAttempts, v.RedialSeconds
	m.Options = o
}

// Played are the options of what a call of the alert s plays and shows:
// how often, the stored audio file audioFile names, the message's language
// and the caller id (callerID, the block's, else the sender's). ETN calls
// share them.
func Played(s *alert.Settings, repeat int, audioFile, callerID string, files alert.FileKeys) Options {
	return Options{Repeat: repeat, AudioKey: files(alert.FileVoice, audioFile), AudioFile: audioFile,
		Language: s.Message.Language, CallerID: s.CallerID(callerID)}
}

// File is the stored audio file the alert's voice block plays.
func File(c *alert.Channels) (use, name string) {
	if c.Voice == nil {
		return "", ""
	}
	return alert.FileVoice, c.Voice.AudioFileName
}
