package model

import (
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/tocsin/tocsin/storage"
)

// SelfServiceSettings say what a directory user may do on their own.
type SelfServiceSettings struct {
	CanJoinGroups        bool `json:"canJoinGroups" doc:"The user may join public groups with usersCreateGroupMembership, and groupsDiscoverAvailableGroups offers them groups. True when the create command leaves the settings out."`
	ShowInGroupDirectory bool `json:"showInGroupDirectory" doc:"The user is listed by groupsGetGroupMembership. True when the create command leaves the settings out."`
}

// DefaultSelfService is what a user gets when the create command leaves the settings out.
var DefaultSelfService = SelfServiceSettings{CanJoinGroups: true, ShowInGroupDirectory: true}

// MobileApp is an installation of the alerts app registered to a user.
type MobileApp struct {
	InstallationID string    `json:"installationId" minLength:"1" maxLength:"128" pattern:"^[A-Za-z0-9._:-]+$" doc:"The app installation's id, chosen by the app; unique per user." example:"ios-8c1f0a"`
	Platform       string    `json:"platform" enum:"android,ios,web" doc:"The platform the app runs on." example:"ios"`
	AppVersion     string    `json:"appVersion,omitempty" maxLength:"32" doc:"The app's version." example:"4.2.0"`
	DeviceName     string    `json:"deviceName,omitempty" maxLength:"100" doc:"A name the user recognises." example:"Ada's phone"`
	PushToken      string    `json:"pushToken,omitempty" minLength:"8" maxLength:"4096" doc:"The push token the platform issued; when present, the installation receives MyAlertsApp notifications (it is listed among the contact information's devices)."`
	RegisteredAt   time.Time `json:"registeredAt,omitempty" readOnly:"true" doc:"When the installation was first registered."`
}

// UserProfile is a user of a tenant's directory.
type UserProfile struct {
	ID                      string                  `json:"id" doc:"The user's id." example:"1042"`
	DirectoryID             string                  `json:"directoryId" example:"staff"`
	ExternalID              string                  `json:"externalId,omitempty" doc:"The id the tenant's own systems use for the user; unique within the directory." example:"E-20431"`
	Name                    PersonName              `json:"name"`
	PreferredLanguage       string                  `json:"preferredLanguage" doc:"A BCP 47 language tag in its canonical form (see usersCreate). A value stored before that rule, by a contacts import, is answered as stored." example:"en"`
	TimeZone                string                  `json:"timeZone" doc:"A name of the IANA time zone database, a zone or a link to one, as the database spells it (see usersCreate). A value stored before that rule, by a contacts import, is answered as stored." example:"America/Chicago"`
	SelfService             SelfServiceSettings     `json:"selfServiceSettings"`
	MobileApps              []MobileApp             `json:"mobileApps"`
	ContactInformation      ContactInformation      `json:"contactInformation"`
	NotificationPreferences NotificationPreferences `json:"notificationPreferences"`
	CreatedAt               time.Time               `json:"createdAt"`
	UpdatedAt               time.Time               `json:"updatedAt"`
}

// UserProfileSummary is a user as lists show it.
type UserProfileSummary struct {
	ID                string     `json:"id" example:"1042"`
	ExternalID        string     `json:"externalId,omitempty" example:"E-20431"`
	Name              PersonName `json:"name"`
	PreferredLanguage string     `json:"preferredLanguage" example:"en"`
	TimeZone          string     `json:"timeZone" example:"America/Chicago"`
	Emails            []string   `json:"emails" doc:"The user's email addresses."`
	Phones            []string   `json:"phones" doc:"The user's phone numbers (E.164)."`
	CreatedAt         time.Time  `json:"createdAt"`
}

// UserProfileSummaryPagedApiResponse is a page of users.
type UserProfileSummaryPagedApiResponse PagedItems[UserProfileSummary]

