package voice

import (
	"github.com/tocsin/tocsin/alert"
	"github.com/tocsin/tocsin/channels"
)

// Descriptor describes the voice channel: a call per recipient.
var Descriptor = channels.Descriptor{Channel: channels.Voice, Calls: true}

// FromAlert sets m's Options from the alert's voice block: repeat,
// language, answering-machine behaviour, press-1 confirmation, redials and
// the stored audio file.
func FromAlert(r *alert.Renderer, files alert.FileKeys, m *channels.Message) {
	v := r.Settings.Channels.Voice
	if v == nil {
		return
	}
	o := Played(v.Repeat, v.AudioFileName, files)
	o.Language, o.AnsweringMachine, o.Confirm = v.Language, v.AnsweringMachine, v.PressOneToConfirm
	o.MaxAttempts, o.RetryIntervalSeconds = v.CallAttempts, v.RedialSeconds
	m.Options = o
}

// Played are the options of what a call plays: how often and the stored
// audio file audioFile names. ETN calls share them.
func Played(repeat int, audioFile string, files alert.FileKeys) Options {
	return Options{Repeat: repeat, AudioKey: files(alert.FileVoice, audioFile), AudioFile: audioFile}
}

// File is the stored audio file the alert's voice block plays.
func File(c *alert.Channels) (use, name string) {
	if c.Voice == nil {
		return "", ""
	}
	return alert.FileVoice, c.Voice.AudioFileName
}
