package storage

import "time"

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

// The rows of a person's addresses, numbers and devices, read by contacts
// (for a page of people) and directory (for one user). The Columns
// constants list what a SELECT or RETURNING reads into each.

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

// The columns of Email, Phone and Device.
const (
	EmailColumns  = `person_id, address, label, verification_status, verified_at, created_at`
	PhoneColumns  = `person_id, number, phone_type, can_text, can_call, verification_status, verified_at, created_at`
	DeviceColumns = `id, person_id, app, platform, token, created_at`
)
