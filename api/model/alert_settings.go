package model

import (
	"encoding/json"
	"time"
)

// AlertSettings is everything an alert is: its message, channels,
// recipients and the optional blocks that refine them.
type AlertSettings struct {
	Type            AlertType                `json:"type,omitempty" doc:"Default when absent."`
	Message         MessageSettings          `json:"message"`
	Channels        *ChannelSettings         `json:"channels,omitempty" doc:"The channels to deliver on; the tenant's default channels when absent."`
	Recipients      RecipientSettings        `json:"recipients"`
	Priority        *PrioritySettings        `json:"priority,omitempty" doc:"The tenant's default priority when absent; a field it leaves out comes from the defaults (the loud tone for an Emergency alert)."`
	Schedule        *ScheduleSettings        `json:"schedule,omitempty" doc:"Send now when absent."`
	Workflow        *WorkflowSettings        `json:"workflow,omitempty" doc:"Confirmation, resend cycles and broadcast duration; each field it leaves out (or all, when absent) comes from the tenant's defaults."`
	Pipeline        *PipelineSettings        `json:"pipeline,omitempty" doc:"Order of the channels; Simultaneous when absent."`
	Content         *ContentSettings         `json:"content,omitempty"`
	Sender          *SenderSettings          `json:"sender,omitempty" doc:"Who the alert is from; each field it leaves out (or all, when absent) comes from the tenant's defaults."`
	Incident        *IncidentSettings        `json:"incident,omitempty"`
	Facility        *FacilitySettings        `json:"facility,omitempty"`
	Location        *LocationSettings        `json:"location,omitempty"`
	Municipal       *MunicipalSettings       `json:"municipal,omitempty"`
	FeatureLayer    *FeatureLayerSettings    `json:"featureLayer,omitempty"`
	MobileBroadcast *MobileBroadcastSettings `json:"mobileBroadcast,omitempty"`
	SocialMedia     *SocialMediaSettings     `json:"socialMedia,omitempty"`
	Security        *SecuritySettings        `json:"security,omitempty"`
	Survey          *SurveySettings          `json:"survey,omitempty" doc:"Questions of a Poll alert; required when type is Poll."`
	Conference      *ConferenceInvitation    `json:"conference,omitempty" doc:"The call of a Conference alert; required when type is Conference."`
	Related         *RelatedAlert            `json:"related,omitempty" doc:"An earlier alert this one follows up."`
}

// MessageSettings is the message every channel sends unless the channel's
// block overrides it. Subject and body may use variables: {{firstName}},
// {{lastName}}, {{fullName}}, {{email}}, {{phone}}, {{externalId}},
// {{alertId}}, {{subject}}, {{senderName}}, {{incidentName}},
// {{locationName}}, {{responseLink}} (the recipient's personal poll or
// confirmation page), {{conference}} and the names of custom variables.
type MessageSettings struct {
	Subject   string                  `json:"subject" minLength:"1" maxLength:"200" doc:"Subject (email subject, push title, list display)." example:"Campus closed today"`
	Body      string                  `json:"body" minLength:"1" maxLength:"20000" doc:"The message text. Variables in double braces are filled per recipient." example:"Hello {{firstName}}, campus is closed today because of snow."`
	Language  string                  `json:"language,omitempty" maxLength:"16" doc:"Language of the message (BCP 47): the text-to-speech language of ETN calls, and of voice calls whose block gives none (en-US when neither does). Other channels send the text as it is." example:"en"`
	Variables *CustomMessageVariables `json:"variables,omitempty" doc:"Custom variables the message may use besides the built-in ones."`
}

// CustomMessageVariables are the custom variables of a message.
type CustomMessageVariables struct {
	Values []AlertSettingsValue `json:"values" maxItems:"50" doc:"The variables."`
}

// AlertSettingsValue is one custom message variable.
type AlertSettingsValue struct {
	Name   string                      `json:"name" pattern:"^[A-Za-z][A-Za-z0-9_]{0,49}$" doc:"Name used in the message as {{name}}." example:"shelter"`
	Source AlertSettingsVariableSource `json:"source,omitempty" doc:"Static when absent."`
	Value  string                      `json:"value,omitempty" maxLength:"1000" doc:"The value (Static) or the fallback (CustomField)." example:"Gym B"`
	Field  string                      `json:"field,omitempty" maxLength:"100" doc:"For CustomField: the recipient's custom field to use." example:"building"`
}