// CreateUserProfileCommand creates a directory user.
type CreateUserProfileCommand struct {
	ExternalID        *string              `json:"externalId,omitempty" minLength:"1" maxLength:"128" doc:"The id the tenant's own systems use; unique within the directory (a duplicate is a 409). Leave it out for none: a blank one is a 400. Compared in NFC, so two spellings of one name (é as one character, or e and a combining accent) are the same id. Taken in Unicode normalization form C (NFC); a control character, a bidirectional control or an invisible character (other than the joiners and variation selectors scripts and emoji need) is a 400 naming the field." example:"E-20431"`
	Name              PersonName           `json:"name"`
	PreferredLanguage string               `json:"preferredLanguage,omitempty" maxLength:"35" doc:"A BCP 47 language tag (RFC 5646) with registered subtags, stored in its canonical form: en-us is en-US, en_US is en-US, iw is he, en-Latn-US is en-US. metaGetLanguages lists the languages tocsin translates into; any other language is taken too. und and a private-use tag alone name no language and are refused, as is a tag of unknown subtags (xx), with a 400 naming the field; the contacts import holds its language column to the same rule. en when absent." example:"en"`
	TimeZone          string               `json:"timeZone,omitempty" maxLength:"64" doc:"A name of the IANA time zone database built into tocsin: a zone (America/Chicago, Etc/GMT+5) or a link to one (US/Central, Asia/Calcutta), in any case, stored as the database spells it (us/central is US/Central) and a link as the link. metaGetTimeZones lists the zones of zone.tab (one per region) and UTC; the other zones and the links are taken too. Local and localtime (the server's own zone) and Factory name no zone and are refused, as is any other name, with a 400 naming the field; the contacts import holds its timeZone column to the same rule. UTC when absent." example:"America/Chicago"`
	SelfService       *SelfServiceSettings `json:"selfServiceSettings,omitempty" doc:"Everything allowed when absent."`
	MobileApps        []MobileApp          `json:"mobileApps,omitempty" maxItems:"20"`
}

// UpdateUserProfileCommand replaces a user's base information: name,
// language, time zone, self-service settings and mobile apps. Contact
// information and notification preferences have operations of their own.
type UpdateUserProfileCommand struct {
	Name              PersonName           `json:"name"`
	PreferredLanguage string               `json:"preferredLanguage" maxLength:"35" doc:"As usersCreate takes it; a value sent back exactly as the user has it is kept as it is, even one stored before the rule that the rule refuses. en when empty." example:"es"`
	TimeZone          string               `json:"timeZone" maxLength:"64" doc:"As usersCreate takes it; a value sent back exactly as the user has it is kept as it is, even one stored before the rule that the rule refuses (Local, by a contacts import of an earlier version). UTC when empty." example:"America/Denver"`
	SelfService       *SelfServiceSettings `json:"selfServiceSettings,omitempty" doc:"Left as it is when absent."`
	MobileApps        []MobileApp          `json:"mobileApps,omitempty" maxItems:"20" doc:"Replaces the registrations when present (an empty list removes them all); left as it is when absent."`
}

// FindUserQuery selects users; every condition given must hold.
type FindUserQuery struct {
	Name       string `json:"name,omitempty" maxLength:"200" doc:"Case-insensitive part of the first, middle or last name, or of 'first last'." example:"lovelace"`
	Email      string `json:"email,omitempty" maxLength:"254" doc:"An email address, matched exactly and case-insensitively." example:"ada@example.com"`
	Phone      string `json:"phone,omitempty" maxLength:"32" doc:"A phone number; normalised to E.164 before matching." example:"+12025550123"`
	ExternalID string `json:"externalId,omitempty" maxLength:"128" example:"E-20431"`
	GroupID    string `json:"groupId,omitempty" maxLength:"20" doc:"Only direct members of this group." example:"42"`
}

// CreateExternalIdCommand associates an external id with a user.
type CreateExternalIdCommand struct {
	ExternalID string `json:"externalId" minLength:"1" maxLength:"128" doc:"Unique within the directory: another user with it is a 409. Compared in NFC, so two spellings of one name (é as one character, or e and a combining accent) are the same id. Taken in Unicode normalization form C (NFC); a control character, a bidirectional control or an invisible character (other than the joiners and variation selectors scripts and emoji need) is a 400 naming the field." example:"E-20431"`
}

// ContactTargetType says whether a verification is of an email address or a phone number.
type ContactTargetType string

