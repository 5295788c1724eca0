package model

import "time"

// EmailChannel delivers the alert by email over SMTP to each recipient's
// first email address.
type EmailChannel struct {
	Enabled bool   `json:"enabled" doc:"Deliver on this channel."`
	Subject string `json:"subject,omitempty" maxLength:"200" doc:"Subject for email; MessageSettings.subject when empty. Variables such as {{firstName}} are filled per recipient." example:"Campus closed today, {{firstName}}"`
	Body    string `json:"body,omitempty" maxLength:"100000" doc:"Plain-text body for email; MessageSettings.body when empty. Variables are filled per recipient."`
	HTML    string `json:"html,omitempty" maxLength:"200000" doc:"Optional HTML body sent beside the text body. Variables are filled per recipient (HTML-escaped)."`
	ReplyTo string `json:"replyTo,omitempty" format:"email" maxLength:"254" doc:"Where replies to this channel's emails go (Reply-To); SenderSettings.replyTo when empty. An RFC 5322 address alone, as a recipient's: a display name, comment or second address is a 400 naming this field; taken in lower case." example:"safety@example.com"`
	// IncludeAttachments defaults to true when absent.
	IncludeAttachments *bool `json:"includeAttachments,omitempty" doc:"Attach the alert's attachments (default true)."`
}

// TextMessageChannel delivers the alert as a text message (SMS) to each
// recipient's first phone number that can receive texts.
type TextMessageChannel struct {
	Enabled bool   `json:"enabled" doc:"Deliver on this channel."`
	Body    string `json:"body,omitempty" maxLength:"1600" doc:"Text for SMS; MessageSettings.body when empty. The text as sent (the alert's own variables filled, the conference line and the response link appended, the link being a short link) must fit in maxSegments segments (153 GSM-7 characters or 67 UCS-2 characters each when split; 160 or 70 in a single segment); each recipient's own values ({{firstName}}, {{custom.<field>}}, ...) count as empty, a CustomField variable as its fallback. A recipient whose values make the text longer gets it shortened to fit (see maxSegments)." example:"Campus closed today. Details: {{responseLink}}"`
	// MaxSegments defaults to 10.
	MaxSegments  int   `json:"maxSegments,omitempty" minimum:"1" maximum:"10" doc:"Largest number of SMS segments the text may take (default 10), measured as body says; a longer text is refused at submission. Delivery holds every recipient's text to it: one that a recipient's values make longer is shortened, its body cut after a whole character and ended with \"...\", the conference line and the response link kept whole (a link the body shows follows the \"...\"); a GSM-7 text stays GSM-7." example:"3"`
	AllowUnicode *bool `json:"allowUnicode,omitempty" doc:"Allow characters outside the GSM-7 alphabet, which switches the message to UCS-2 (default true). When false a text whose template or alert values need UCS-2 is refused at submission, and each recipient's own values ({{firstName}}, {{fullName}}, {{custom.<field>}}, ...) are made GSM-7 in the text sent: a character outside the GSM-7 alphabet becomes its base letter when it has one (\"ë\" → \"e\", \"Ŝ\" → \"S\") and \"?\" otherwise (an emoji is one \"?\"), before the text is fitted to maxSegments."`
}

// VoiceChannel calls each recipient's first phone number that can take calls.
type VoiceChannel struct {
	Enabled           bool   `json:"enabled" doc:"Deliver on this channel."`
	Message           string `json:"message,omitempty" maxLength:"5000" doc:"Text read by text-to-speech; MessageSettings.body when empty."`
	AudioFileName     string `json:"audioFileName,omitempty" maxLength:"512" doc:"A stored audio file played instead of text-to-speech (its voice version when it has one), by its full name (folder/name) or by its name alone when only one file has it. A name that matches no file or several, or an image, is a 400 naming this field." example:"sirens/tornado.wav"`
	Repeat            int    `json:"repeat,omitempty" minimum:"1" maximum:"5" doc:"How many times the message is played (default 1)."`
	Language          string `json:"language,omitempty" maxLength:"16" doc:"Text-to-speech language (BCP 47); MessageSettings.language when empty, else en-US." example:"en-US"`
	AnsweringMachine  string `json:"answeringMachine,omitempty" enum:"LeaveMessage,HangUp" doc:"What to do when an answering machine picks up (default LeaveMessage)."`
	PressOneToConfirm bool   `json:"pressOneToConfirm,omitempty" doc:"Ask the callee to press 1 to confirm; a confirmation counts like a confirmation link."`
	CallAttempts      int    `json:"callAttempts,omitempty" minimum:"1" maximum:"10" doc:"Calls made to a number that is busy or does not answer, the first included (default 1)." example:"3"`
	RedialSeconds     int    `json:"redialSeconds,omitempty" minimum:"30" maximum:"3600" doc:"Seconds between such calls (default 300)." example:"120"`
	CallerID          string `json:"callerId,omitempty" pattern:"^\\+[1-9][0-9]{6,14}$" doc:"E.164 number the calls show, passed to the voice provider as each call request's from; SenderSettings.callerId when empty, else the provider's configured from." example:"+15550100"`
}