// ChannelSettings says which channels deliver the alert and how. A channel
// is used when its block is present with enabled true.
type ChannelSettings struct {
	Email           *EmailChannel           `json:"email,omitempty"`
	Text            *TextMessageChannel     `json:"text,omitempty"`
	Voice           *VoiceChannel           `json:"voice,omitempty"`
	Etn             *EtnChannel             `json:"etn,omitempty"`
	Push            *PushChannel            `json:"push,omitempty"`
	MyAlertsApp     *MyAlertsAppChannel     `json:"myAlertsApp,omitempty"`
	Fax             *FaxChannel             `json:"fax,omitempty"`
	Eas             *EasChannel             `json:"eas,omitempty"`
	MobileBroadcast *MobileBroadcastChannel `json:"mobileBroadcast,omitempty"`
	TeamChat        *TeamChatChannel        `json:"teamChat,omitempty"`
	SocialPostA     *SocialPostChannelA     `json:"socialPostA,omitempty"`
	SocialPostB     *SocialPostChannelB     `json:"socialPostB,omitempty"`
	Neighborhood    *NeighborhoodChannel    `json:"neighborhood,omitempty"`
}

// RecipientSettings says who receives the alert. Every source adds people;
// a person reached through several sources receives the alert once.
type RecipientSettings struct {
	ContactIDs          []int64               `json:"contactIds,omitempty" maxItems:"50000" doc:"Contacts by id." example:"[12, 13]"`
	Groups              []AlertGroupTarget    `json:"groups,omitempty" maxItems:"1000" doc:"Groups, with or without their subgroups."`
	DistributionListIDs []int64               `json:"distributionListIds,omitempty" maxItems:"1000" doc:"Distribution lists by id." example:"[3]"`
	Directory           *DirectorySettings    `json:"directory,omitempty" doc:"Directory users."`
	AdHoc               []AlertAdHocRecipient `json:"adHoc,omitempty" maxItems:"1000" doc:"People who are not contacts, by address."`
	Areas               []SelectedArea        `json:"areas,omitempty" maxItems:"20" doc:"Geographic areas: contacts with a location inside any of them receive the alert. The EAS and mobile broadcast CAP documents carry each as an area named by its name, with a polygon per polygon (its outer ring: CAP has no holes) or its circle; together they may take at most 10000 coordinate pairs in a document (one per circle, each polygon's, in each of its language blocks)."`
	AccessFilter        *AccessFilter         `json:"accessFilter,omitempty" doc:"Keeps only the resolved recipients that match; ad-hoc recipients are not filtered."`
}

// AlertGroupTarget selects the members of a group.
type AlertGroupTarget struct {
	ID               int64 `json:"id" minimum:"1" doc:"The group id." example:"5"`
	IncludeSubgroups bool  `json:"includeSubgroups,omitempty" doc:"Also the members of every group below it."`
}

// AlertAdHocRecipient is a recipient given by address only.
type AlertAdHocRecipient struct {
	FirstName string `json:"firstName,omitempty" maxLength:"100" doc:"As a contact's first name: taken in Unicode normalization form C (NFC); a control character, a bidirectional control or an invisible character (other than the joiners and variation selectors scripts and emoji need) is a 400 naming the field." example:"Grace"`
	LastName  string `json:"lastName,omitempty" maxLength:"100" doc:"Held to the rule of firstName." example:"Hopper"`
	Email     string `json:"email,omitempty" format:"email" maxLength:"254" doc:"An RFC 5322 address alone, without display name or comment, as a directory user's; taken in lower case, its local part quoted only when it must be. An entry whose email is a contact's among the recipients, or an earlier entry's, is that recipient." example:"grace@example.com"`
	Phone     string `json:"phone,omitempty" pattern:"^\\+[1-9][0-9]{6,14}$" doc:"E.164 number; receives texts and calls." example:"+15551230000"`
}

