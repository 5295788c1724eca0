// Package alert is what an alert is, apart from how the API shows it and how
// it is stored or delivered: its settings as they are stored (Settings, the
// form alerts.settings and workflow inputs hold), the renderer of its
// messages, the recipient specification and areas its settings resolve to,
// the idempotency keys of its deliveries, the rule that turns a provider's
// result into a delivery status and the delivery totals. api/model maps to
// and from it at the API's edge; activities, workflows and storage use it.
package alert

import (
	"encoding/json"
	"time"
)

// Type is the kind of alert: Default (a message), Poll (recipients answer
// questions through a personal link) or Conference (the message carries a
// ConferenceInvitation).
type Type string

// The alert types.
const (
	TypeDefault    Type = "Default"
	TypePoll       Type = "Poll"
	TypeConference Type = "Conference"
)

// PriorityType is the priority of an alert.
type PriorityType string

// The priorities.
const (
	PriorityEmergency    PriorityType = "Emergency"
	PriorityNonEmergency PriorityType = "NonEmergency"
)

// ScheduleType says when an alert is sent.
type ScheduleType string

// The schedule types.
const (
	ScheduleNow   ScheduleType = "Now"
	ScheduleLater ScheduleType = "Later"
)

// PriorityOrder says how the channels of an alert are used.
type PriorityOrder string

// The channel orders.
const (
	OrderSimultaneous PriorityOrder = "Simultaneous"
	OrderSequential   PriorityOrder = "Sequential"
)

// VariableSource says where a custom message variable takes its value.
type VariableSource string

// The variable sources.
const (
	VariableStatic      VariableSource = "Static"
	VariableCustomField VariableSource = "CustomField"
)

// DeliveryChannel names a delivery channel.
type DeliveryChannel string

// Settings is everything an alert is, as stored: its message, channels,
// recipients and the optional blocks that refine them.
type Settings struct {
	Type            Type                     `json:"type,omitempty"`
	Message         MessageSettings          `json:"message"`
	Channels        *Channels                `json:"channels,omitempty"`
	Recipients      Recipients               `json:"recipients"`
	Priority        *PrioritySettings        `json:"priority,omitempty"`
	Schedule        *ScheduleSettings        `json:"schedule,omitempty"`
	Workflow        *WorkflowSettings        `json:"workflow,omitempty"`
	Pipeline        *PipelineSettings        `json:"pipeline,omitempty"`
	Content         *ContentSettings         `json:"content,omitempty"`
	Sender          *SenderSettings          `json:"sender,omitempty"`
	Incident        *IncidentSettings        `json:"incident,omitempty"`
	Facility        *FacilitySettings        `json:"facility,omitempty"`
	Location        *LocationSettings        `json:"location,omitempty"`
	Municipal       *MunicipalSettings       `json:"municipal,omitempty"`
	FeatureLayer    *FeatureLayerSettings    `json:"featureLayer,omitempty"`
	MobileBroadcast *MobileBroadcastSettings `json:"mobileBroadcast,omitempty"`
	SocialMedia     *SocialMediaSettings     `json:"socialMedia,omitempty"`
	Security        *SecuritySettings        `json:"security,omitempty"`
	Survey          *SurveySettings          `json:"survey,omitempty"`
	Conference      *ConferenceInvitation    `json:"conference,omitempty"`
	Related         *RelatedAlert            `json:"related,omitempty"`
}

// MessageSettings is the message every channel sends unless the channel's
// block overrides it. Subject and body may use variables: {{firstName}},
// {{lastName}}, {{fullName}}, {{email}}, {{phone}}, {{externalId}},
// {{alertId}}, {{subject}}, {{senderName}}, {{incidentName}},
// {{locationName}}, {{responseLink}} (the recipient's personal poll or
// confirmation page), {{conference}} and the names of custom variables.
type MessageSettings struct {
	Subject   string     `json:"subject"`
	Body      string     `json:"body"`
	Language  string     `json:"language,omitempty"`
	Variables *Variables `json:"variables,omitempty"`
}

// Variables are the custom variables of a message.
type Variables struct {
	Values []Variable `json:"values"`
}

// Variable is one custom message variable.
type Variable struct {
	Name   string         `json:"name"`
	Source VariableSource `json:"source,omitempty"`
	Value  string         `json:"value,omitempty"`
	Field  string         `json:"field,omitempty"`
}