// Schema implements huma.SchemaProvider.
func (ContactTargetType) Schema(r huma.Registry) *huma.Schema {
	return EnumSchema[ContactTargetType](r, "What is being verified: an email address or a phone number.", "Email", "Phone")
}

// EmailCollection lists email addresses.
type EmailCollection Collection[EmailAddress]

// PhoneCollection lists phone numbers.
type PhoneCollection Collection[PhoneNumber]

// CreateEmailCommand adds an email address to a user.
type CreateEmailCommand struct {
	Address string `json:"address" minLength:"3" maxLength:"254" doc:"An RFC 5322 address (addr-spec only, no display name or comment); stored in lower case, its local part quoted only when it must be (\"Ada\"@example.com is ada@example.com). A duplicate is a 409." example:"ada@example.com"`
	Label   string `json:"label,omitempty" enum:"work,personal,other" default:"work" doc:"What the address is used for." example:"work"`
}

// CreatePhoneCommand adds a phone number to a user.
type CreatePhoneCommand struct {
	Number  string      `json:"number" minLength:"2" maxLength:"32" doc:"The number, in E.164 (+ and country code) or national form with country. Stored in E.164; a duplicate is a 409." example:"+12025550123"`
	Country CountryCode `json:"country,omitempty" doc:"The country of a number without a leading +: an ISO 3166-1 alpha-2 code (US, GB; XK for Kosovo), either case. ZZ, digits, groups such as EU, and withdrawn or reserved codes are refused (see CountryCode)." example:"US"`
	Type    PhoneType   `json:"type,omitempty" doc:"Mobile when absent."`
	CanText *bool       `json:"canText,omitempty" doc:"Text messages may be sent to it; true when absent. Verification codes go by text only, so a number that cannot take texts cannot be verified."`
	CanCall *bool       `json:"canCall,omitempty" doc:"Voice calls may be made to it; true when absent."`
}

// CreateVerificationNonceCommand reserves a client-generated nonce that a
// resend of the verification code then spends.
type CreateVerificationNonceCommand struct {
	Nonce string `json:"nonce" minLength:"8" maxLength:"128" pattern:"^[A-Za-z0-9_-]+$" doc:"A value the client generated (a UUID or random string), unused for this address." example:"3f9c1d2e-6a8b-4c1e-9f4a-2b7d5e8c0a11"`
}

// ResendVerificationToken is a reserved nonce.
type ResendVerificationToken struct {
	Nonce             string            `json:"nonce" example:"3f9c1d2e-6a8b-4c1e-9f4a-2b7d5e8c0a11"`
	TargetType        ContactTargetType `json:"targetType"`
	Address           string            `json:"address" doc:"The normalised email address or E.164 number." example:"ada@example.com"`
	ExpiresAt         time.Time         `json:"expiresAt" doc:"The nonce must be spent on a resend before this time."`
	RemainingInWindow int               `json:"remainingInWindow" doc:"Nonces still allowed for this address in the current window before answers are 429." example:"4"`
}

// SendVerificationCommand asks for a new verification code to be sent.
type SendVerificationCommand struct {
	Nonce string `json:"nonce" minLength:"8" maxLength:"128" pattern:"^[A-Za-z0-9_-]+$" doc:"A nonce reserved with the nonce operation and not spent yet." example:"3f9c1d2e-6a8b-4c1e-9f4a-2b7d5e8c0a11"`
}

// VerifyEmailCommand submits the code a user received by email.
type VerifyEmailCommand struct {
	Code string `json:"code" minLength:"4" maxLength:"12" pattern:"^[0-9]+$" doc:"The code from the most recent email." example:"482913"`
}

// VerifyPhoneCommand submits the code a user received by text message.
type VerifyPhoneCommand struct {
	Code string `json:"code" minLength:"4" maxLength:"12" pattern:"^[0-9]+$" doc:"The code from the most recent text message." example:"482913"`
}

// VerificationAttempt is one code sent for an address and what became of it.
type VerificationAttempt struct {
	SentAt       *time.Time         `json:"sentAt,omitempty" doc:"When the code was sent."`
	ExpiresAt    *time.Time         `json:"expiresAt,omitempty" doc:"When the code stops being accepted."`
	AttemptsUsed int                `json:"attemptsUsed" doc:"Wrong codes submitted against it." example:"1"`
	MaxAttempts  int                `json:"maxAttempts" doc:"Wrong codes allowed before the code is dead." example:"5"`
	Status       VerificationStatus `json:"status"`
}

