package storage

import (
	"encoding/json"
	"fmt"
	"time"
)

// Profile is a person's names, language and time zone, as the people table
// holds them; the rows that contacts and directory read from people embed
// it.
type Profile struct {
	FirstName  string `db:"first_name"`
	MiddleName string `db:"middle_name"`
	LastName   string `db:"last_name"`
	Language   string `db:"language"`
	TimeZone   string `db:"time_zone"`
}

// VerificationStatus is the verification state of an address or number
// (and of its most recent code).
type VerificationStatus string

// The verification states: Unverified (no code yet), Pending (a live code),
// Verified, Expired (the last code expired unused) and Failed (its attempts
// were used up, or it could not be delivered).
const (
	VerificationUnverified VerificationStatus = "Unverified"
	VerificationPending    VerificationStatus = "Pending"
	VerificationVerified   VerificationStatus = "Verified"
	VerificationExpired    VerificationStatus = "Expired"
	VerificationFailed     VerificationStatus = "Failed"
)

// The rows of a person's addresses, numbers, devices and locations, read
// by contacts (for a page of people) and directory (for one user). The
// Columns constants list what a SELECT or RETURNING reads into each.

// Email is an email address of a person (person_emails).
type Email struct {
	PersonID   int64              `db:"person_id"`
	Address    string             `db:"address"`
	Label      string             `db:"label"`
	Status     VerificationStatus `db:"verification_status"`
	VerifiedAt *time.Time         `db:"verified_at"`
	CreatedAt  time.Time          `db:"created_at"`
}

// Phone is a phone number (E.164) of a person (person_phones).
type Phone struct {
	PersonID   int64              `db:"person_id"`
	Number     string             `db:"number"`
	Type       string             `db:"phone_type"`
	CanText    bool               `db:"can_text"`
	CanCall    bool               `db:"can_call"`
	Status     VerificationStatus `db:"verification_status"`
	VerifiedAt *time.Time         `db:"verified_at"`
	CreatedAt  time.Time          `db:"created_at"`
}

// Device is a push or app device of a person (person_devices).
type Device struct {
	ID        int64     `db:"id"`
	PersonID  int64     `db:"person_id"`
	App       string    `db:"app"`
	Platform  string    `db:"platform"`
	Token     string    `db:"token"`
	CreatedAt time.Time `db:"created_at"`
}

// Location is a place a person wants notifications for
// (person_locations); Address is the stored JSON address.
type Location struct {
	ID        int64           `db:"id"`
	PersonID  int64           `db:"person_id"`
	Name      string          `db:"name"`
	Address   json.RawMessage `db:"address"`
	Latitude  float64         `db:"latitude"`
	Longitude float64         `db:"longitude"`
	CreatedAt time.Time       `db:"created_at"`
}

// The columns of Email, Phone, Device and Location.
const (
	EmailColumns    = `person_id, address, label, verification_status, verified_at, created_at`
	PhoneColumns    = `person_id, number, phone_type, can_text, can_call, verification_status, verified_at, created_at`
	DeviceColumns   = `id, person_id, app, platform, token, created_at`
	LocationColumns = `id, person_id, name, address, latitude, longitude, created_at`
)

// The most rows of each kind one person may hold. Every path that adds
// them (the directory's operations, a user's mobileApps, a contacts
// import) refuses to go past them, so what reads a person's rows (a
// user's profile, a page of contacts) stays bounded.
const (
	MaxEmailsPerPerson    = 20
	MaxPhonesPerPerson    = 20
	MaxDevicesPerPerson   = 50
	MaxLocationsPerPerson = 100
	// MaxWeatherPerPerson counts weather subscriptions: one per category
	// and location (or all locations).
	MaxWeatherPerPerson = 100
	// MaxGroupsPerPerson counts the groups a person is a direct member of.
	MaxGroupsPerPerson = 500
)

// LimitError says that a change would leave a person holding more rows of
// a kind than its limit; the change is not made.
type LimitError struct {
	// What names the rows: "email addresses", "phone numbers", …
	What string
	// Limit is the most a person may hold.
	Limit int
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("a person holds at most %d %s", e.Limit, e.What)
}
