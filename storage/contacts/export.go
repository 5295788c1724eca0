package contacts

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/tocsin/tocsin/internal/contactcsv"
	"github.com/tocsin/tocsin/storage"
)

// ExportBatch is the number of contacts fetched from the cursor at a time.
const ExportBatch = 1000

// Export reads every contact of a tenant from a server-side cursor in a
// read-only, repeatable-read transaction, so the file is one consistent
// snapshot and memory holds one batch at a time.
type Export struct {
	tx   *sqlx.Tx
	keys []string
	done bool
}

// ErrTooManyCustomKeys is BeginExport's error when the tenant's contacts
// hold more different custom-field keys than a file has columns for
// (contactcsv.MaxCustomColumns): only contacts written before imports
// held them to that can.
var ErrTooManyCustomKeys = fmt.Errorf("the contacts hold more than %d different custom-field keys", contactcsv.MaxCustomColumns)

// BeginExport opens the snapshot, reads the custom-field keys the tenant's
// contacts hold (every one, in alphabetical order: a column each) and
// declares the cursor. It fails with ErrTooManyCustomKeys rather than
// leave keys out.
func BeginExport(ctx context.Context, db *storage.DB, tenant string) (*Export, error) {
	tx, err := db.BeginTxx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("begin export: %w", err)
	}
	e := &Export{tx: tx}
	if err := tx.SelectContext(ctx, &e.keys, `SELECT DISTINCT k FROM people p CROSS JOIN LATERAL jsonb_object_keys(p.custom_fields) AS k
		WHERE p.tenant_id = $1 AND p.custom_fields <> '{}' ORDER BY k LIMIT $2`, tenant, contactcsv.MaxCustomColumns+1); err != nil {
		e.Close()
		return nil, fmt.Errorf("custom field keys: %w", err)
	}
	if len(e.keys) > contactcsv.MaxCustomColumns {
		e.Close()
		return nil, ErrTooManyCustomKeys
	}
	_, err = tx.ExecContext(ctx, `DECLARE contacts_export NO SCROLL CURSOR FOR
		SELECT p.id, coalesce(p.external_id, '') AS external_id, p.first_name, p.middle_name, p.last_name, p.language, p.time_zone,
		    coalesce((SELECT array_agg(e.address ORDER BY e.id) FROM person_emails e WHERE e.person_id = p.id), '{}') AS emails,
		    coalesce(ph.numbers, '{}') AS phone_numbers, coalesce(ph.types, '{}') AS phone_types,
		    coalesce(ph.texts, '{}') AS phone_texts, coalesce(ph.calls, '{}') AS phone_calls,
		    p.roles, p.chat_users, p.custom_fields
		FROM people p
		LEFT JOIN LATERAL (SELECT array_agg(x.number ORDER BY x.id) AS numbers, array_agg(x.phone_type ORDER BY x.id) AS types,
		                          array_agg(x.can_text ORDER BY x.id) AS texts, array_agg(x.can_call ORDER BY x.id) AS calls
		                   FROM person_phones x WHERE x.person_id = p.id) ph ON true
		WHERE p.tenant_id = `+pq.QuoteLiteral(tenant)+`
		ORDER BY p.id`)
	if err != nil {
		e.Close()
		return nil, fmt.Errorf("declare export cursor: %w", err)
	}
	return e, nil
}

type exportRow struct {
	ID         int64  `db:"id"`
	ExternalID string `db:"external_id"`
	storage.Profile
	Emails       pq.StringArray `db:"emails"`
	PhoneNumbers pq.StringArray `db:"phone_numbers"`
	PhoneTypes   pq.StringArray `db:"phone_types"`
	PhoneTexts   pq.BoolArray   `db:"phone_texts"`
	PhoneCalls   pq.BoolArray   `db:"phone_calls"`
	Roles        pq.StringArray `db:"roles"`
	ChatUsers    []byte         `db:"chat_users"`
	Custom       []byte         `db:"custom_fields"`
}

// WriteCSV writes the header and every contact to w, calling afterBatch
// (when not nil) after each batch has been flushed; an error from it ends the
// export (the client has gone). It returns the number of contacts written
// and closes the export.
func (e *Export) WriteCSV(ctx context.Context, w io.Writer, afterBatch func() error) (int64, error) {
	defer e.Close()
	cw, err := contactcsv.NewWriter(w, e.keys)
	if err != nil {
		return 0, err
	}
	var n int64
	fetch := fmt.Sprintf("FETCH FORWARD %d FROM contacts_export", ExportBatch)
	for {
		rows, err := e.tx.QueryxContext(ctx, fetch)
		if err != nil {
			return n, fmt.Errorf("fetch contacts: %w", err)
		}
		got := 0
		for rows.Next() {
			var r exportRow
			if err := rows.StructScan(&r); err != nil {
				rows.Close()
				return n, fmt.Errorf("scan contact: %w", err)
			}
			if err := cw.Write(r.csvRow()); err != nil {
				rows.Close()
				return n, err
			}
			got++
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return n, fmt.Errorf("fetch contacts: %w", err)
		}
		n += int64(got)
		if err := cw.Flush(); err != nil {
			return n, err
		}
		if afterBatch != nil {
			if err := afterBatch(); err != nil {
				return n, fmt.Errorf("write contacts: %w", err)
			}
		}
		if got < ExportBatch {
			return n, nil
		}
	}
}

func (r exportRow) csvRow() contactcsv.Row {
	row := contactcsv.Row{
		ID: r.ID, ExternalID: r.ExternalID, FirstName: r.FirstName, MiddleName: r.MiddleName, LastName: r.LastName,
		Language: r.Language, TimeZone: r.TimeZone, Emails: r.Emails, Roles: r.Roles,
	}
	for i, num := range r.PhoneNumbers {
		p := contactcsv.Phone{Number: num, Type: "Other"}
		if i < len(r.PhoneTypes) {
			p.Type = r.PhoneTypes[i]
		}
		if i < len(r.PhoneTexts) && i < len(r.PhoneCalls) {
			p.CanText, p.CanCall = r.PhoneTexts[i], r.PhoneCalls[i]
		}
		row.Phones = append(row.Phones, p)
	}
	_ = json.Unmarshal(r.ChatUsers, &row.ChatUsers)
	p := Person{CustomRaw: r.Custom}
	row.Custom = p.CustomFields()
	return row
}

// Close ends the export's transaction; it is harmless after WriteCSV.
func (e *Export) Close() {
	if !e.done {
		e.done = true
		_ = e.tx.Rollback()
	}
}