// DirectorySettings selects users of a directory.
type DirectorySettings struct {
	DirectoryID string   `json:"directoryId" minLength:"1" maxLength:"100" doc:"The directory." example:"main"`
	UserIDs     []string `json:"userIds,omitempty" maxItems:"50000" doc:"Users of the directory by id, written as ids are everywhere (digits without sign, spaces or leading zeros: \"0017\" is a 400); with allUsers false at least one." example:"[\"17\"]"`
	AllUsers    bool     `json:"allUsers,omitempty" doc:"Every user of the directory."`
}

// AccessFilter keeps the recipients whose contact fields match its conditions.
type AccessFilter struct {
	Match      string                  `json:"match,omitempty" enum:"All,Any" doc:"All conditions must hold (default) or any one." example:"All"`
	Conditions []AccessFilterCondition `json:"conditions" minItems:"1" maxItems:"20"`
}

// AccessFilterCondition is one condition on a contact field.
type AccessFilterCondition struct {
	Field    string   `json:"field" pattern:"^(language|timeZone|externalId|custom\\.[A-Za-z0-9_]{1,64})$" doc:"language, timeZone, externalId or custom.<name> for a custom field." example:"custom.building"`
	Operator string   `json:"operator" enum:"Equals,NotEquals,In,NotIn" example:"Equals"`
	Values   []string `json:"values" minItems:"1" maxItems:"100" doc:"One value for Equals/NotEquals, any number for In/NotIn. Values are compared as written; a value of language or timeZone also matches in the form a person's is stored in (en-us matches en-US, us/eastern matches US/Eastern; see usersCreate)." example:"[\"B12\"]"`
}

// AccessRecipe is a named, reusable access filter.
type AccessRecipe struct {
	Name   string       `json:"name" minLength:"1" maxLength:"100" example:"Building B staff"`
	Filter AccessFilter `json:"filter"`
}

// PrioritySettings sets the alert's priority.
type PrioritySettings struct {
	Priority PriorityType      `json:"priority"`
	LoudTone *LoudToneSettings `json:"loudTone,omitempty" doc:"Loud tone on devices (Emergency only): push and app notifications play it. A channel block's loudTone plays it too, with this block's sound and duration when it gives them."`
}

// LoudToneSettings asks devices to sound a loud tone.
type LoudToneSettings struct {
	Enabled         bool   `json:"enabled"`
	Sound           string `json:"sound,omitempty" enum:"Siren,Alarm,Chime" doc:"The tone (default Siren): the critical sound file push and app notifications ask for, loud_tone.caf, alarm.caf or chime.caf, which the app bundles."`
	DurationSeconds int    `json:"durationSeconds,omitempty" minimum:"1" maximum:"60" doc:"How long the app sounds the tone (default 10): the loudToneSeconds of the notification's data."`
}

// ScheduleSettings says when the alert is sent.
type ScheduleSettings struct {
	Type   ScheduleType `json:"type"`
	SendAt *time.Time   `json:"sendAt,omitempty" doc:"For Later: when to send (RFC 3339, in the future, at most a calendar year ahead: no later than the same date and time next year, in UTC, where 29 February's is 1 March)."`
}

// WorkflowSettings are the delivery settings. Its fields are pointers so
// that a value an alert gives (false and 0 too) is told apart from one it
// leaves to the tenant's defaults.
type WorkflowSettings struct {
	ConfirmationRequested    *bool `json:"confirmationRequested,omitempty" doc:"Ask recipients to confirm through their personal link ({{responseLink}} is appended to texts that lack it)."`
	Cycles                   *int  `json:"cycles,omitempty" minimum:"1" maximum:"10" doc:"How many times the alert is sent: cycles after the first go only to recipients who have not confirmed (default 1)." example:"1"`
	CycleIntervalMinutes     *int  `json:"cycleIntervalMinutes,omitempty" minimum:"1" maximum:"1440" doc:"Minutes between cycles (default 5)." example:"5"`
	BroadcastDurationMinutes *int  `json:"broadcastDurationMinutes,omitempty" minimum:"0" maximum:"10080" doc:"How long the alert stays open: no cycle starts later, and once the alert has completed after it, responses are refused with 410. 0: the alert never closes; responses (confirmations, poll answers) are accepted for as long as the alert exists." example:"60"`
}