// VerificationResponse is the outcome of a successful verify.
type VerificationResponse struct {
	TargetType ContactTargetType   `json:"targetType"`
	Address    string              `json:"address" example:"ada@example.com"`
	Status     VerificationStatus  `json:"status"`
	Verified   bool                `json:"verified" example:"true"`
	VerifiedAt *time.Time          `json:"verifiedAt,omitempty"`
	Attempt    VerificationAttempt `json:"attempt" doc:"The code that was checked."`
}

// PendingDeviceType says how a pending verification's code was sent.
type PendingDeviceType string

// Schema implements huma.SchemaProvider.
func (PendingDeviceType) Schema(r huma.Registry) *huma.Schema {
	return EnumSchema[PendingDeviceType](r, "How the code was sent: Email or Sms.", "Email", "Sms")
}

// PendingVerificationAttempt is a live code, as the testing operations show it.
type PendingVerificationAttempt struct {
	DeviceType   PendingDeviceType `json:"deviceType"`
	Address      string            `json:"address" example:"ada@example.com"`
	UserID       string            `json:"userId" example:"1042"`
	DirectoryID  string            `json:"directoryId" example:"staff"`
	Code         string            `json:"code" doc:"The code that was sent (kept only while the server runs with TOCSIN_TESTING_ENDPOINTS=true)." example:"482913"`
	AttemptsUsed int               `json:"attemptsUsed" example:"0"`
	CreatedAt    time.Time         `json:"createdAt" doc:"When the code was sent."`
	ExpiresAt    time.Time         `json:"expiresAt"`
}

// GroupReference points at a group of the tenant's group tree.
type GroupReference struct {
	ID       string `json:"id" example:"42"`
	Name     string `json:"name" example:"Facilities team"`
	Path     string `json:"path" doc:"Names from the root to this group, joined by ' / ' (at most 1,000 characters: a longer one is refused when the group is created)." example:"Campus / Facilities team"`
	Depth    int    `json:"depth" example:"1"`
	IsPublic bool   `json:"isPublic"`
}

// GroupReferencePagedApiResponse is a page of group references.
type GroupReferencePagedApiResponse PagedItems[GroupReference]

// GroupSummaryPagedApiResponse is a page of groups.
type GroupSummaryPagedApiResponse PagedItems[GroupSummary]

// FindGroupQuery selects groups; every condition given must hold.
type FindGroupQuery struct {
	Name         string `json:"name,omitempty" maxLength:"200" doc:"Case-insensitive part of the group's name." example:"facilities"`
	ParentID     string `json:"parentId,omitempty" maxLength:"20" doc:"Only direct children of this group." example:"7"`
	AncestorID   string `json:"ancestorId,omitempty" maxLength:"20" doc:"Only groups below this group, at any depth." example:"7"`
	RootsOnly    bool   `json:"rootsOnly,omitempty" doc:"Only groups without a parent."`
	IsPublic     *bool  `json:"isPublic,omitempty" doc:"Only public (true) or only non-public (false) groups."`
	MemberUserID string `json:"memberUserId,omitempty" maxLength:"20" doc:"Only groups this user is a direct member of." example:"1042"`
}

// CreateGroupCommand creates a group of the tenant's group tree.
type CreateGroupCommand struct {
	Name        string `json:"name" minLength:"1" maxLength:"200" doc:"Unique among its siblings (a duplicate is a 409). Compared in NFC, so two spellings of one name (é as one character, or e and a combining accent) are the same name. Taken in Unicode normalization form C (NFC); a control character, a bidirectional control or an invisible character (other than the joiners and variation selectors scripts and emoji need) is a 400 naming the field." example:"Facilities team"`
	Description string `json:"description,omitempty" maxLength:"2000"`
	ParentID    string `json:"parentId,omitempty" maxLength:"20" doc:"The parent group; a root group when absent. The tree is at most 32 levels deep and a group's path at most 1,000 characters: a parent at depth 31, or one under which the path would be longer, is a 400." example:"7"`
	IsPublic    bool   `json:"isPublic,omitempty" doc:"Users may join it themselves."`
}

