package model

import (
	"time"

	"github.com/danielgtaylor/huma/v2"
)

// PersonName is a person's name.
type PersonName struct {
	First  string `json:"first" maxLength:"100" doc:"Given name. Taken in Unicode normalization form C (NFC); a control character, a bidirectional control or an invisible character (other than the joiners and variation selectors scripts and emoji need) is a 400 naming the field." example:"Ada"`
	Middle string `json:"middle,omitempty" maxLength:"100" doc:"Middle name or initial, held to the rule of first."`
	Last   string `json:"last" maxLength:"100" doc:"Family name, held to the rule of first." example:"Lovelace"`
}

// VerificationStatus is where an email address or phone number stands in its
// verification: Unverified (never sent a code), Pending (a code was sent and
// is live), Verified, Expired (the last code expired unused) or Failed (the
// last code's attempts were used up, or it could not be delivered).
type VerificationStatus string

// The verification states.
const (
	VerificationUnverified VerificationStatus = "Unverified"
	VerificationPending    VerificationStatus = "Pending"
	VerificationVerified   VerificationStatus = "Verified"
	VerificationExpired    VerificationStatus = "Expired"
	VerificationFailed     VerificationStatus = "Failed"
)

// Schema implements huma.SchemaProvider.
func (VerificationStatus) Schema(r huma.Registry) *huma.Schema {
	return EnumSchema[VerificationStatus](r,
		"Unverified: no code sent yet. Pending: a code was sent and is live. Verified: the last code matched. Expired: the last code expired unused. Failed: the last code's attempts were used up, or it could not be delivered. Unverified, Expired and Failed go to Pending with a resend; Pending goes to Verified, Expired or Failed.",
		VerificationUnverified, VerificationPending, VerificationVerified, VerificationExpired, VerificationFailed)
}

// PhoneType says what kind of line a phone number is.
type PhoneType string

// Schema implements huma.SchemaProvider.
func (PhoneType) Schema(r huma.Registry) *huma.Schema {
	return EnumSchema[PhoneType](r, "The kind of line. A Fax number is reached by the fax channel only (it takes no texts or calls).", "Mobile", "Home", "Work", "Other", "Fax")
}

// AddressType says what a postal address is.
type AddressType string

// Schema implements huma.SchemaProvider.
func (AddressType) Schema(r huma.Registry) *huma.Schema {
	return EnumSchema[AddressType](r, "What the address is.", "Home", "Work", "Other")
}

// EmailAddress is one email address of a person.
type EmailAddress struct {
	Address            string             `json:"address" format:"email" maxLength:"254" doc:"The address, stored in lower case and matched case-insensitively." example:"ada@example.com"`
	Label              string             `json:"label,omitempty" enum:"work,personal,other" doc:"What the address is used for." example:"work"`
	VerificationStatus VerificationStatus `json:"verificationStatus" readOnly:"true"`
	VerifiedAt         *time.Time         `json:"verifiedAt,omitempty" readOnly:"true" doc:"When the address was verified."`
	CreatedAt          time.Time          `json:"createdAt" readOnly:"true"`
}

// PhoneNumber is one phone number of a person.
type PhoneNumber struct {
	Number             string             `json:"number" maxLength:"32" doc:"The number in E.164 form." example:"+15551234567"`
	Type               PhoneType          `json:"type"`
	CanText            bool               `json:"canText" doc:"Text messages may be sent to it."`
	CanCall            bool               `json:"canCall" doc:"Voice calls may be made to it."`
	VerificationStatus VerificationStatus `json:"verificationStatus" readOnly:"true"`
	VerifiedAt         *time.Time         `json:"verifiedAt,omitempty" readOnly:"true" doc:"When the number was verified."`
	CreatedAt          time.Time          `json:"createdAt" readOnly:"true"`
}

// ContactInformationDevice is a device that receives push and app notifications.
type ContactInformationDevice struct {
	ID        int64     `json:"id" readOnly:"true"`
	App       string    `json:"app" enum:"push,myalerts" doc:"Which channel reaches the device: push (PushChannel) or the alerts app (MyAlertsAppChannel)."`
	Platform  string    `json:"platform" enum:"android,ios,web" doc:"The device platform."`
	Token     string    `json:"token" minLength:"8" maxLength:"4096" doc:"The push token the platform issued."`
	CreatedAt time.Time `json:"createdAt" readOnly:"true"`
}

// CreateDeviceCommand registers a device token for push notifications.
type CreateDeviceCommand struct {
	Platform string `json:"platform" enum:"android,ios,web" doc:"The device platform." example:"ios"`
	Token    string `json:"token" minLength:"8" maxLength:"4096" doc:"The push token the platform issued; unique among the tenant's push devices (a token registered already is a 409)." example:"ExponentPushToken[xxxxxxxxxxxxxxxxxxxxxx]"`
}

// Address is a postal address.
type Address struct {
	Type       AddressType `json:"type,omitempty"`
	Street     string      `json:"street,omitempty" maxLength:"200" example:"1 Main St"`
	City       string      `json:"city,omitempty" maxLength:"100" example:"Springfield"`
	Region     string      `json:"region,omitempty" maxLength:"100" doc:"State, province or region." example:"IL"`
	PostalCode string      `json:"postalCode,omitempty" maxLength:"20" example:"62701"`
	Country    CountryCode `json:"country,omitempty" doc:"The country: an ISO 3166-1 alpha-2 code (US, GB; XK for Kosovo), either case, kept in capitals. ZZ, digits, groups such as EU, and withdrawn or reserved codes are refused (see CountryCode)." example:"US"`
}

// ContactInformation is how a person can be reached.
type ContactInformation struct {
	Emails  []EmailAddress             `json:"emails" doc:"Email addresses, with their verification state."`
	Phones  []PhoneNumber              `json:"phones" doc:"Phone numbers, with their verification state."`
	Devices []ContactInformationDevice `json:"devices" doc:"Devices for push and app notifications."`
}

// GeoLocation is a point on Earth (WGS 84).
type GeoLocation struct {
	Latitude  float64 `json:"latitude" minimum:"-90" maximum:"90" doc:"Degrees north." example:"41.8781"`
	Longitude float64 `json:"longitude" minimum:"-180" maximum:"180" doc:"Degrees east." example:"-87.6298"`
}

// Reference points at another resource by id and name.
type Reference struct {
	ID   string `json:"id" doc:"The id of the resource." example:"42"`
	Name string `json:"name,omitempty" doc:"Its display name." example:"Facilities team"`
}

// GroupSummary describes a group of the tenant's group tree.
type GroupSummary struct {
	ID          int64  `json:"id" example:"42"`
	Name        string `json:"name" example:"Facilities team"`
	Description string `json:"description,omitempty"`
	ParentID    *int64 `json:"parentId,omitempty" doc:"The parent group; absent for a root group."`
	Path        string `json:"path" doc:"Names from the root to this group, joined by ' / ' (at most 1,000 characters: a longer one is refused when the group is created)." example:"Campus / Facilities team"`
	Depth       int    `json:"depth" doc:"0 for a root group." example:"1"`
	IsPublic    bool   `json:"isPublic" doc:"Users may join it themselves (see groupsDiscoverAvailableGroups)."`
	MemberCount int64  `json:"memberCount" doc:"Direct members."`
}