// PipelineSettings orders the channels.
type PipelineSettings struct {
	Order    PriorityOrder     `json:"order"`
	Sequence []DeliveryChannel `json:"sequence,omitempty" maxItems:"13" doc:"For Sequential: the channels in the order to use them; the enabled channels' fixed order when empty."`
}

// ContentSettings adds content to the alert.
type ContentSettings struct {
	Attachments []string `json:"attachments,omitempty" maxItems:"10" doc:"Stored files to attach to email, by their full name (folder/name) as the files operations name them, each at most once; the original version is attached. They take 10 MiB together at most, with the attachment uploaded with createAlertWithAttachment." example:"[\"maps/evacuation.pdf\"]"`
	Link        string   `json:"link,omitempty" format:"uri" maxLength:"2000" doc:"A link to more information, available as {{link}}." example:"https://example.com/status"`
}

// SenderSettings says who the alert is from. Its fields are pointers so
// that a value an alert gives ("" too) is told apart from one it leaves to
// the tenant's defaults.
type SenderSettings struct {
	Name     *string `json:"name,omitempty" maxLength:"100" doc:"Display name of the sender: the From name of the alert's emails, whose address stays the platform's (TOCSIN_SMTP_FROM, so SPF and DMARC hold; without a name, its name too), {{senderName}} and the sent-alerts from filter. Kept in NFC; a control character (a line break or tab), a bidirectional control (which can make it display reversed) or an invisible character is a 400 naming this field, by the rule for names; the From header carries it quoted, or RFC 2047-encoded when it is not all printable ASCII, so quotes, commas, angle brackets and non-ASCII letters show as written and never add an address or a header." example:"Campus Safety"`
	ReplyTo  *string `json:"replyTo,omitempty" format:"email" maxLength:"254" doc:"Where replies to the alert's emails go (their Reply-To header) unless channels.email.replyTo gives another; no Reply-To when neither does, and replies go to the From address. An RFC 5322 address alone, as a recipient's: a display name, comment or second address is a 400 naming this field; taken in lower case." example:"safety@example.com"`
	CallerID *string `json:"callerId,omitempty" pattern:"^\\+[1-9][0-9]{6,14}$" doc:"E.164 number the alert's calls and texts show unless the voice or ETN block's callerId gives another: the from of each call request to the voice provider (voice calls) and to the ETN provider (ETN calls), and of each text to the text provider. Without one, calls show the provider's configured from and texts the text provider's own number. The provider decides whether it may show the number (typically one verified for the agency's account)." example:"+15550100"`
}

// IncidentSettings ties the alert to an incident.
type IncidentSettings struct {
	Name     string            `json:"name" minLength:"1" maxLength:"200" doc:"Incident name (the incident filter of the sent-alerts list)." example:"Winter storm"`
	Category *IncidentCategory `json:"category,omitempty"`
	Type     *IncidentType     `json:"type,omitempty"`
	Event    *IncidentEvent    `json:"event,omitempty"`
}

// FacilitySettings ties the alert to facilities.
type FacilitySettings struct {
	Facilities []FacilityReference `json:"facilities" minItems:"1" maxItems:"50"`
}

// LocationSettings describes where the incident is.
type LocationSettings struct {
	Location *NamedLocation          `json:"location,omitempty" doc:"The incident's location ({{locationName}})."`
	Areas    []SelectedAreaReference `json:"areas,omitempty" maxItems:"20" doc:"Saved areas this alert concerns, by reference."`
}

// MunicipalSettings names the municipal areas the alert concerns.
type MunicipalSettings struct {
	Areas []MunicipalArea `json:"areas" minItems:"1" maxItems:"50"`
}

// FeatureLayerSettings names GIS features the alert concerns.
type FeatureLayerSettings struct {
	LayerName  string   `json:"layerName" minLength:"1" maxLength:"200" example:"Flood zones"`
	FeatureIDs []string `json:"featureIds,omitempty" maxItems:"1000" example:"[\"FZ-12\"]"`
}