// CreateGroupMembership is the group id a user joins, sent as a JSON string.
type CreateGroupMembership string

// Schema implements huma.SchemaProvider.
func (CreateGroupMembership) Schema(r huma.Registry) *huma.Schema {
	if _, ok := r.Map()["CreateGroupMembership"]; !ok {
		s := &huma.Schema{
			Type: huma.TypeString, MinLength: ptr(1), MaxLength: ptr(20), Pattern: "^[1-9][0-9]*$",
			Description: "The id of a public group to join, as a JSON string, written as the group's id is (no leading zeros), as in the path that removes the membership.", Examples: []any{"42"},
		}
		s.PrecomputeMessages() // as EnumSchema: huma validates with these
		r.Map()["CreateGroupMembership"] = s
	}
	return &huma.Schema{Ref: "#/components/schemas/CreateGroupMembership"}
}

func ptr[T any](v T) *T { return &v }

// GroupMemberships lists the groups a user is a direct member of.
type GroupMemberships Collection[GroupReference]

// Location is a place a user wants notifications for.
type Location struct {
	ID          string      `json:"id" example:"311"`
	Name        string      `json:"name" example:"Home"`
	Address     Address     `json:"address"`
	GeoLocation GeoLocation `json:"geoLocation"`
	CreatedAt   time.Time   `json:"createdAt"`
}

// LocationCollection lists a user's locations.
type LocationCollection Collection[Location]

// LocationPagedApiResponse is a page of locations.
type LocationPagedApiResponse PagedItems[Location]

// CreateLocationCommand adds a location to a user.
type CreateLocationCommand struct {
	Name        string      `json:"name" minLength:"1" maxLength:"100" doc:"Taken in Unicode normalization form C (NFC); a control character, a bidirectional control or an invisible character (other than the joiners and variation selectors scripts and emoji need) is a 400 naming the field." example:"Home"`
	Address     *Address    `json:"address,omitempty"`
	GeoLocation GeoLocation `json:"geoLocation" doc:"Latitude in [-90, 90], longitude in [-180, 180]."`
}

// WeatherChannel is a channel weather notifications are delivered on.
type WeatherChannel string

// Schema implements huma.SchemaProvider.
func (WeatherChannel) Schema(r huma.Registry) *huma.Schema {
	return EnumSchema[WeatherChannel](r, "A channel for weather notifications: Email and Text go to the user's verified addresses and numbers, Voice calls them, MyAlertsApp notifies their registered app installations.",
		"Email", "Text", "Voice", "MyAlertsApp")
}

// WeatherNotificationCommand names a weather category and the channels for it.
type WeatherNotificationCommand struct {
	Category   string           `json:"category" minLength:"1" maxLength:"64" doc:"An id from metaGetWeatherCategories." example:"Tornado"`
	Channels   []WeatherChannel `json:"channels,omitempty" maxItems:"4" uniqueItems:"true" doc:"Channels to add or remove. Adding needs at least one; removing without any removes the category altogether."`
	LocationID string           `json:"locationId,omitempty" maxLength:"20" doc:"One of the user's locations; all of them when absent." example:"311"`
}

// AddWeatherNotificationsCommand subscribes a user to weather categories.
type AddWeatherNotificationsCommand struct {
	Notifications []WeatherNotificationCommand `json:"notifications" minItems:"1" maxItems:"50"`
}

// RemoveWeatherNotificationsCommand unsubscribes a user from weather categories or channels.
type RemoveWeatherNotificationsCommand struct {
	Notifications []WeatherNotificationCommand `json:"notifications" minItems:"1" maxItems:"50"`
}

// WeatherNotification is a user's subscription to one weather category.
type WeatherNotification struct {
	Category     string           `json:"category" example:"Tornado"`
	CategoryName string           `json:"categoryName" example:"Tornado"`
	Channels     []WeatherChannel `json:"channels"`
	LocationID   string           `json:"locationId,omitempty" doc:"The location it is for; every location of the user when absent." example:"311"`
	CreatedAt    time.Time        `json:"createdAt"`
	UpdatedAt    time.Time        `json:"updatedAt"`
}

