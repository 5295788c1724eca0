package model

import (
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/tocsin/tocsin/api/rest"
	"github.com/tocsin/tocsin/storage/contacts"
)

// ChatPlatform is the team-chat platform of a ChatUser.
type ChatPlatform string

// Schema implements huma.SchemaProvider.
func (ChatPlatform) Schema(r huma.Registry) *huma.Schema {
	return EnumSchema[ChatPlatform](r, "The team-chat platform an account is on.",
		"slack", "teams", "googlechat", "webex", "mattermost", "other")
}

// ChatUser is a team-chat account through which a contact can be reached.
type ChatUser struct {
	Platform    ChatPlatform `json:"platform"`
	UserID      string       `json:"userId" minLength:"1" maxLength:"200" doc:"The account's id on the platform." example:"U024BE7LH"`
	DisplayName string       `json:"displayName,omitempty" maxLength:"200" doc:"The account's display name, when known." example:"Ada Lovelace"`
}

// ContactInformationEmailAddress is an email address as it appears on a contact.
type ContactInformationEmailAddress struct {
	Address            string             `json:"address" format:"email" maxLength:"254" doc:"The address, in lower case." example:"ada@example.com"`
	Label              string             `json:"label" enum:"work,personal,other" doc:"What the address is used for." example:"work"`
	VerificationStatus VerificationStatus `json:"verificationStatus"`
	VerifiedAt         *time.Time         `json:"verifiedAt,omitempty" doc:"When the address was verified."`
}

// ContactInformationPhone is a phone number as it appears on a contact.
type ContactInformationPhone struct {
	Number             string             `json:"number" maxLength:"32" doc:"The number in E.164 form." example:"+15551234567"`
	Type               PhoneType          `json:"type"`
	CanText            bool               `json:"canText" doc:"Text messages may be sent to it."`
	CanCall            bool               `json:"canCall" doc:"Voice calls may be made to it."`
	VerificationStatus VerificationStatus `json:"verificationStatus"`
	VerifiedAt         *time.Time         `json:"verifiedAt,omitempty" doc:"When the number was verified."`
}

// ContactLocation is a place a contact wants notifications for.
type ContactLocation struct {
	ID          int64       `json:"id" example:"7"`
	Name        string      `json:"name" doc:"The contact's name for the place." example:"Home"`
	Address     *Address    `json:"address,omitempty" doc:"The postal address, when known."`
	GeoLocation GeoLocation `json:"geoLocation"`
}

// DisplayRole is a role a contact holds, such as "Floor warden"; alerts can
// address contacts by role.
type DisplayRole struct {
	Name string `json:"name" minLength:"1" maxLength:"100" doc:"The role's name, as written on the contact." example:"Floor warden"`
}

// DisplayGroup is a group a contact is a member of, as shown on the contact.
type DisplayGroup struct {
	ID       int64     `json:"id" example:"42"`
	Name     string    `json:"name" example:"Night shift"`
	ParentID *int64    `json:"parentId,omitempty" doc:"The parent group; absent for a root group." example:"5"`
	Path     string    `json:"path" doc:"Names from the root to this group, joined by ' / '." example:"Campus / Facilities / Night shift"`
	Depth    int       `json:"depth" doc:"0 for a root group." example:"2"`
	Since    time.Time `json:"since" doc:"When the contact joined the group."`
}