// MobileBroadcastSettings refines wireless emergency alerts.
type MobileBroadcastSettings struct {
	ExpiresInMinutes int      `json:"expiresInMinutes,omitempty" minimum:"1" maximum:"1440" doc:"How long the wireless emergency alert is valid: its CAP document's expires is its sent time plus this many minutes (default 60), for the alert and for each update or cancel."`
	Languages        []string `json:"languages,omitempty" maxItems:"5" pattern:"^[a-zA-Z]{1,8}(-[a-zA-Z0-9]{1,8})*$" doc:"Further languages (BCP 47) the broadcast is for: the CAP document carries one info block in channels.mobileBroadcast.language (en-US when empty), then one per language here, each with the same texts and areas. tocsin translates nothing: write the text in every language named here." example:"[\"es-US\"]"`
}

// SocialMediaSettings refines the posts of social networks A and B.
type SocialMediaSettings struct {
	Hashtags    []string `json:"hashtags,omitempty" maxItems:"10" doc:"Hashtags that end the alert's posts on social networks A and B (socialPostA, socialPostB; the neighborhood network and team chat do not use them), each with its # (given with or without it), in this order after the text, kept whole when the text is cut to the network's length. Each is one tag: 1 to 50 letters, digits, marks and underscores, at least one a letter, and no two the same ignoring case; else a 400 naming it. With socialPostA enabled, they and the link it ends with take at most 140 characters (half its post), else a 400 naming this field." example:"[\"snowday\", \"#CampusSafety\"]"`
	IncludeLink bool     `json:"includeLink,omitempty" doc:"Add content.link to the posts of both social networks, as each block's includeLink does: network A's text ends with it (before the hashtags, kept whole), network B shows it with the post."`
}

// SecuritySettings limit who sees the alert.
type SecuritySettings struct {
	Hidden             bool `json:"hidden,omitempty" doc:"Hide the alert from lists unless the hidden filter asks for hidden alerts."`
	RestrictedToSender bool `json:"restrictedToSender,omitempty" doc:"Only the user who sent it finds it in lists."`
}

// SurveySettings are the questions of a Poll alert.
type SurveySettings struct {
	Questions []PollQuestionModel `json:"questions" minItems:"1" maxItems:"10"`
}

// ConferenceInvitation is the call a Conference alert invites to.
type ConferenceInvitation struct {
	BridgeNumber    string     `json:"bridgeNumber" pattern:"^\\+[1-9][0-9]{6,14}$" doc:"Number to dial (E.164)." example:"+15550199"`
	AccessCode      string     `json:"accessCode,omitempty" maxLength:"32" example:"4821"`
	URL             string     `json:"url,omitempty" format:"uri" maxLength:"2000" doc:"Link to join online." example:"https://meet.example.com/storm"`
	StartsAt        *time.Time `json:"startsAt,omitempty" doc:"When the call starts."`
	DurationMinutes int        `json:"durationMinutes,omitempty" minimum:"1" maximum:"1440"`
}

// RelatedAlert points at an earlier alert of the tenant.
type RelatedAlert struct {
	AlertID  int64                `json:"alertId" minimum:"1" doc:"The earlier alert." example:"41"`
	Relation string               `json:"relation" enum:"Update,FollowUp,AllClear" example:"Update"`
	Actions  *RelatedAlertActions `json:"actions,omitempty"`
}

// RelatedAlertActions say what the relation does.
type RelatedAlertActions struct {
	IncludeOriginalRecipients bool `json:"includeOriginalRecipients,omitempty" doc:"Also send to every recipient of the earlier alert: its people, with the addresses the directory holds now and isMandatory as it was there (selected directly or only through a group, list or area), and its ad-hoc recipients as they were given; each is one recipient with the alert's own (the ad-hoc entries match as the alert's own do). The earlier alert must have resolved its recipients: one still Scheduled (or Queued for a moment) is a 409 naming this field, as who it reaches is known only once it is sent."`
}

// rawJSON is a JSON value kept as it was received.
type rawJSON = json.RawMessage
