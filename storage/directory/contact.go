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
	err := tx.QueryRowxContext(ctx, `
		INSERT INTO person_emails (tenant_id, person_id, address, label) VALUES ($1, $2, $3, $4)
		ON CONFLICT (person_id, address) DO NOTHING
		RETURNING `+emailCols, tenant, person, address, label).
		Scan(&e.Address, &e.Label, &e.Status, &e.VerifiedAt, &e.CreatedAt)
	if err != nil {
		if storage.NotFound(err) == storage.ErrNotFound {
			return e, storage.ErrConflict
		}
		return e, fmt.Errorf("insert email: %w", err)
	}
	return e, nil
}

// GetEmail reads one address of the user.
func GetEmail(ctx context.Context, q Querier, tenant string, person int64, address string) (Email, error) {
	var e Email
	err := q.QueryRowxContext(ctx, `SELECT `+emailCols+` FROM person_emails WHERE tenant_id = $1 AND person_id = $2 AND address = $3`,
		tenant, person, address).Scan(&e.Address, &e.Label, &e.Status, &e.VerifiedAt, &e.CreatedAt)
	return e, storage.NotFound(err)
}

// ListEmails reads every address of the user.
func ListEmails(ctx context.Context, q Querier, tenant string, person int64) ([]Email, error) {
	rows, err := q.QueryxContext(ctx, `SELECT `+emailCols+` FROM person_emails WHERE tenant_id = $1 AND person_id = $2 ORDER BY id`, tenant, person)
	if err != nil {
		return nil, fmt.Errorf("list emails: %w", err)
	}
	defer rows.Close()
	out := []Email{}
	for rows.Next() {
		var e Email
		if err := rows.Scan(&e.Address, &e.Label, &e.Status, &e.VerifiedAt, &e.CreatedAt); err != nil {
			return nil, fmt.Errorf("scan email: %w", err)
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// RemoveEmail removes an address with its verification state.
func RemoveEmail(ctx context.Context, tx *sqlx.Tx, tenant string, person int64, address string) error {
	res, err := tx.ExecContext(ctx, `DELETE FROM person_emails WHERE tenant_id = $1 AND person_id = $2 AND address = $3`, tenant, person, address)
	if err != nil {
		return fmt.Errorf("delete email: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return storage.ErrNotFound
	}
	return forgetVerification(ctx, tx, tenant, person, KindEmail, address)
}

const phoneCols = `number, phone_type, can_text, can_call, verification_status, verified_at, created_at`

func scanPhone(s interface{ Scan(...any) error }) (Phone, error) {
	var p Phone
	err := s.Scan(&p.Number, &p.Type, &p.CanText, &p.CanCall, &p.Status, &p.VerifiedAt, &p.CreatedAt)
	return p, err
}

// AddPhone adds an E.164 number to the user; an existing one is ErrConflict.
func AddPhone(ctx context.Context, tx *sqlx.Tx, tenant string, person int64, p Phone) (Phone, error) {
	out, err := scanPhone(tx.QueryRowxContext(ctx, `
		INSERT INTO person_phones (tenant_id, person_id, number, phone_type, can_text, can_call) VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (person_id, number) DO NOTHING
		RETURNING `+phoneCols, tenant, person, p.Number, p.Type, p.CanText, p.CanCall))
	if err != nil {
		if storage.NotFound(err) == storage.ErrNotFound {
			return out, storage.ErrConflict
		}
		return out, fmt.Errorf("insert phone: %w", err)
	}
	return out, nil
}

// GetPhone reads one number of the user.
func GetPhone(ctx context.Context, q Querier, tenant string, person int64, number string) (Phone, error) {
	p, err := scanPhone(q.QueryRowxContext(ctx, `SELECT `+phoneCols+` FROM person_phones WHERE tenant_id = $1 AND person_id = $2 AND number = $3`,
		tenant, person, number))
	return p, storage.NotFound(err)
}

// ListPhones reads every number of the user.
func ListPhones(ctx context.Context, q Querier, tenant string, person int64) ([]Phone, error) {
	rows, err := q.QueryxContext(ctx, `SELECT `+phoneCols+` FROM person_phones WHERE tenant_id = $1 AND person_id = $2 ORDER BY id`, tenant, person)
	if err != nil {
		return nil, fmt.Errorf("list phones: %w", err)
	}
	defer rows.Close()
	out := []Phone{}
	for rows.Next() {
		p, err := scanPhone(rows)
		if err != nil {
			return nil, fmt.Errorf("scan phone: %w", err)
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// RemovePhone removes a number with its verification state.
func RemovePhone(ctx context.Context, tx *sqlx.Tx, tenant string, person int64, number string) error {
	res, err := tx.ExecContext(ctx, `DELETE FROM person_phones WHERE tenant_id = $1 AND person_id = $2 AND number = $3`, tenant, person, number)
	if err != nil {
		return fmt.Errorf("delete phone: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return storage.ErrNotFound
	}
	return forgetVerification(ctx, tx, tenant, person, KindPhone, number)
}

// ListDevices reads the user's push and app devices.
func ListDevices(ctx context.Context, q Querier, tenant string, person int64) ([]Device, error) {
	rows, err := q.QueryxContext(ctx, `SELECT id, app, platform, token, created_at FROM person_devices WHERE tenant_id = $1 AND person_id = $2 ORDER BY id`, tenant, person)
	if err != nil {
		return nil, fmt.Errorf("list devices: %w", err)
	}
	defer rows.Close()
	out := []Device{}
	for rows.Next() {
		var d Device
		if err := rows.Scan(&d.ID, &d.App, &d.Platform, &d.Token, &d.CreatedAt); err != nil {
			return nil, fmt.Errorf("scan device: %w", err)
		}
		out = append(out, d)
	}
	return out, rows.Err()
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
