package directory

import (
	"context"
	"fmt"

	"github.com/jmoiron/sqlx"

	"github.com/tocsin/tocsin/storage"
)

// personTable is a table of rows a person has (addresses, numbers,
// devices); key is the column that names one row of the person.
type personTable struct{ table, key string }

// match is the condition that finds one row of a person: $1 is the tenant,
// $2 the person and $3 the key.
func (t personTable) match() string {
	return `tenant_id = $1 AND person_id = $2 AND ` + t.key + ` = $3`
}

// personRows reads a person's rows of a personTable into T: cols are the
// columns read, what names the rows in errors.
type personRows[T any] struct {
	personTable
	cols, what string
}

var (
	emails    = personRows[storage.Email]{personTable{"person_emails", "address"}, storage.EmailColumns, "emails"}
	phones    = personRows[storage.Phone]{personTable{"person_phones", "number"}, storage.PhoneColumns, "phones"}
	devices   = personRows[storage.Device]{personTable{"person_devices", "id"}, storage.DeviceColumns, "devices"}
	locations = personRows[storage.Location]{personTable{"person_locations", "id"}, storage.LocationColumns, "locations"}
)

// get reads the person's row named key; none is storage.ErrNotFound.
func (r personRows[T]) get(ctx context.Context, q Querier, tenant string, person int64, key any) (T, error) {
	return storage.GetOne[T](ctx, q, "read "+r.what, `SELECT `+r.cols+` FROM `+r.table+` WHERE `+r.match(), tenant, person, key)
}

// list reads every row of the person in the order they were added.
func (r personRows[T]) list(ctx context.Context, q Querier, tenant string, person int64) ([]T, error) {
	out := []T{}
	if err := q.SelectContext(ctx, &out, `SELECT `+r.cols+` FROM `+r.table+` WHERE tenant_id = $1 AND person_id = $2 ORDER BY id`, tenant, person); err != nil {
		return nil, fmt.Errorf("list %s: %w", r.what, err)
	}
	return out, nil
}

// addresses is the table of the addresses of kind k.
func (k Kind) addresses() personTable {
	if k == KindPhone {
		return phones.personTable
	}
	return emails.personTable
}

// removeAddress removes an address of kind k with its verification state.
func removeAddress(ctx context.Context, tx *sqlx.Tx, tenant string, person int64, k Kind, address string) error {
	if err := lockPerson(ctx, tx, tenant, person); err != nil {
		return err
	}
	t := k.addresses()
	if err := storage.ExecOne(ctx, tx, "delete "+string(k), `DELETE FROM `+t.table+` WHERE `+t.match(), tenant, person, address); err != nil {
		return err
	}
	return forgetVerification(ctx, tx, tenant, person, k, address)
}

// AddEmail adds a normalised address to the user; an existing one is
// ErrConflict, one past storage.MaxEmailsPerPerson a *storage.LimitError.
func AddEmail(ctx context.Context, tx *sqlx.Tx, tenant string, person int64, address, label string) (storage.Email, error) {
	return emails.add(ctx, tx, emailLimit, "email", tenant, person, `
		INSERT INTO person_emails (tenant_id, person_id, address, label) VALUES ($1, $2, $3, $4)
		ON CONFLICT (person_id, address) DO NOTHING`, address, label)
}

// GetEmail reads one address of the user.
func GetEmail(ctx context.Context, q Querier, tenant string, person int64, address string) (storage.Email, error) {
	return emails.get(ctx, q, tenant, person, address)
}

// RemoveEmail removes an address with its verification state.
func RemoveEmail(ctx context.Context, tx *sqlx.Tx, tenant string, person int64, address string) error {
	return removeAddress(ctx, tx, tenant, person, KindEmail, address)
}

// AddPhone adds an E.164 number to the user; an existing one is
// ErrConflict, one past storage.MaxPhonesPerPerson a *storage.LimitError.
func AddPhone(ctx context.Context, tx *sqlx.Tx, tenant string, person int64, p storage.Phone) (storage.Phone, error) {
	return phones.add(ctx, tx, phoneLimit, "phone", tenant, person, `
		INSERT INTO person_phones (tenant_id, person_id, number, phone_type, can_text, can_call) VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (person_id, number) DO NOTHING`, p.Number, p.Type, p.CanText, p.CanCall)
}

// GetPhone reads one number of the user.
func GetPhone(ctx context.Context, q Querier, tenant string, person int64, number string) (storage.Phone, error) {
	return phones.get(ctx, q, tenant, person, number)
}

// RemovePhone removes a number with its verification state.
func RemovePhone(ctx context.Context, tx *sqlx.Tx, tenant string, person int64, number string) error {
	return removeAddress(ctx, tx, tenant, person, KindPhone, number)
}

// ContactInformation reads the user's emails, phones and devices.
func ContactInformation(ctx context.Context, q Querier, tenant string, person int64) (Contacts, error) {
	var ci Contacts
	var err error
	if ci.Emails, err = emails.list(ctx, q, tenant, person); err != nil {
		return ci, err
	}
	if ci.Phones, err = phones.list(ctx, q, tenant, person); err != nil {
		return ci, err
	}
	ci.Devices, err = devices.list(ctx, q, tenant, person)
	return ci, err
}

// add inserts a row of the person and reads it back: insert is an INSERT
// … ON CONFLICT DO NOTHING whose $1 and $2 are the tenant and the person,
// and args its further parameters. A row that was there already is
// storage.ErrConflict, one past l a *storage.LimitError; one names the row
// in errors.
func (r personRows[T]) add(ctx context.Context, tx *sqlx.Tx, l personLimit, one, tenant string, person int64, insert string, args ...any) (T, error) {
	var row T
	err := tx.QueryRowxContext(ctx, insert+`
		RETURNING `+r.cols, append([]any{tenant, person}, args...)...).StructScan(&row)
	switch {
	case storage.NotFound(err) == storage.ErrNotFound:
		return row, storage.ErrConflict
	case err != nil:
		return row, fmt.Errorf("insert %s: %w", one, err)
	}
	return row, l.check(ctx, tx, tenant, person)
}