// WeatherNotificationCollection lists a user's weather subscriptions.
type WeatherNotificationCollection Collection[WeatherNotification]

// NotificationPreferences are a user's notification settings in brief, as
// the profile carries them.
type NotificationPreferences struct {
	GroupIDs          []string `json:"groupIds"` // described by TransformSchema
	LocationIDs       []string `json:"locationIds" doc:"The user's locations."`
	WeatherCategories []string `json:"weatherCategories" doc:"Weather categories the user is subscribed to."`
}

// TransformSchema implements huma.SchemaTransformer: how many groups a
// user lists comes from storage.MaxGroupsPerPerson.
func (NotificationPreferences) TransformSchema(_ huma.Registry, s *huma.Schema) *huma.Schema {
	describe(s, "groupIds", storage.MaxGroupsPerPerson, false,
		"Groups the user is a direct member of, by path: at most %[1]d, as a user joins at most %[1]d (usersGetNotificationPreferencesById counts them all in memberships.count).")
	return s
}

// NotificationPreferencesSummary brings a user's memberships, locations and
// weather subscriptions together.
type NotificationPreferencesSummary struct {
	UserID               string                        `json:"userId" example:"1042"`
	Memberships          GroupMemberships              `json:"memberships"` // described by TransformSchema
	Locations            LocationCollection            `json:"locations"`
	WeatherNotifications WeatherNotificationCollection `json:"weatherNotifications"`
}

// TransformSchema implements huma.SchemaTransformer: how many groups a
// user lists comes from storage.MaxGroupsPerPerson.
func (NotificationPreferencesSummary) TransformSchema(_ huma.Registry, s *huma.Schema) *huma.Schema {
	describe(s, "memberships", storage.MaxGroupsPerPerson, false,
		"The groups the user is a direct member of, by path: at most %[1]d, as a user joins at most %[1]d; count counts every membership, so a count above the items says some are not listed.")
	return s
}

// LanguageCode is a language tocsin translates into.
type LanguageCode struct {
	Code       string `json:"code" doc:"BCP 47 language tag." example:"es"`
	Name       string `json:"name" doc:"The language's English name." example:"Spanish"`
	NativeName string `json:"nativeName" doc:"The language's name in itself." example:"español"`
	Written    bool   `json:"written" doc:"Messages can be translated into it in writing (email, text, app)."`
	Spoken     bool   `json:"spoken" doc:"Voice messages can be spoken in it."`
}

// AvailableLanguagesResponse lists the languages.
type AvailableLanguagesResponse struct {
	Languages []LanguageCode `json:"languages"`
}

// TimeZoneSummary is an IANA time zone with its offset now.
type TimeZoneSummary struct {
	ID            string `json:"id" doc:"IANA time zone name." example:"America/Chicago"`
	Abbreviation  string `json:"abbreviation" doc:"The zone's abbreviation now." example:"CST"`
	UTCOffset     string `json:"utcOffset" doc:"Offset from UTC now, as ±hh:mm." example:"-06:00"`
	OffsetMinutes int    `json:"offsetMinutes" doc:"Offset from UTC now, in minutes." example:"-360"`
	IsDST         bool   `json:"isDst" doc:"Daylight saving time is in effect now."`
}

// AvailableTimeZonesResponse lists the time zones.
type AvailableTimeZonesResponse struct {
	TimeZones []TimeZoneSummary `json:"timeZones"`
	AsOf      time.Time         `json:"asOf" doc:"The moment the offsets are for."`
}

// WeatherCategoryInformation describes a weather category.
type WeatherCategoryInformation struct {
	ID          string   `json:"id" example:"Tornado"`
	Name        string   `json:"name" example:"Tornado"`
	Description string   `json:"description" example:"Tornado warnings and watches."`
	Events      []string `json:"events" doc:"The alert events of national weather services this category covers."`
}

// WeatherCategoriesResponse lists the weather categories.
type WeatherCategoriesResponse struct {
	Categories []WeatherCategoryInformation `json:"categories"`
}
