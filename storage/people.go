package storage

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