// EtnChannel calls the phone numbers inside the alert's geographic areas
// (emergency telephone notification).
type EtnChannel struct {
	Enabled       bool   `json:"enabled" doc:"Deliver on this channel."`
	Message       string `json:"message,omitempty" maxLength:"5000" doc:"Text read by text-to-speech; MessageSettings.body when empty."`
	AudioFileName string `json:"audioFileName,omitempty" maxLength:"512" doc:"A stored audio file played instead of text-to-speech (its voice version when it has one), by its full name (folder/name) or by its name alone when only one file has it. A name that matches no file or several, or an image, is a 400 naming this field." example:"sirens/tornado.wav"`
	Repeat        int    `json:"repeat,omitempty" minimum:"1" maximum:"5" doc:"How many times the message is played (default 1)."`
	CallerID      string `json:"callerId,omitempty" pattern:"^\\+[1-9][0-9]{6,14}$" doc:"E.164 number the calls show, passed to the ETN provider (the etn channel's provider settings) as each call request's from; SenderSettings.callerId when empty, else the ETN provider's configured from." example:"+15550100"`
	// AddressPointLists adds imported address points inside the areas.
	AddressPointLists []string `json:"addressPointLists,omitempty" maxItems:"20" doc:"Imported ETN address-point lists whose points inside the alert's areas are called too. When the alert has areas (recipients.areas), ETN calls every number inside them (contacts' callable phones at their locations and these points) instead of the recipients' phones. A name that is no list of the tenant (importEtnAddressPoints imports one) is a 400 naming it, enabled block or not. Names are compared in NFC, so either spelling of a list's name (é as one character, or e and a combining accent) names it." example:"[\"wells\"]"`
}

// PushChannel sends a push notification to each recipient's registered push devices.
type PushChannel struct {
	Enabled  bool   `json:"enabled" doc:"Deliver on this channel."`
	Title    string `json:"title,omitempty" maxLength:"200" doc:"Notification title; MessageSettings.subject when empty."`
	Body     string `json:"body,omitempty" maxLength:"4000" doc:"Notification text; MessageSettings.body when empty."`
	LoudTone bool   `json:"loudTone,omitempty" doc:"Play the loud tone even when the device is silenced (Emergency priority only)."`
}

// MyAlertsAppChannel sends the alert to the tenant's alerts app on each
// recipient's registered app devices.
type MyAlertsAppChannel struct {
	Enabled  bool   `json:"enabled" doc:"Deliver on this channel."`
	Title    string `json:"title,omitempty" maxLength:"200" doc:"Title in the app; MessageSettings.subject when empty."`
	Body     string `json:"body,omitempty" maxLength:"20000" doc:"Text in the app; MessageSettings.body when empty."`
	LoudTone bool   `json:"loudTone,omitempty" doc:"Play the loud tone even when the device is silenced (Emergency priority only)."`
}

// FaxChannel faxes a stored document or the rendered message.
type FaxChannel struct {
	Enabled   bool   `json:"enabled" doc:"Deliver on this channel."`
	FileName  string `json:"fileName,omitempty" maxLength:"512" doc:"A stored document to fax, named as audioFileName is; the rendered message when empty. It must be a PDF, TIFF, plain text or HTML file, else a 400 naming this field; the files operations store images and audio only, so for now only the rendered message can be faxed."`
	CoverPage bool   `json:"coverPage,omitempty" doc:"Send a cover page with the subject."`
}

// EasChannel broadcasts the alert through the emergency alert system as a CAP 1.2 message.
type EasChannel struct {
	Enabled         bool     `json:"enabled" doc:"Deliver on this channel."`
	EventCode       string   `json:"eventCode,omitempty" pattern:"^[A-Z]{3}$" doc:"Three-letter EAS event code." example:"CEM"`
	AudioFileName   string   `json:"audioFileName,omitempty" maxLength:"512" doc:"A stored audio file with an EAS version (uploaded with EncodeForEasAudio), named as the voice block's audioFileName is, embedded in the CAP document. A name that matches no file or several, an image, or a file without an EAS version is a 400 naming this field." example:"sirens/tornado.wav"`
	DurationMinutes int      `json:"durationMinutes,omitempty" minimum:"15" maximum:"1440" doc:"How long the broadcast is valid: the CAP document's expires is its sent time plus this many minutes (default 60)."`
	SameCodes       []string `json:"sameCodes,omitempty" maxItems:"31" pattern:"^[0-9]{6}$" doc:"SAME location codes (6 digits each), sent as geocodes of one more CAP area named after settings.location (else Alert area)." example:"[\"017031\"]"`
}

