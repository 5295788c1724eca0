package voice

import (
	"strconv"

	"github.com/tocsin/tocsin/alert"
	"github.com/tocsin/tocsin/channels"
)

// Descriptor describes the voice channel: a call per recipient.
var Descriptor = channels.Descriptor{Channel: channels.Voice, Addressing: channels.PerRecipient, Addresses: channels.RecipientVoicePhone, Calls: true}

// Options adds the alert's voice block to m: repeat, language,
// answering-machine behaviour, press-1 confirmation, redials and the
// stored audio file.
func Options(r *alert.Renderer, files alert.FileKeys, m *channels.Message) {
	v := r.Settings.Channels.Voice
	if v == nil {
		return
	}
	md := m.Metadata
	Played(md, v.Repeat, v.AudioFileName, files)
	if v.Language != "" {
		md[MetaLanguage] = v.Language
	}
	if v.AnsweringMachine != "" {
		md[MetaAnsweringMachine] = v.AnsweringMachine
	}
	if v.PressOneToConfirm {
		md[MetaConfirm] = "true"
	}
	if v.CallAttempts > 0 {
		md[MetaMaxAttempts] = strconv.Itoa(v.CallAttempts)
	}
	if v.RedialSeconds > 0 {
		md[MetaRetryIntervalSeconds] = strconv.Itoa(v.RedialSeconds)
	}
}

// Played adds what a call plays to md: how often (when repeat is set) and
// the stored audio file (when audioFile names one). ETN calls share it.
func Played(md map[string]string, repeat int, audioFile string, files alert.FileKeys) {
	if repeat > 0 {
		md[MetaRepeat] = strconv.Itoa(repeat)
	}
	if k := files(alert.FileVoice, audioFile); k != "" {
		md[MetaAudioKey] = k
	}
}

// File is the stored audio file the alert's voice block plays.
func File(c *alert.Channels) (use, name string) {
	if c.Voice == nil {
		return "", ""
	}
	return alert.FileVoice, c.Voice.AudioFileName
}