// Contact is a person of the tenant that alerts can reach. Directory users
// are contacts too (with directoryId set): there is one set of people.
type Contact struct {
	ID                         int64                            `json:"id" doc:"The contact id." example:"1017"`
	ExternalID                 string                           `json:"externalId,omitempty" maxLength:"200" doc:"The id the tenant's own systems use for the contact." example:"EMP-0042"`
	DirectoryID                string                           `json:"directoryId,omitempty" doc:"The directory of a directory user; absent for plain contacts." example:"staff"`
	Name                       PersonName                       `json:"name"`
	Language                   string                           `json:"language" doc:"The contact's preferred language: a BCP 47 tag in its canonical form, by the rule usersCreate and the contacts import share. A value stored before that rule is answered as stored." example:"en"`
	TimeZone                   string                           `json:"timeZone" doc:"A name of the IANA time zone database, a zone or a link to one, as the database spells it, by the rule usersCreate and the contacts import share. A value stored before that rule is answered as stored." example:"America/Chicago"`
	Emails                     []ContactInformationEmailAddress `json:"emails"`
	Phones                     []ContactInformationPhone        `json:"phones"`
	Devices                    []ContactInformationDevice       `json:"devices" doc:"Devices for push and app notifications."`
	ChatUsers                  []ChatUser                       `json:"chatUsers" doc:"Team-chat accounts."`
	Locations                  []ContactLocation                `json:"locations" doc:"Places the contact wants notifications for."`
	Groups                     []DisplayGroup                   `json:"groups"`                         // described by TransformSchema
	GroupCount                 int                              `json:"groupCount" example:"1"`         // described by TransformSchema
	GroupCountExact            bool                             `json:"groupCountExact" example:"true"` // described by TransformSchema
	Roles                      []DisplayRole                    `json:"roles"`
	DistributionLists          []Reference                      `json:"distributionLists"`                           // described by TransformSchema
	DistributionListCount      int                              `json:"distributionListCount" example:"1"`           // described by TransformSchema
	DistributionListCountExact bool                             `json:"distributionListCountExact" example:"true"`   // described by TransformSchema
	CustomFields               map[string]string                `json:"customFields" example:"{\"building\":\"A\"}"` // described by TransformSchema
	CustomFieldsOmitted        bool                             `json:"customFieldsOmitted,omitempty"`               // described by TransformSchema
	CreatedAt                  time.Time                        `json:"createdAt"`
	UpdatedAt                  time.Time                        `json:"updatedAt"`
}

// TransformSchema implements huma.SchemaTransformer: how many groups and
// distribution lists a contact lists, and how far they are counted, comes
// from storage/contacts.
func (Contact) TransformSchema(_ huma.Registry, s *huma.Schema) *huma.Schema {
	describe(s, "groups", contacts.MaxPageGroups, true,
		"Groups the contact is a direct member of, by path: all of them up to %d, and beyond that the %[1]d of the lowest ids (the oldest groups, ancestors before their subgroups); groupCount says how many there are.")
	describe(s, "distributionLists", contacts.MaxPageLists, true,
		"Distribution lists the contact is on, by name: all of them up to %d, and beyond that the %[1]d newest; distributionListCount says how many there are.")
	describe(s, "groupCount", contacts.MaxCountedMemberships, false,
		"How many groups the contact is a direct member of; more than the groups listed when some are not. "+
			"Counted up to %d, the most a contact may join, so exact unless groupCountExact is false (a contact given more before that limit), and then at least %[1]d.")
	describe(s, "groupCountExact", contacts.MaxCountedMemberships, false,
		"Whether groupCount is exact: false only for a contact in more than %d groups.")
	describe(s, "distributionListCount", contacts.MaxCountedMemberships, false,
		"How many distribution lists the contact is on; more than the lists listed when some are not. "+
			"Counted up to %d, so that a page of contacts reads a bounded number of index entries whoever is on it: exact unless distributionListCountExact is false, and then at least %[1]d.")
	describe(s, "distributionListCountExact", contacts.MaxCountedMemberships, false,
		"Whether distributionListCount is exact: false for a contact on more than %d lists.")
	describe(s, "customFields", contacts.MaxPageCustomBytes, false,
		"Custom fields of the tenant's choosing (at most 200 a contact). A page carries those of its contacts, in order, while together they take at most %d bytes as stored JSON text; "+
			"the contacts after them have an empty object here and customFieldsOmitted true. The first contact of a page always carries its own, so a smaller page (pageSize=1 at the contact's place) reads them.")
	describe(s, "customFieldsOmitted", contacts.MaxPageCustomBytes, false,
		"True when the page left the contact's custom fields out, to carry at most %d bytes of custom fields: read them on a smaller page. Absent otherwise.")
	return s
}