// Channels says which channels deliver the alert and how. A channel
// is used when its block is present with enabled true.
type Channels struct {
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

// Enabled lists the enabled channels in a fixed order.
func (c *Channels) Enabled() []string {
	if c == nil {
		return nil
	}
	var out []string
	add := func(on bool, name string) {
		if on {
			out = append(out, name)
		}
	}
	add(c.Email != nil && c.Email.Enabled, "email")
	add(c.Text != nil && c.Text.Enabled, "text")
	add(c.Voice != nil && c.Voice.Enabled, "voice")
	add(c.Etn != nil && c.Etn.Enabled, "etn")
	add(c.Push != nil && c.Push.Enabled, "push")
	add(c.MyAlertsApp != nil && c.MyAlertsApp.Enabled, "myAlertsApp")
	add(c.Fax != nil && c.Fax.Enabled, "fax")
	add(c.Eas != nil && c.Eas.Enabled, "eas")
	add(c.MobileBroadcast != nil && c.MobileBroadcast.Enabled, "mobileBroadcast")
	add(c.TeamChat != nil && c.TeamChat.Enabled, "teamChat")
	add(c.SocialPostA != nil && c.SocialPostA.Enabled, "socialPostA")
	add(c.SocialPostB != nil && c.SocialPostB.Enabled, "socialPostB")
	add(c.Neighborhood != nil && c.Neighborhood.Enabled, "neighborhood")
	return out
}

// Recipients says who receives the alert. Every source adds people;
// a person reached through several sources receives the alert once.
type Recipients struct {
	ContactIDs          []int64            `json:"contactIds,omitempty"`
	Groups              []GroupTarget      `json:"groups,omitempty"`
	DistributionListIDs []int64            `json:"distributionListIds,omitempty"`
	Directory           *DirectorySettings `json:"directory,omitempty"`
	AdHoc               []AdHocPerson      `json:"adHoc,omitempty"`
	Areas               []SelectedArea     `json:"areas,omitempty"`
	AccessFilter        *AccessFilter      `json:"accessFilter,omitempty"`
}

// GroupTarget selects the members of a group.
type GroupTarget struct {
	ID               int64 `json:"id"`
	IncludeSubgroups bool  `json:"includeSubgroups,omitempty"`
}

// AdHocPerson is a recipient given by address only.
type AdHocPerson struct {
	FirstName string `json:"firstName,omitempty"`
	LastName  string `json:"lastName,omitempty"`
	Email     string `json:"email,omitempty"`
	Phone     string `json:"phone,omitempty"`
}

// DirectorySettings selects users of a directory.
type DirectorySettings struct {
	DirectoryID string   `json:"directoryId"`
	UserIDs     []string `json:"userIds,omitempty"`
	AllUsers    bool     `json:"allUsers,omitempty"`
}

// AccessFilter keeps the recipients whose contact fields match its conditions.
type AccessFilter struct {
	Match      string                  `json:"match,omitempty"`
	Conditions []AccessFilterCondition `json:"conditions"`
}

// AccessFilterCondition is one condition on a contact field.
type AccessFilterCondition struct {
	Field    string   `json:"field"`
	Operator string   `json:"operator"`
	Values   []string `json:"values"`
}

// PrioritySettings sets the alert's priority.
type PrioritySettings struct {
	Priority PriorityType      `json:"priority"`
	LoudTone *LoudToneSettings `json:"loudTone,omitempty"`
}

// LoudToneSettings asks devices to sound a loud tone.
type LoudToneSettings struct {
	Enabled         bool   `json:"enabled"`
	Sound           string `json:"sound,omitempty"`
	DurationSeconds int    `json:"durationSeconds,omitempty"`
}

// ScheduleSettings says when the alert is sent.
type ScheduleSettings struct {
	Type   ScheduleType `json:"type"`
	SendAt *time.Time   `json:"sendAt,omitempty"`
}

// WorkflowSettings are the delivery settings.
type WorkflowSettings struct {
	ConfirmationRequested    bool `json:"confirmationRequested,omitempty"`
	Cycles                   int  `json:"cycles,omitempty"`
	CycleIntervalMinutes     int  `json:"cycleIntervalMinutes,omitempty"`
	BroadcastDurationMinutes int  `json:"broadcastDurationMinutes,omitempty"`
}

// PipelineSettings orders the channels.
type PipelineSettings struct {
	Order    PriorityOrder     `json:"order"`
	Sequence []DeliveryChannel `json:"sequence,omitempty"`
}

// ContentSettings adds content to the alert.
type ContentSettings struct {
	Attachments []string `json:"attachments,omitempty"`
	Link        string   `json:"link,omitempty"`
}

// SenderSettings says who the alert is from: the display name of its
// emails' From, where replies to them go and the number its calls and
// texts show.
type SenderSettings struct {
	Name     string `json:"name,omitempty"`
	ReplyTo  string `json:"replyTo,omitempty"`
	CallerID string `json:"callerId,omitempty"`
}

// SenderName is the alert's sender.name ("" when it gives none).
func (s *Settings) SenderName() string {
	if s.Sender == nil {
		return ""
	}
	return s.Sender.Name
}

// ReplyTo is where replies to the alert's emails go: channels.email.replyTo,
// else sender.replyTo ("" when neither gives one).
func (s *Settings) ReplyTo() string {
	if c := s.Channels; c != nil && c.Email != nil && c.Email.ReplyTo != "" {
		return c.Email.ReplyTo
	}
	if s.Sender == nil {
		return ""
	}
	return s.Sender.ReplyTo
}

// CallerID is the number a channel's calls or texts of the alert show:
// own, the channel block's callerId, when it gives one, else
// sender.callerId ("" when neither does: the provider's own number).
func (s *Settings) CallerID(own string) string {
	if own != "" || s.Sender == nil {
		return own
	}
	return s.Sender.CallerID
}

// IncidentSettings ties the alert to an incident.
type IncidentSettings struct {
	Name     string            `json:"name"`
	Category *IncidentCategory `json:"category,omitempty"`
	Type     *IncidentType     `json:"type,omitempty"`
	Event    *IncidentEvent    `json:"event,omitempty"`
}

// FacilitySettings ties the alert to facilities.
type FacilitySettings struct {
	Facilities []FacilityReference `json:"facilities"`
}

// LocationSettings describes where the incident is.
type LocationSettings struct {
	Location *NamedLocation          `json:"location,omitempty"`
	Areas    []SelectedAreaReference `json:"areas,omitempty"`
}

// MunicipalSettings names the municipal areas the alert concerns.
type MunicipalSettings struct {
	Areas []MunicipalArea `json:"areas"`
}

// FeatureLayerSettings names GIS features the alert concerns.
type FeatureLayerSettings struct {
	LayerName  string   `json:"layerName"`
	FeatureIDs []string `json:"featureIds,omitempty"`
}

// MobileBroadcastSettings refines wireless emergency alerts.
type MobileBroadcastSettings struct {
	ExpiresInMinutes int      `json:"expiresInMinutes,omitempty"`
	Languages        []string `json:"languages,omitempty"`
}

// SocialMediaSettings refines social posts.
type SocialMediaSettings struct {
	Hashtags    []string `json:"hashtags,omitempty"`
	IncludeLink bool     `json:"includeLink,omitempty"`
}

// SecuritySettings limit who sees the alert.
type SecuritySettings struct {
	Hidden             bool `json:"hidden,omitempty"`
	RestrictedToSender bool `json:"restrictedToSender,omitempty"`
}

// SurveySettings are the questions of a Poll alert.
type SurveySettings struct {
	Questions []PollQuestion `json:"questions"`
}

// ConferenceInvitation is the call a Conference alert invites to.
type ConferenceInvitation struct {
	BridgeNumber    string     `json:"bridgeNumber"`
	AccessCode      string     `json:"accessCode,omitempty"`
	URL             string     `json:"url,omitempty"`
	StartsAt        *time.Time `json:"startsAt,omitempty"`
	DurationMinutes int        `json:"durationMinutes,omitempty"`
}

// RelatedAlert points at an earlier alert of the tenant.
type RelatedAlert struct {
	AlertID  int64                `json:"alertId"`
	Relation string               `json:"relation"`
	Actions  *RelatedAlertActions `json:"actions,omitempty"`
}

// RelatedAlertActions say what the relation does.
type RelatedAlertActions struct {
	IncludeOriginalRecipients bool `json:"includeOriginalRecipients,omitempty"`
}

// EmailChannel delivers the alert by email over SMTP to each recipient's
// first email address.
type EmailChannel struct {
	Enabled bool   `json:"enabled"`
	Subject string `json:"subject,omitempty"`
	Body    string `json:"body,omitempty"`
	HTML    string `json:"html,omitempty"`
	ReplyTo string `json:"replyTo,omitempty"`
	// IncludeAttachments defaults to true when absent.
	IncludeAttachments *bool `json:"includeAttachments,omitempty"`
}

// TextMessageChannel delivers the alert as a text message (SMS) to each
// recipient's first phone number that can receive texts.
type TextMessageChannel struct {
	Enabled bool   `json:"enabled"`
	Body    string `json:"body,omitempty"`
	// MaxSegments defaults to DefaultMaxSegments.
	MaxSegments  int   `json:"maxSegments,omitempty"`
	AllowUnicode *bool `json:"allowUnicode,omitempty"`
}

// DefaultMaxSegments is the SMS segment limit when maxSegments is absent.
const DefaultMaxSegments = 10

// TextSegments is the number of SMS segments the alert's text message may
// take: channels.text.maxSegments, or DefaultMaxSegments.
func (s *Settings) TextSegments() int {
	if c := s.Channels; c != nil && c.Text != nil && c.Text.MaxSegments > 0 {
		return c.Text.MaxSegments
	}
	return DefaultMaxSegments
}

// TextGSM7Only reports whether the alert's text messages must be GSM-7:
// channels.text.allowUnicode is false.
func (s *Settings) TextGSM7Only() bool {
	c := s.Channels
	return c != nil && c.Text != nil && c.Text.AllowUnicode != nil && !*c.Text.AllowUnicode
}

// VoiceChannel calls each recipient's first phone number that can take calls.
type VoiceChannel struct {
	Enabled           bool   `json:"enabled"`
	Message           string `json:"message,omitempty"`
	AudioFileName     string `json:"audioFileName,omitempty"`
	Repeat            int    `json:"repeat,omitempty"`
	Language          string `json:"language,omitempty"`
	AnsweringMachine  string `json:"answeringMachine,omitempty"`
	PressOneToConfirm bool   `json:"pressOneToConfirm,omitempty"`
	CallAttempts      int    `json:"callAttempts,omitempty"`
	RedialSeconds     int    `json:"redialSeconds,omitempty"`
	CallerID          string `json:"callerId,omitempty"`
}

// EtnChannel calls the phone numbers inside the alert's geographic areas
// (emergency telephone notification).
type EtnChannel struct {
	Enabled       bool   `json:"enabled"`
	Message       string `json:"message,omitempty"`
	AudioFileName string `json:"audioFileName,omitempty"`
	Repeat        int    `json:"repeat,omitempty"`
	CallerID      string `json:"callerId,omitempty"`
	// AddressPointLists adds imported address points inside the areas.
	AddressPointLists []string `json:"addressPointLists,omitempty"`
}

// PushChannel sends a push notification to each recipient's registered
// devices of the channel's app: the push app, or the tenant's alerts app
// (MyAlertsAppChannel).
type PushChannel struct {
	Enabled  bool   `json:"enabled"`
	Title    string `json:"title,omitempty"`
	Body     string `json:"body,omitempty"`
	LoudTone bool   `json:"loudTone,omitempty"`
}

// MyAlertsAppChannel sends the alert to the tenant's alerts app on each
// recipient's registered app devices; its block is a push block.
type MyAlertsAppChannel = PushChannel

// FaxChannel faxes a stored document or the rendered message.
type FaxChannel struct {
	Enabled   bool   `json:"enabled"`
	FileName  string `json:"fileName,omitempty"`
	CoverPage bool   `json:"coverPage,omitempty"`
}

// EasChannel broadcasts the alert through the emergency alert system as a CAP 1.2 message.
type EasChannel struct {
	Enabled         bool     `json:"enabled"`
	EventCode       string   `json:"eventCode,omitempty"`
	AudioFileName   string   `json:"audioFileName,omitempty"`
	DurationMinutes int      `json:"durationMinutes,omitempty"`
	SameCodes       []string `json:"sameCodes,omitempty"`
}

// MobileBroadcastChannel sends a wireless emergency alert to phones in the alert's areas.
type MobileBroadcastChannel struct {
	Enabled  bool   `json:"enabled"`
	Text     string `json:"text,omitempty"`
	Language string `json:"language,omitempty"`
}

// TeamChatChannel posts the alert to team-chat incoming webhooks configured for the tenant.
type TeamChatChannel struct {
	Enabled bool     `json:"enabled"`
	Targets []string `json:"targets,omitempty"`
	Message string   `json:"message,omitempty"`
}

// SocialPostChannel posts the alert to the tenant's accounts on a social
// network.
type SocialPostChannel struct {
	Enabled     bool     `json:"enabled"`
	Accounts    []string `json:"accounts,omitempty"`
	Message     string   `json:"message,omitempty"`
	IncludeLink bool     `json:"includeLink,omitempty"`
}

// SocialPostChannelA and SocialPostChannelB are the blocks of the first
// and the second social network.
type (
	SocialPostChannelA = SocialPostChannel
	SocialPostChannelB = SocialPostChannel
)

// NeighborhoodChannel posts the alert to neighborhood-network groups through
// the tenant's accounts.
type NeighborhoodChannel struct {
	Enabled  bool     `json:"enabled"`
	Accounts []string `json:"accounts,omitempty"`
	Groups   []string `json:"groups,omitempty"`
	Message  string   `json:"message,omitempty"`
}

// LatLng is a point in WGS 84.
type LatLng struct {
	Lat float64 `json:"lat"`
	Lng float64 `json:"lng"`
}

// SpatialReference names a coordinate system by its well-known id. tocsin
// accepts WGS 84 only (wkid 4326).
type SpatialReference struct {
	Wkid int `json:"wkid"`
}

// IcrsObject is a GeoJSON (2008) coordinate reference system member.
type IcrsObject struct {
	Type       string            `json:"type"`
	Properties map[string]string `json:"properties"`
}

// IGeometryObject is a GeoJSON geometry. tocsin targets Polygon and
// MultiPolygon geometries; coordinates are [longitude, latitude] positions,
// rings closed (first position equals the last) with at least four positions,
// none crossing the antimeridian.
type IGeometryObject struct {
	Type        string          `json:"type"`
	Coordinates json.RawMessage `json:"coordinates"`
	Crs         *IcrsObject     `json:"crs,omitempty"`
}

// Feature is a GeoJSON feature.
type Feature struct {
	Type       string          `json:"type"`
	ID         string          `json:"id,omitempty"`
	Geometry   IGeometryObject `json:"geometry"`
	Properties map[string]any  `json:"properties,omitempty"`
}

// FeatureCollection is a GeoJSON feature collection.
type FeatureCollection struct {
	Type     string      `json:"type"`
	Features []Feature   `json:"features"`
	Crs      *IcrsObject `json:"crs,omitempty"`
}

// SelectedArea is a geographic area of an alert: a GeoJSON feature
// collection of polygons, or a circle (center and radius).
type SelectedArea struct {
	Name             string             `json:"name,omitempty"`
	Geometry         *FeatureCollection `json:"geometry,omitempty"`
	Center           *LatLng            `json:"center,omitempty"`
	RadiusMeters     float64            `json:"radiusMeters,omitempty"`
	SpatialReference *SpatialReference  `json:"spatialReference,omitempty"`
}

// SelectedAreaReference points at a saved area.
type SelectedAreaReference struct {
	ID   string `json:"id"`
	Name string `json:"name,omitempty"`
}

// NamedLocation is a named point.
type NamedLocation struct {
	Name    string  `json:"name"`
	Point   *LatLng `json:"point,omitempty"`
	Address string  `json:"address,omitempty"`
}

// FacilityReference points at a facility.
type FacilityReference struct {
	ID   string `json:"id,omitempty"`
	Name string `json:"name"`
}

// MunicipalCity is a city of a municipal area.
type MunicipalCity struct {
	Code  string `json:"code,omitempty"`
	Name  string `json:"name"`
	State string `json:"state,omitempty"`
}

// MunicipalArea is a county or district with its cities.
type MunicipalArea struct {
	Code   string          `json:"code,omitempty"`
	Name   string          `json:"name"`
	Cities []MunicipalCity `json:"cities,omitempty"`
}

// IncidentCategory is the CAP category of an incident.
type IncidentCategory struct {
	Code string `json:"code"`
	Name string `json:"name,omitempty"`
}

// IncidentType is the kind of incident.
type IncidentType struct {
	Code string `json:"code"`
	Name string `json:"name,omitempty"`
}

// IncidentEvent is what happened.
type IncidentEvent struct {
	Code       string     `json:"code,omitempty"`
	Name       string     `json:"name"`
	Severity   string     `json:"severity,omitempty"`
	OccurredAt *time.Time `json:"occurredAt,omitempty"`
}

// PollQuestion is one question of a Poll alert.
type PollQuestion struct {
	ID      int          `json:"id,omitempty"`
	Text    string       `json:"text"`
	Options []PollOption `json:"options"`
}

// PollOption is one answer a recipient may choose.
type PollOption struct {
	ID       int    `json:"id,omitempty"`
	Text     string `json:"text"`
	Severity string `json:"severity,omitempty"`
}
