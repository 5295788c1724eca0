package directory

import (
	"context"
	"fmt"

	"github.com/jmoiron/sqlx"

	"github.com/tocsin/tocsin/storage"
)

const emailCols = `address, label, verification_status, verified_at, created_at`

// AddEmail adds a normalised address to the user; an existing one is ErrConflict.
func AddEmail(ctx context.Context, tx *sqlx.Tx, tenant string, person int64, address, label string) (Email, error) {
	var e Email
	err := insertNew(ctx, tx, &e, "email", `
		INSERT INTO person_emails (tenant_id, person_id, address, label) VALUES ($1, $2, $3, $4)
		ON CONFLICT (person_id, address) DO NOTHING
		RETURNING `+emailCols, tenant, person, address, label)
	return e, err
}

// GetEmail reads one address of the user.
func GetEmail(ctx context.Context, q Querier, tenant string, person int64, address string) (Email, error) {
	var e Email
	err := q.GetContext(ctx, &e, `SELECT `+emailCols+` FROM person_emails WHERE tenant_id = $1 AND person_id = $2 AND address = $3`,
		tenant, person, address)
	return e, storage.NotFound(err)
}

// ListEmails reads every address of the user.
func ListEmails(ctx context.Context, q Querier, tenant string, person int64) ([]Email, error) {
	out := []Email{}
	if err := q.SelectContext(ctx, &out, `SELECT `+emailCols+` FROM person_emails WHERE tenant_id = $1 AND person_id = $2 ORDER BY id`, tenant, person); err != nil {
		return nil, fmt.Errorf("list emails: %w", err)
	}
	return out, nil
}

// RemoveEmail removes an address with its verification state.
func RemoveEmail(ctx context.Context, tx *sqlx.Tx, tenant string, person int64, address string) error {
	if err := storage.ExecOne(ctx, tx, "delete email", `DELETE FROM person_emails WHERE tenant_id = $1 AND person_id = $2 AND address = $3`,
		tenant, person, address); err != nil {
		return err
	}
	return forgetVerification(ctx, tx, tenant, person, KindEmail, address)
}

const phoneCols = `number, phone_type, can_text, can_call, verification_status, verified_at, created_at`

// AddPhone adds an E.164 number to the user; an existing one is ErrConflict.
func AddPhone(ctx context.Context, tx *sqlx.Tx, tenant string, person int64, p Phone) (Phone, error) {
	var out Phone
	err := insertNew(ctx, tx, &out, "phone", `
		INSERT INTO person_phones (tenant_id, person_id, number, phone_type, can_text, can_call) VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (person_id, number) DO NOTHING
		RETURNING `+phoneCols, tenant, person, p.Number, p.Type, p.CanText, p.CanCall)
	return out, err
}

// GetPhone reads one number of the user.
func GetPhone(ctx context.Context, q Querier, tenant string, person int64, number string) (Phone, error) {
	var p Phone
	err := q.GetContext(ctx, &p, `SELECT `+phoneCols+` FROM person_phones WHERE tenant_id = $1 AND person_id = $2 AND number = $3`,
		tenant, person, number)
	return p, storage.NotFound(err)
}

// ListPhones reads every number of the user.
func ListPhones(ctx context.Context, q Querier, tenant string, person int64) ([]Phone, error) {
	out := []Phone{}
	if err := q.SelectContext(ctx, &out, `SELECT `+phoneCols+` FROM person_phones WHERE tenant_id = $1 AND person_id = $2 ORDER BY id`, tenant, person); err != nil {
		return nil, fmt.Errorf("list phones: %w", err)
	}
	return out, nil
}

// RemovePhone removes a number with its verification state.
func RemovePhone(ctx context.Context, tx *sqlx.Tx, tenant string, person int64, number string) error {
	if err := storage.ExecOne(ctx, tx, "delete phone", `DELETE FROM person_phones WHERE tenant_id = $1 AND person_id = $2 AND number = $3`,
		tenant, person, number); err != nil {
		return err
	}
	return forgetVerification(ctx, tx, tenant, person, KindPhone, number)
}

// ListDevices reads the user's push and app devices.
func ListDevices(ctx context.Context, q Querier, tenant string, person int64) ([]Device, error) {
	out := []Device{}
	if err := q.SelectContext(ctx, &out, `SELECT `+deviceCols+` FROM person_devices WHERE tenant_id = $1 AND person_id = $2 ORDER BY id`, tenant, person); err != nil {
		return nil, fmt.Errorf("list devices: %w", err)
	}
	return out, nil
}

// ContactInformation reads the user's emails, phones and devices.
func ContactInformation(ctx context.Context, q Querier, tenant string, person int64) (Contacts, error) {
	var ci Contacts
	var err error
	if ci.Emails, err = ListEmails(ctx, q, tenant, person); err != nil {
		return ci, err
	}
	if ci.Phones, err = ListPhones(ctx, q, tenant, person); err != nil {
		return ci, err
	}
	ci.Devices, err = ListDevices(ctx, q, tenant, person)
	return ci, err
}

// insertNew runs an INSERT … ON CONFLICT DO NOTHING RETURNING into dest: a
// row that was there already (nothing returned) is storage.ErrConflict. what
// names the row in errors.
func insertNew(ctx context.Context, tx *sqlx.Tx, dest any, what, query string, args ...any) error {
	err := tx.QueryRowxContext(ctx, query, args...).StructScan(dest)
	if storage.NotFound(err) == storage.ErrNotFound {
		return storage.ErrConflict
	}
	if err != nil {
		return fmt.Errorf("insert %s: %w", what, err)
	}
	return nil
}