// ContactSummary is a contact in short: enough to recognise and reach it.
type ContactSummary struct {
	ID           int64      `json:"id" example:"1017"`
	ExternalID   string     `json:"externalId,omitempty" example:"EMP-0042"`
	DirectoryID  string     `json:"directoryId,omitempty" example:"staff"`
	Name         PersonName `json:"name"`
	PrimaryEmail string     `json:"primaryEmail,omitempty" doc:"The contact's first email address." example:"ada@example.com"`
	PrimaryPhone string     `json:"primaryPhone,omitempty" doc:"The contact's first phone number." example:"+15551234567"`
}

// PagedContactResponse is one page of contacts.
type PagedContactResponse PagedItems[Contact]

// FindContactRequest filters contacts; every given filter must match, and
// an empty request matches every contact of the tenant.
type FindContactRequest struct {
	Name               string            `json:"name,omitempty" maxLength:"200" doc:"Matches contacts whose first or last name starts with it, case-insensitively. With several words, the first must start the first name and the last the last name (or the whole starts either name)." example:"ada"`
	Email              string            `json:"email,omitempty" maxLength:"254" doc:"Matches contacts with exactly this email address (case-insensitive)." example:"ada@example.com"`
	Phone              string            `json:"phone,omitempty" maxLength:"32" doc:"Matches contacts with this phone number; spaces, dots, dashes and parentheses are ignored, and it must be in E.164 form." example:"+15551234567"`
	ExternalID         string            `json:"externalId,omitempty" maxLength:"200" doc:"Matches contacts with exactly this external id." example:"EMP-0042"`
	GroupID            int64             `json:"groupId,omitempty" minimum:"1" doc:"Matches members of this group and, unless includeSubgroups is false, of every group below it." example:"42"`
	IncludeSubgroups   *bool             `json:"includeSubgroups,omitempty" doc:"Whether groupId also matches members of its subgroups (default true)."`
	DistributionListID int64             `json:"distributionListId,omitempty" minimum:"1" doc:"Matches the members of this distribution list." example:"3"`
	CustomFields       map[string]string `json:"customFields,omitempty" maxProperties:"20" doc:"Matches contacts having every one of these custom fields with exactly this value." example:"{\"building\":\"A\"}"`
	Role               string            `json:"role,omitempty" maxLength:"100" doc:"Matches contacts holding this role (exact)." example:"Floor warden"`
}

// DistributionProfile is a distribution list: a named set of contacts,
// made from a CSV file.
type DistributionProfile struct {
	ID          int64     `json:"id" example:"3"`
	Name        string    `json:"name" example:"Building A evacuation"`
	Description string    `json:"description,omitempty" example:"Everyone badged into building A"`
	MemberCount int64     `json:"memberCount" doc:"Contacts on the list." example:"1250"`
	CreatedAt   time.Time `json:"createdAt"`
	UpdatedAt   time.Time `json:"updatedAt"`
}

// PagedDistributionProfileResponse is one page of distribution lists.
type PagedDistributionProfileResponse PagedItems[DistributionProfile]

// GetDistributionListRecipientsResponse is a distribution list with one page
// of its recipients.
type GetDistributionListRecipientsResponse struct {
	DistributionList DistributionProfile `json:"distributionList"`
	Paging           rest.Paging         `json:"paging"`
	Recipients       []ContactSummary    `json:"recipients"`
}

// CreateDistributionListFromFileRequest is the multipart/form-data body of
// createFromFile.
type CreateDistributionListFromFileRequest struct {
	File        string `json:"file" format:"binary" doc:"The CSV file (UTF-8, sent as text/csv), laid out like the contacts export (see GET /v2/contacts/export): a header row with at least firstName and lastName, then one contact per row."`
	Name        string `json:"name" minLength:"1" maxLength:"200" doc:"The new list's name, unique in the tenant (a taken name is a 409). Compared in NFC, so two spellings of one name (é as one character, or e and a combining accent) are the same name. Taken in Unicode normalization form C (NFC); a control character, a bidirectional control or an invisible character (other than the joiners and variation selectors scripts and emoji need) is a 400 naming the field." example:"Building A evacuation"`
	Description string `json:"description,omitempty" maxLength:"2000" doc:"What the list is for." example:"Everyone badged into building A"`
}

