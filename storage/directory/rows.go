package directory

import (
	"encoding/json"
	"time"

	"github.com/tocsin/tocsin/storage"
)

// The rows this package reads and writes. The API maps them to its own
// response and command types (api/directory); storage knows nothing of those.

// Contacts are a person's emails, phones and devices.
type Contacts struct {
	Emails  []storage.Email
	Phones  []storage.Phone
	Devices []storage.Device
}

// Group is a group of the tenant's tree with its names path (root first,
// joined by " / ") and how many direct members it has.
type Group struct {
	ID          int64
	Name        string
	Description string
	ParentID    *int64
	Path        string
	Depth       int
	IsPublic    bool
	MemberCount int64
}

// SelfService is what a user may do on their own, stored as JSON.
type SelfService struct {
	CanJoinGroups        bool `json:"canJoinGroups"`
	ShowInGroupDirectory bool `json:"showInGroupDirectory"`
}

// MobileApp is an app installation of a user, stored as JSON; one with a
// push token is also one of the user's devices.
type MobileApp struct {
	InstallationID string    `json:"installationId"`
	Platform       string    `json:"platform"`
	AppVersion     string    `json:"appVersion,omitempty"`
	DeviceName     string    `json:"deviceName,omitempty"`
	PushToken      string    `json:"pushToken,omitempty"`
	RegisteredAt   time.Time `json:"registeredAt,omitempty"`
}

// Profile is a user's names, language and time zone (the columns of
// people that contacts reads too).
type Profile = storage.Profile

// UserSummary is a user as listed: profile, addresses and numbers.
type UserSummary struct {
	ID         int64
	ExternalID string
	Profile
	Emails    []string
	Phones    []string
	CreatedAt time.Time
}

// NewLocation is what adding a location writes; a nil Address is stored as {}.
type NewLocation struct {
	Name      string
	Address   json.RawMessage
	Latitude  float64
	Longitude float64
}

// Weather is a person's weather subscription to a category, for one location
// or (LocationID nil) all of them.
type Weather struct {
	Category   string
	LocationID *int64
	Channels   []string
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// Attempt is the state of an address's most recent code.
type Attempt struct {
	SentAt       *time.Time
	ExpiresAt    *time.Time
	AttemptsUsed int
	MaxAttempts  int
	Status       storage.VerificationStatus
}

// PendingCode is a live code with its plain text (kept only for the testing
// operations).
type PendingCode struct {
	Kind         Kind      `db:"kind"`
	Address      string    `db:"address"`
	UserID       int64     `db:"person_id"`
	DirectoryID  string    `db:"directory_id"`
	Code         string    `db:"testing_code"`
	AttemptsUsed int       `db:"attempts"`
	SentAt       time.Time `db:"sent_at"`
	ExpiresAt    time.Time `db:"expires_at"`
}