// MobileBroadcastChannel sends a wireless emergency alert to phones in the alert's areas.
type MobileBroadcastChannel struct {
	Enabled  bool   `json:"enabled" doc:"Deliver on this channel."`
	Text     string `json:"text,omitempty" maxLength:"360" doc:"Broadcast text (at most 360 characters); MessageSettings.body when empty."`
	Language string `json:"language,omitempty" maxLength:"16" pattern:"^[a-zA-Z]{1,8}(-[a-zA-Z0-9]{1,8})*$" doc:"Language of the text (BCP 47): the language of the CAP document's first info block; en-US when empty." example:"en-US"`
}

// TeamChatChannel posts the alert to team-chat incoming webhooks configured for the tenant.
type TeamChatChannel struct {
	Enabled bool     `json:"enabled" doc:"Deliver on this channel."`
	Targets []string `json:"targets,omitempty" maxItems:"50" doc:"Names of the tenant's configured chat targets; every target when empty."`
	Message string   `json:"message,omitempty" maxLength:"4000" doc:"Chat text; MessageSettings.body when empty."`
}

// SocialPostChannelA posts the alert to the tenant's accounts on the first social network.
type SocialPostChannelA struct {
	Enabled     bool     `json:"enabled" doc:"Deliver on this channel."`
	Accounts    []string `json:"accounts,omitempty" maxItems:"20" doc:"Names of the tenant's configured accounts; every account when empty."`
	Message     string   `json:"message,omitempty" maxLength:"280" doc:"Post text; MessageSettings.body when empty. The post (the subject, a colon and the text, then the link and the hashtags) takes at most 280 characters: the text is cut at a word boundary to leave room for what follows it, which stays whole."`
	IncludeLink bool     `json:"includeLink,omitempty" doc:"End the post's text with content.link (socialMedia.includeLink does this for both networks); the link stays whole, before the hashtags."`
}

// SocialPostChannelB posts the alert to the tenant's accounts on the second social network.
type SocialPostChannelB struct {
	Enabled     bool     `json:"enabled" doc:"Deliver on this channel."`
	Accounts    []string `json:"accounts,omitempty" maxItems:"20" doc:"Names of the tenant's configured accounts; every account when empty."`
	Message     string   `json:"message,omitempty" maxLength:"2000" doc:"Post text; MessageSettings.body when empty. socialMedia.hashtags follow it."`
	IncludeLink bool     `json:"includeLink,omitempty" doc:"Show content.link with the post (the feed's link field; socialMedia.includeLink does this for both networks)."`
}

// NeighborhoodChannel posts the alert to neighborhood-network groups through
// the tenant's accounts.
type NeighborhoodChannel struct {
	Enabled  bool     `json:"enabled" doc:"Deliver on this channel."`
	Accounts []string `json:"accounts,omitempty" maxItems:"20" doc:"Names of the tenant's configured accounts; every account when empty."`
	Groups   []string `json:"groups,omitempty" maxItems:"100" doc:"Neighborhood groups to post to; every group of the accounts when empty."`
	Message  string   `json:"message,omitempty" maxLength:"2000" doc:"Post text; MessageSettings.body when empty."`
}

// ChannelDelivery is one delivery to one recipient on one channel in one
// cycle, with the attempts it took.
type ChannelDelivery struct {
	Channel           DeliveryChannel `json:"channel"`
	Cycle             int             `json:"cycle" doc:"1 for the first sending; higher for resends to recipients who had not confirmed." example:"1"`
	Address           string          `json:"address" doc:"Where it went: an email address, a phone number, a device." example:"ada@example.com"`
	Status            DeliveryStatus  `json:"status"`
	Attempts          int             `json:"attempts" doc:"Attempts made at the provider for this delivery." example:"1"`
	ProviderMessageID string          `json:"providerMessageId,omitempty" doc:"The provider's id of the message."`
	IdempotencyKey    string          `json:"idempotencyKey" doc:"The key passed to the provider; the same on every retry of this delivery." example:"alert-1001-42-k3x7q2ab:email:1:7"`
	Error             string          `json:"error,omitempty" doc:"The last error, when an attempt failed; why a Skipped delivery was skipped (\"reached as recipient 3\": an earlier recipient of the alert is sent to this address); what a delivery that went out lacked (\"attachment maps/map.png no longer exists: sent without it\")."`
	Permanent         bool            `json:"permanent,omitempty" doc:"The failure is permanent (a retry will not help)."`
	SentAt            *time.Time      `json:"sentAt,omitempty" doc:"When the provider accepted it."`
	DeliveredAt       *time.Time      `json:"deliveredAt,omitempty" doc:"When a receipt confirmed delivery."`
	UpdatedAt         time.Time       `json:"updatedAt" doc:"When the delivery last changed."`
}

// ChannelDeliveries are a recipient's deliveries on one channel, one per cycle.
type ChannelDeliveries struct {
	Channel    DeliveryChannel   `json:"channel"`
	Address    string            `json:"address,omitempty" doc:"The recipient's address on the channel; empty when the recipient has none."`
	Status     DeliveryStatus    `json:"status" doc:"Status of the latest cycle's delivery."`
	Deliveries []ChannelDelivery `json:"deliveries" doc:"Every delivery on this channel, oldest cycle first."`
}