// DistributionListError is a problem with one row (or one cell) of an
// imported file; the row was skipped.
type DistributionListError struct {
	Line    int    `json:"line" doc:"The file line the row starts on; the header is line 1." example:"17"`
	Column  string `json:"column,omitempty" doc:"The column of the failing cell, when one cell is at fault." example:"emails"`
	Value   string `json:"value,omitempty" doc:"The failing value: its first 40 characters, then … when it is longer." example:"ada@"`
	Message string `json:"message" doc:"What is wrong; where it quotes the value, or an item of it, at most its first 40 characters, then …." example:"\"ada@\" is not an email address"`
}

// CreateDistributionListFromFileResponse says what an import did.
type CreateDistributionListFromFileResponse struct {
	DistributionList DistributionProfile     `json:"distributionList"`
	Rows             int64                   `json:"rows" doc:"Data rows in the file (empty lines are not counted)." example:"1000"`
	Created          int64                   `json:"created" doc:"Contacts created." example:"900"`
	Updated          int64                   `json:"updated" doc:"Existing contacts that changed." example:"80"`
	Unchanged        int64                   `json:"unchanged" doc:"Existing contacts matched without a change." example:"15"`
	Skipped          int64                   `json:"skipped" doc:"Rows skipped because of a problem." example:"5"`
	ErrorCount       int64                   `json:"errorCount" doc:"All row problems; errors lists at most the first 1000." example:"5"`
	Errors           []DistributionListError `json:"errors" doc:"Row problems, by line; at most 1000, each under 1 KiB, so the answer stays under about 1 MiB whatever the file."`
}

// GroupTreeNode is a group of the tenant's group tree.
type GroupTreeNode struct {
	ID          int64  `json:"id" example:"42"`
	Name        string `json:"name" example:"Night shift"`
	Description string `json:"description,omitempty"`
	ParentID    *int64 `json:"parentId,omitempty" doc:"The parent group; absent for a root group." example:"5"`
	Depth       int    `json:"depth" doc:"0 for a root group." example:"2"`
	Path        string `json:"path" doc:"Names from the root to this group, joined by ' / ' (at most 1,000 characters: a longer one is refused when the group is created)." example:"Campus / Facilities / Night shift"`
	IDPath      string `json:"idPath" doc:"Ids from the root to this group, between slashes." example:"/1/5/42/"`
	IsPublic    bool   `json:"isPublic" doc:"Users may join it themselves."`
	ChildCount  int64  `json:"childCount" doc:"Direct subgroups." example:"3"`
	MemberCount int64  `json:"memberCount" doc:"Direct members." example:"120"`
}

// PagedGroupTreeNodeResponse is one page of the group tree.
type PagedGroupTreeNodeResponse PagedItems[GroupTreeNode]

// CreateShortenedUrlRequest asks for a short link to a URL.
type CreateShortenedUrlRequest struct {
	URL       string     `json:"url" format:"uri" minLength:"10" maxLength:"2048" doc:"The target: an absolute http or https URL." example:"https://alerts.example.com/a/1017?r=88"`
	ExpiresAt *time.Time `json:"expiresAt,omitempty" doc:"When the link stops working (answering 410 Gone); it must be in the future. Never, when absent."`
}

// ShortenedUrl is a short link.
type ShortenedUrl struct {
	Code      string     `json:"code" minLength:"8" maxLength:"8" doc:"The code: 8 random base62 characters." example:"aZ3kP9qL"`
	ShortURL  string     `json:"shortUrl" format:"uri" doc:"The link to hand out: GET on it redirects to the target." example:"https://tocsin.example.com/s/aZ3kP9qL"`
	TargetURL string     `json:"targetUrl" format:"uri" doc:"Where the link leads." example:"https://alerts.example.com/a/1017?r=88"`
	ExpiresAt *time.Time `json:"expiresAt,omitempty" doc:"When the link stops working; absent for never."`
	Clicks    int64      `json:"clicks" doc:"Redirects served so far." example:"0"`
	CreatedAt time.Time  `json:"createdAt"`
}

// ShortenedUrlResponse answers createShortenedUrl.
type ShortenedUrlResponse struct {
	ShortenedUrl ShortenedUrl `json:"shortenedUrl"`
	Reused       bool         `json:"reused" doc:"True when the tenant had already shortened this target with the same expiry and its code was returned."`
}
