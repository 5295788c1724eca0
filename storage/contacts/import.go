package contacts

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/tocsin/tocsin/internal/contactcsv"
	"github.com/tocsin/tocsin/internal/csvheader"
	"github.com/tocsin/tocsin/storage"
)

// Limits of one import.
const (
	// MaxImportRows is the most data rows one file may have.
	MaxImportRows = 1_000_000
	// MaxReportedProblems is the most row problems an import reports (the
	// ones on the lowest lines); ProblemCount counts them all.
	MaxReportedProblems = 1000
)

// ErrTooManyRows is returned by Stage when a file has more than its row limit.
var ErrTooManyRows = fmt.Errorf("the file has more than %d data rows", MaxImportRows)

// Import creates or updates contacts from a CSV file and creates a
// distribution list of them, in one transaction: a file that is rejected, or
// an import that fails, changes nothing. Rows are streamed from the file
// into a temporary staging table with COPY and then written with a handful
// of set-based statements, so memory does not grow with the file.
//
// Contacts are matched to rows by contact id (the export's id column), else
// by external id, else by any of the row's email addresses, else by any of
// its phone numbers; a row whose external id or address several contacts
// hold is a row problem. Matched contacts get the row's non-empty values;
// their existing external id is kept, email addresses and phone numbers
// are added, never removed, up to storage.MaxEmailsPerPerson and
// storage.MaxPhonesPerPerson, and custom fields merged up to
// contactcsv.MaxCustomFields per contact and contactcsv.MaxCustomColumns
// different keys per tenant: a row past them is a row problem and nothing
// of it is written. Unmatched rows create contacts.
type Import struct {
	db       *storage.DB
	tx       *sqlx.Tx
	tenant   string
	maxRows  int64
	staged   bool
	done     bool
	rows     int64
	invalid  int64
	problems []contactcsv.Problem
	count    int64
}

// ImportResult is what an import did.
type ImportResult struct {
	List List
	// Rows is the number of data rows in the file (empty lines not counted).
	Rows      int64
	Created   int64
	Updated   int64
	Unchanged int64
	Skipped   int64
	// Problems are the row problems on the lowest lines, at most
	// MaxReportedProblems; ProblemCount counts all of them.
	Problems     []contactcsv.Problem
	ProblemCount int64
}

// BeginImport starts an import for tenant. maxRows (MaxImportRows when 0)
// limits the data rows of the file. Call Stage, then Finish; call Rollback
// when giving up (it is harmless after Finish).
func BeginImport(ctx context.Context, db *storage.DB, tenant string, maxRows int64) (*Import, error) {
	if maxRows <= 0 || maxRows > MaxImportRows {
		maxRows = MaxImportRows
	}
	tx, err := db.BeginTxx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("begin import: %w", err)
	}
	im := &Import{db: db, tx: tx, tenant: tenant, maxRows: maxRows}
	for _, q := range []string{
		`SET LOCAL work_mem = '64MB'`,
		`CREATE TEMP TABLE contact_import (
			line        int PRIMARY KEY,
			id          bigint,
			external_id text,
			first_name  text,
			middle_name text,
			last_name   text,
			language    text,
			time_zone   text,
			emails      text[],
			phones      text[],
			phone_types text[],
			phone_texts boolean[],
			phone_calls boolean[],
			roles       text[],
			chat_users  jsonb,
			custom      jsonb,
			person_id   bigint,
			skip        boolean NOT NULL DEFAULT false,
			problem        text,
			problem_column text,
			problem_value  text
		) ON COMMIT DROP`,
		// The ids of the contacts the import creates, by line: a narrow table
		// written once, rather than a rewrite of every staged row.
		`CREATE TEMP TABLE contact_new (line int PRIMARY KEY, person_id bigint NOT NULL) ON COMMIT DROP`,
	} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			_ = tx.Rollback()
			return nil, fmt.Errorf("prepare import: %w", err)
		}
	}
	return im, nil
}

// Rollback abandons the import; nothing it staged is kept.
func (im *Import) Rollback() {
	if !im.done {
		im.done = true
		_ = im.tx.Rollback()
	}
}

func (im *Import) addProblems(ps []contactcsv.Problem) {
	im.count += int64(len(ps))
	for _, p := range ps {
		if len(im.problems) < MaxReportedProblems {
			im.problems = append(im.problems, p)
		}
	}
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func textArray(s []string) any {
	if len(s) == 0 {
		return nil
	}
	return pq.StringArray(s)
}

func boolArray(b []bool) any {
	if len(b) == 0 {
		return nil
	}
	return pq.BoolArray(b)
}

// Stage reads the CSV file from r and copies its valid rows into the staging
// table. It returns a *contactcsv.FileError when the file is not a contacts
// CSV file, and ErrTooManyRows past the row limit; the import must then be
// rolled back. It may be called once.
func (im *Import) Stage(ctx context.Context, r io.Reader) error {
	if im.staged {
		return errors.New("stage: the file was already staged")
	}
	im.staged = true
	rd, err := contactcsv.NewReader(r)
	if err != nil {
		return err
	}
	stmt, err := im.tx.PrepareContext(ctx, `COPY contact_import (line, id, external_id, first_name, middle_name, last_name,
		language, time_zone, emails, phones, phone_types, phone_texts, phone_calls, roles, chat_users, custom) FROM STDIN`)
	if err != nil {
		return fmt.Errorf("start copy: %w", err)
	}
	defer stmt.Close()
	var phones, types []string
	var texts, calls []bool
	for {
		row, problems, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		im.rows++
		if im.rows > im.maxRows {
			return ErrTooManyRows
		}
		if len(problems) > 0 {
			im.invalid++
			im.addProblems(problems)
			continue
		}
		var id, chat, custom any
		if row.ID > 0 {
			id = row.ID
		}
		if len(row.ChatUsers) > 0 {
			b, _ := json.Marshal(row.ChatUsers)
			chat = string(b)
		}
		if len(row.Custom) > 0 {
			b, _ := json.Marshal(row.Custom)
			custom = string(b)
		}
		phones, types, texts, calls = phones[:0], types[:0], texts[:0], calls[:0]
		for _, p := range row.Phones {
			phones = append(phones, p.Number)
			types = append(types, p.Type)
			texts = append(texts, p.CanText)
			calls = append(calls, p.CanCall)
		}
		if _, err := stmt.ExecContext(ctx, row.Line, id, nullable(row.ExternalID), nullable(row.FirstName),
			nullable(row.MiddleName), nullable(row.LastName), nullable(row.Language), nullable(row.TimeZone),
			textArray(row.Emails), textArray(phones), textArray(types), boolArray(texts), boolArray(calls),
			textArray(row.Roles), chat, custom); err != nil {
			return fmt.Errorf("copy row at line %d: %w", row.Line, err)
		}
	}
	if _, err := stmt.ExecContext(ctx); err != nil {
		return fmt.Errorf("finish copy: %w", err)
	}
	return nil
}

// matchByAddress matches each row that names no contact yet to the contact
// of the tenant holding the first of the row's addresses in list (its
// emails or phones) that one holds: column of table (person_emails.address
// or person_phones.number). When several contacts hold that address the
// row cannot tell which one it means: it is skipped, a problem of the
// address's column (problemColumn, an expression of the staged row i and
// the address's place m.n in list). A statement of Finish, $1 the tenant.
func matchByAddress(list, table, column, problemColumn string) string {
	return fmt.Sprintf(`UPDATE contact_import i SET person_id = CASE WHEN m.holders = 1 THEN m.person_id END,
		    skip = m.holders > 1,
		    problem_column = CASE WHEN m.holders > 1 THEN %[4]s END,
		    problem_value = CASE WHEN m.holders > 1 THEN m.value END,
		    problem = CASE WHEN m.holders > 1 THEN format('matches several contacts: %%s contacts hold this address, so the row cannot tell which one to update; give the contact''s id or external id: nothing of the row is written', m.holders) END
		FROM (SELECT DISTINCT ON (c.line) c.line, x.value, x.n::int AS n, a.person_id, count(*) OVER (PARTITION BY c.line, x.n) AS holders
		      FROM contact_import c CROSS JOIN LATERAL unnest(c.%[1]s) WITH ORDINALITY AS x(value, n)
		      JOIN %[2]s a ON a.tenant_id = $1 AND a.%[3]s = x.value
		      WHERE c.person_id IS NULL AND NOT c.skip
		      ORDER BY c.line, x.n, a.person_id) m
		WHERE i.line = m.line`, list, table, column, problemColumn)
}

// The statements of Finish, in order. $1 is the tenant in those that take
// it; overLimit takes the limits instead.
const (
	matchByID = `UPDATE contact_import i SET person_id = p.id
		FROM people p WHERE i.id IS NOT NULL AND p.tenant_id = $1 AND p.id = i.id`
	// A plain contact wins over a directory user with the same external id
	// (a tenant's plain contacts have different ones). Without one, users
	// of several directories holding the external id leave the row unable
	// to tell which one it means: it is skipped.
	matchByExternalID = `UPDATE contact_import i SET person_id = CASE WHEN m.plain OR m.holders = 1 THEN m.id END,
		    skip = NOT m.plain AND m.holders > 1,
		    problem_column = CASE WHEN NOT m.plain AND m.holders > 1 THEN 'externalId' END,
		    problem_value = CASE WHEN NOT m.plain AND m.holders > 1 THEN m.external_id END,
		    problem = CASE WHEN NOT m.plain AND m.holders > 1 THEN format('matches several contacts: users of %s directories have this external id, so the row cannot tell which one to update; give the contact''s id: nothing of the row is written', m.holders) END
		FROM (SELECT DISTINCT ON (p.external_id) p.external_id, p.id, p.directory_id IS NULL AS plain,
		          count(*) OVER (PARTITION BY p.external_id) AS holders
		      FROM people p
		      WHERE p.tenant_id = $1 AND p.external_id IN
		            (SELECT external_id FROM contact_import WHERE person_id IS NULL AND external_id IS NOT NULL)
		      ORDER BY p.external_id, p.directory_id IS NOT NULL, p.id) m
		WHERE i.person_id IS NULL AND i.external_id = m.external_id`
	// A row that creates a contact needs a name; one that updates does not.
	missingName = `UPDATE contact_import SET skip = true, problem_column = 'lastName',
		    problem = 'a new contact needs a first or a last name'
		WHERE person_id IS NULL AND NOT skip AND first_name IS NULL AND last_name IS NULL`
	// Later rows that would write the same contact as an earlier row are
	// duplicates: the same matched contact, the same external id, or (for
	// new rows without an external id) the same first email or phone.
	dupByPerson = `UPDATE contact_import i SET skip = true, problem_column = NULL,
		    problem = format('duplicate row: line %s already has this contact', d.first_line)
		FROM (SELECT line, first_value(line) OVER w AS first_line, row_number() OVER w AS rn
		      FROM contact_import WHERE person_id IS NOT NULL AND NOT skip
		      WINDOW w AS (PARTITION BY person_id ORDER BY line)) d
		WHERE d.rn > 1 AND i.line = d.line`
	dupByExternalID = `UPDATE contact_import i SET skip = true, problem_column = 'externalId', problem_value = i.external_id,
		    problem = format('duplicate row: line %s has the same external id', d.first_line)
		FROM (SELECT line, first_value(line) OVER w AS first_line, row_number() OVER w AS rn
		      FROM contact_import WHERE external_id IS NOT NULL AND NOT skip
		      WINDOW w AS (PARTITION BY external_id ORDER BY line)) d
		WHERE d.rn > 1 AND i.line = d.line`
	dupByAddress = `UPDATE contact_import i SET skip = true,
		    problem_column = CASE WHEN i.emails IS NOT NULL THEN 'emails' ELSE 'mobilePhones' END,
		    problem_value = coalesce(i.emails[1], i.phones[1]),
		    problem = format('duplicate row: line %s creates a contact with the same %s', d.first_line,
		        CASE WHEN i.emails IS NOT NULL THEN 'email address' ELSE 'phone number' END)
		FROM (SELECT line, first_value(line) OVER w AS first_line, row_number() OVER w AS rn
		      FROM contact_import
		      WHERE person_id IS NULL AND external_id IS NULL AND NOT skip AND (emails IS NOT NULL OR phones IS NOT NULL)
		      WINDOW w AS (PARTITION BY coalesce('e' || emails[1], 't' || phones[1]) ORDER BY line)) d
		WHERE d.rn > 1 AND i.line = d.line`
	// overLimit skips the rows that would leave their contact holding more
	// email addresses ($1) or phone numbers ($2) than a person may: rows
	// that add at least one address the contact does not have, and leave
	// it with more than the limit, its own and the row's new ones together.
	// A row that adds none passes, so a contact given more before the
	// limits existed still takes its other values. A row creating a
	// contact has only its own (at most contactcsv.MaxListItems of each).
	// near keeps the few rows whose contact holds enough addresses already
	// that the row could take it past: one probe of the contact's
	// addresses, stopped at the limit, per row, so a file matching many
	// contacts with a few addresses each costs little more than before the
	// limits; only those rows are counted. The contacts are the tenant's
	// (matched so), and their addresses are found by person alone, as
	// updateMatched finds them: with the tenant too, statistics not yet
	// updated after a large import can have the planner scan the tenant's
	// whole address index for every row.
	overLimit = `WITH near AS MATERIALIZED (
		    SELECT c.line, c.person_id, c.emails, c.phones FROM contact_import c
		    WHERE NOT c.skip AND (cardinality(c.emails) > $1 OR cardinality(c.phones) > $2 OR (c.person_id IS NOT NULL AND (
		        (c.emails IS NOT NULL AND EXISTS (SELECT 1 FROM person_emails e WHERE e.person_id = c.person_id
		            OFFSET greatest(0, $1 - cardinality(c.emails))))
		        OR (c.phones IS NOT NULL AND EXISTS (SELECT 1 FROM person_phones ph WHERE ph.person_id = c.person_id
		            OFFSET greatest(0, $2 - cardinality(c.phones)))))))
		), n AS (
		    SELECT c.line,
		        (SELECT count(*) FROM person_emails e WHERE e.person_id = c.person_id) AS held_emails,
		        (SELECT count(*) FROM unnest(c.emails) x(address) WHERE NOT EXISTS (
		            SELECT 1 FROM person_emails e WHERE e.person_id = c.person_id AND e.address = x.address)) AS new_emails,
		        (SELECT count(*) FROM person_phones ph WHERE ph.person_id = c.person_id) AS held_phones,
		        (SELECT count(*) FROM unnest(c.phones) x(number) WHERE NOT EXISTS (
		            SELECT 1 FROM person_phones ph WHERE ph.person_id = c.person_id AND ph.number = x.number)) AS new_phones
		    FROM near c
		)
		UPDATE contact_import i SET skip = true, problem_value = NULL,
		    problem_column = CASE WHEN n.new_emails > 0 AND n.held_emails + n.new_emails > $1 THEN 'emails' END,
		    problem = CASE WHEN n.new_emails > 0 AND n.held_emails + n.new_emails > $1
		        THEN format('the contact would have %s email addresses, more than the %s a contact may have: nothing of the row is written', n.held_emails + n.new_emails, $1)
		        ELSE format('the contact would have %s phone numbers, more than the %s a contact may have: nothing of the row is written', n.held_phones + n.new_phones, $2) END
		FROM n
		WHERE i.line = n.line AND ((n.new_emails > 0 AND n.held_emails + n.new_emails > $1) OR (n.new_phones > 0 AND n.held_phones + n.new_phones > $2))`
	// overCustomFields skips the matched rows that would leave their
	// contact holding more custom fields than a contact may ($2): rows
	// that add at least one key the contact does not hold, and leave it
	// with more than the limit, its own keys and the row's new ones
	// together. A row that adds none passes, so a contact given more
	// before the limit existed still takes new values of its keys. The
	// problem names the column of the first new key (in key order) past
	// the limit. A new contact has the row's fields alone, which the
	// reader holds to the limit.
	overCustomFields = `WITH n AS (
		    SELECT c.line,
		        (SELECT count(*)::int FROM jsonb_object_keys(p.custom_fields)) AS held,
		        ARRAY(SELECT x.k FROM jsonb_object_keys(c.custom) AS x(k) WHERE NOT p.custom_fields ? x.k ORDER BY x.k COLLATE "C") AS added
		    FROM contact_import c JOIN people p ON p.id = c.person_id AND p.tenant_id = $1
		    WHERE NOT c.skip AND c.custom IS NOT NULL
		)
		UPDATE contact_import i SET skip = true,
		    problem_column = 'custom.' || n.added[greatest(1, $2::int - n.held + 1)],
		    problem_value = i.custom ->> n.added[greatest(1, $2::int - n.held + 1)],
		    problem = format('the contact would have %s custom fields, more than the %s a contact may have: nothing of the row is written',
		        n.held + cardinality(n.added), $2::int)
		FROM n
		WHERE i.line = n.line AND cardinality(n.added) > 0 AND n.held + cardinality(n.added) > $2::int`
	// customKeyCounts counts the custom-field keys the tenant's list holds
	// and those the rows to be written give that it lacks.
	customKeyCounts = `SELECT (SELECT count(*) FROM custom_field_keys WHERE tenant_id = $1) AS held,
		    (SELECT count(DISTINCT x.k) FROM contact_import c CROSS JOIN LATERAL jsonb_object_keys(c.custom) AS x(k)
		     WHERE NOT c.skip AND c.custom IS NOT NULL
		         AND NOT EXISTS (SELECT 1 FROM custom_field_keys f WHERE f.tenant_id = $1 AND f.key = x.k)) AS added`
	// The tenant's list of keys counted again from its contacts: the list
	// keeps the keys of contacts deleted since.
	clearCustomKeys   = `DELETE FROM custom_field_keys WHERE tenant_id = $1`
	recountCustomKeys = `INSERT INTO custom_field_keys (tenant_id, key)
		SELECT DISTINCT $1, x.k FROM people p CROSS JOIN LATERAL jsonb_object_keys(p.custom_fields) AS x(k)
		WHERE p.tenant_id = $1 AND p.custom_fields <> '{}'`
	// overCustomKeys skips the rows that would give the tenant's contacts
	// more different custom-field keys than $2: the new keys are taken in
	// the order of the line each first appears on (then by key) while
	// they fit, and a row giving a key past them is skipped, a problem of
	// that key's column (its first such key, in key order).
	overCustomKeys = `WITH held AS (SELECT count(*)::int AS n FROM custom_field_keys WHERE tenant_id = $1),
		fresh AS (
		    SELECT x.k, min(c.line) AS first_line
		    FROM contact_import c CROSS JOIN LATERAL jsonb_object_keys(c.custom) AS x(k)
		    WHERE NOT c.skip AND c.custom IS NOT NULL
		        AND NOT EXISTS (SELECT 1 FROM custom_field_keys f WHERE f.tenant_id = $1 AND f.key = x.k)
		    GROUP BY x.k),
		refused AS (
		    SELECT f.k FROM (SELECT k, row_number() OVER (ORDER BY first_line, k COLLATE "C") AS n FROM fresh) f, held
		    WHERE f.n > $2::int - held.n),
		hit AS (
		    SELECT c.line, min(x.k COLLATE "C") AS k
		    FROM contact_import c CROSS JOIN LATERAL jsonb_object_keys(c.custom) AS x(k)
		    WHERE NOT c.skip AND c.custom IS NOT NULL AND x.k IN (SELECT k FROM refused)
		    GROUP BY c.line)
		UPDATE contact_import i SET skip = true, problem_column = 'custom.' || hit.k, problem_value = i.custom ->> hit.k,
		    problem = format('the tenant''s contacts would hold more than %s different custom fields, the most an export carries: this one is new to them; nothing of the row is written', $2::int)
		FROM hit WHERE i.line = hit.line`
	// addCustomKeys adds the keys the rows to be written give to the
	// tenant's list.
	addCustomKeys = `INSERT INTO custom_field_keys (tenant_id, key)
		SELECT DISTINCT $1, x.k FROM contact_import c CROSS JOIN LATERAL jsonb_object_keys(c.custom) AS x(k)
		WHERE NOT c.skip AND c.custom IS NOT NULL
		ON CONFLICT DO NOTHING`
	countSkipped   = `SELECT count(*) FROM contact_import WHERE skip`
	stagedProblems = `SELECT line, coalesce(problem_column, '') AS problem_column, coalesce(problem_value, '') AS problem_value, problem
		FROM contact_import WHERE problem IS NOT NULL ORDER BY line LIMIT $1`
	assignIDs = `INSERT INTO contact_new (line, person_id)
		SELECT line, nextval($1::regclass) FROM contact_import WHERE person_id IS NULL AND NOT skip ORDER BY line`
	insertPeople = `INSERT INTO people (id, tenant_id, external_id, first_name, middle_name, last_name,
		    language, time_zone, roles, chat_users, custom_fields)
		SELECT n.person_id, $1, i.external_id, coalesce(i.first_name, ''), coalesce(i.middle_name, ''), coalesce(i.last_name, ''),
		    coalesce(i.language, 'en'), coalesce(i.time_zone, 'UTC'), coalesce(i.roles, '{}'), coalesce(i.chat_users, '[]'),
		    coalesce(i.custom, '{}')
		FROM contact_new n JOIN contact_import i USING (line) ORDER BY n.person_id`
	insertNewEmails = `INSERT INTO person_emails (tenant_id, person_id, address)
		SELECT $1, n.person_id, x.address
		FROM contact_new n JOIN contact_import i USING (line) CROSS JOIN LATERAL unnest(i.emails) AS x(address)
		ORDER BY n.person_id`
	insertNewPhones = `INSERT INTO person_phones (tenant_id, person_id, number, phone_type, can_text, can_call)
		SELECT $1, n.person_id, x.number, x.type, x.can_text, x.can_call
		FROM contact_new n JOIN contact_import i USING (line)
		CROSS JOIN LATERAL unnest(i.phones, i.phone_types, i.phone_texts, i.phone_calls) AS x(number, type, can_text, can_call)
		ORDER BY n.person_id`
	// lockMatched takes the row locks (KEY SHARE, in id order) of the
	// matched contacts that the file gives addresses or custom fields,
	// before those are counted (overLimit, overCustomFields) and written.
	// The directory changes a user's addresses holding the user's row; an
	// address written first would wait for that change while the change
	// waited for the address, and one counted without the lock could pass
	// the limit together with an address the directory adds meanwhile.
	lockMatched = `SELECT 1 FROM people WHERE tenant_id = $1 AND id IN (
		    SELECT person_id FROM contact_import
		    WHERE NOT skip AND person_id IS NOT NULL AND (emails IS NOT NULL OR phones IS NOT NULL OR custom IS NOT NULL))
		ORDER BY id FOR KEY SHARE`
	// updateMatched writes matched rows and counts the contacts that changed:
	// a scalar field, a new email address or a new phone number.
	updateMatched = `WITH upd AS (
		    UPDATE people p SET
		        external_id = CASE WHEN p.external_id IS NULL AND i.external_id IS NOT NULL AND NOT EXISTS (
		                SELECT 1 FROM people q WHERE q.tenant_id = $1 AND q.external_id = i.external_id
		                AND coalesce(q.directory_id, '') = coalesce(p.directory_id, ''))
		            THEN i.external_id ELSE p.external_id END,
		        first_name = coalesce(i.first_name, p.first_name),
		        middle_name = coalesce(i.middle_name, p.middle_name),
		        last_name = coalesce(i.last_name, p.last_name),
		        language = coalesce(i.language, p.language),
		        time_zone = coalesce(i.time_zone, p.time_zone),
		        roles = coalesce(i.roles, p.roles),
		        chat_users = coalesce(i.chat_users, p.chat_users),
		        custom_fields = p.custom_fields || coalesce(i.custom, '{}'),
		        updated_at = now()
		    FROM contact_import i
		    WHERE i.person_id = p.id AND p.tenant_id = $1 AND NOT i.skip AND (
		        i.first_name <> p.first_name OR i.middle_name <> p.middle_name OR i.last_name <> p.last_name OR
		        i.language <> p.language OR i.time_zone <> p.time_zone OR i.roles <> p.roles OR
		        i.chat_users <> p.chat_users OR NOT p.custom_fields @> coalesce(i.custom, '{}') OR
		        (p.external_id IS NULL AND i.external_id IS NOT NULL AND NOT EXISTS (
		            SELECT 1 FROM people q WHERE q.tenant_id = $1 AND q.external_id = i.external_id
		            AND coalesce(q.directory_id, '') = coalesce(p.directory_id, ''))))
		    RETURNING p.id
		), em AS (
		    INSERT INTO person_emails (tenant_id, person_id, address)
		    SELECT $1, i.person_id, x.address FROM contact_import i CROSS JOIN LATERAL unnest(i.emails) AS x(address)
		    WHERE NOT i.skip AND i.person_id IS NOT NULL
		        AND NOT EXISTS (SELECT 1 FROM person_emails e WHERE e.person_id = i.person_id AND e.address = x.address)
		    ON CONFLICT (person_id, address) DO NOTHING
		    RETURNING person_id
		), ph AS (
		    INSERT INTO person_phones (tenant_id, person_id, number, phone_type, can_text, can_call)
		    SELECT $1, i.person_id, x.number, x.type, x.can_text, x.can_call
		    FROM contact_import i CROSS JOIN LATERAL unnest(i.phones, i.phone_types, i.phone_texts, i.phone_calls) AS x(number, type, can_text, can_call)
		    WHERE NOT i.skip AND i.person_id IS NOT NULL
		        AND NOT EXISTS (SELECT 1 FROM person_phones x2 WHERE x2.person_id = i.person_id AND x2.number = x.number)
		    ON CONFLICT (person_id, number) DO NOTHING
		    RETURNING person_id
		)
		SELECT count(*) FROM (SELECT id FROM upd UNION SELECT person_id FROM em UNION SELECT person_id FROM ph) c`
	insertMembers = `INSERT INTO distribution_list_members (tenant_id, list_id, person_id)
		SELECT $1, $2::bigint, person_id FROM (
		    SELECT person_id FROM contact_import WHERE NOT skip AND person_id IS NOT NULL
		    UNION SELECT person_id FROM contact_new) m
		ORDER BY person_id
		ON CONFLICT DO NOTHING`
)

// Finish creates the distribution list name (storage.ErrConflict when the
// tenant has one of that name), matches and writes the staged rows, adds
// them to the list and commits.
func (im *Import) Finish(ctx context.Context, name, description string) (ImportResult, error) {
	if im.done {
		return ImportResult{}, errors.New("finish: the import is over")
	}
	defer im.Rollback()
	tx, t := im.tx, im.tenant
	res := ImportResult{Rows: im.rows}

	var listID int64
	err := tx.GetContext(ctx, &listID, `INSERT INTO distribution_lists (tenant_id, name, description)
		VALUES ($1, $2, $3) RETURNING id`, t, name, description)
	if storage.IsUniqueViolation(err, "distribution_lists_tenant_name") {
		return res, storage.ErrConflict
	}
	if err != nil {
		return res, fmt.Errorf("create list: %w", err)
	}
	// One import per tenant at a time, so two files cannot both create the
	// same new contact.
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('contacts-import:' || $1, 0))`, t); err != nil {
		return res, fmt.Errorf("lock import: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `ANALYZE contact_import`); err != nil {
		return res, fmt.Errorf("analyze staged rows: %w", err)
	}
	exec := func(what, q string, args ...any) (int64, error) {
		r, err := tx.ExecContext(ctx, q, args...)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", what, err)
		}
		n, _ := r.RowsAffected()
		return n, nil
	}
	for _, s := range []struct{ what, q string }{
		{"match by id", matchByID}, {"match by external id", matchByExternalID},
		{"match by email", matchByAddress("emails", "person_emails", "address", "'emails'")},
		// A phone's column is its type's: Mobile is mobilePhones, and so on.
		{"match by phone", matchByAddress("phones", "person_phones", "number", "lower(i.phone_types[m.n]) || 'Phones'")},
	} {
		if _, err := exec(s.what, s.q, t); err != nil {
			return res, err
		}
	}
	for _, q := range []string{missingName, dupByPerson, dupByExternalID, dupByAddress} {
		if _, err := exec("check rows", q); err != nil {
			return res, err
		}
	}
	if _, err := exec("lock contacts", lockMatched, t); err != nil {
		return res, err
	}
	if err := im.checkLimits(ctx); err != nil {
		return res, err
	}
	if err := im.checkCustomFields(ctx); err != nil {
		return res, err
	}
	var skipped int64
	if err := tx.GetContext(ctx, &skipped, countSkipped); err != nil {
		return res, fmt.Errorf("count skipped rows: %w", err)
	}
	stagedProblems, err := im.stagedProblems(ctx)
	if err != nil {
		return res, err
	}
	var seq string
	if err := tx.GetContext(ctx, &seq, `SELECT pg_get_serial_sequence('people', 'id')`); err != nil {
		return res, fmt.Errorf("people sequence: %w", err)
	}
	if res.Created, err = exec("assign ids", assignIDs, seq); err != nil {
		return res, err
	}
	if _, err := exec("analyze new ids", `ANALYZE contact_new`); err != nil {
		return res, err
	}
	for _, s := range []struct{ what, q string }{
		{"insert contacts", insertPeople}, {"insert emails", insertNewEmails}, {"insert phones", insertNewPhones},
	} {
		if _, err := exec(s.what, s.q, t); err != nil {
			return res, err
		}
	}
	if err := tx.GetContext(ctx, &res.Updated, updateMatched, t); err != nil {
		return res, fmt.Errorf("update contacts: %w", err)
	}
	if _, err := exec("add list members", insertMembers, t, listID); err != nil {
		return res, err
	}
	if res.List, err = GetList(ctx, tx, t, listID); err != nil {
		return res, err
	}
	if err := tx.Commit(); err != nil {
		return res, fmt.Errorf("commit import: %w", err)
	}
	im.done = true
	im.refreshStatistics(ctx, res.Created)

	res.Skipped = im.invalid + skipped
	res.Unchanged = res.Rows - res.Skipped - res.Created - res.Updated
	res.ProblemCount = im.count + skipped
	res.Problems = append(im.problems, stagedProblems...)
	slices.SortStableFunc(res.Problems, func(a, b contactcsv.Problem) int { return a.Line - b.Line })
	if len(res.Problems) > MaxReportedProblems {
		res.Problems = res.Problems[:MaxReportedProblems]
	}
	return res, nil
}

// refreshStatistics analyzes the contact tables when an import created
// more contacts than autovacuum would wait for (50 and a tenth of the
// table), so that an alert sent to the new list right away is not planned
// on statistics of a table that had none of them: without them the
// planner reads person_emails and person_phones in id order for every
// recipient's first address, and resolving 25,000 recipients took minutes
// instead of a second. Autovacuum may be off, and is not immediate when
// on. The import has committed: a failure here only leaves the statistics
// to autovacuum.
func (im *Import) refreshStatistics(ctx context.Context, created int64) {
	ctx = context.WithoutCancel(ctx)
	var rows float64
	if err := im.db.GetContext(ctx, &rows, `SELECT greatest(reltuples, 0) FROM pg_class WHERE oid = 'people'::regclass`); err != nil {
		return
	}
	if float64(created) <= 50+rows/10 {
		return
	}
	_, _ = storage.Analyze(ctx, im.db, "people", "person_emails", "person_phones", "distribution_list_members")
}

// checkCustomFields skips the rows that would pass the limits of custom
// fields (overCustomFields: a contact's; overCustomKeys: the tenant's
// different keys, contactcsv.MaxCustomColumns) and adds the keys the
// others write to the tenant's list. The list may hold keys no contact
// holds any more: only when it seems full are they counted again from the
// contacts. Imports of a tenant take turns, and nothing else writes
// custom fields, so the counts hold until the import commits.
func (im *Import) checkCustomFields(ctx context.Context) error {
	tx, t := im.tx, im.tenant
	if _, err := tx.ExecContext(ctx, overCustomFields, t, contactcsv.MaxCustomFields); err != nil {
		return fmt.Errorf("check custom fields: %w", err)
	}
	var n struct {
		Held  int `db:"held"`
		Added int `db:"added"`
	}
	if err := tx.GetContext(ctx, &n, customKeyCounts, t); err != nil {
		return fmt.Errorf("count custom-field keys: %w", err)
	}
	if n.Added == 0 {
		return nil
	}
	if n.Held+n.Added > contactcsv.MaxCustomColumns {
		for _, q := range []string{clearCustomKeys, recountCustomKeys} {
			if _, err := tx.ExecContext(ctx, q, t); err != nil {
				return fmt.Errorf("count custom-field keys again: %w", err)
			}
		}
		if _, err := tx.ExecContext(ctx, overCustomKeys, t, contactcsv.MaxCustomColumns); err != nil {
			return fmt.Errorf("check custom-field keys: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, addCustomKeys, t); err != nil {
		return fmt.Errorf("add custom-field keys: %w", err)
	}
	return nil
}

// checkLimits runs overLimit. Its probes are cheap, one index lookup per
// row, but the planner, which cannot tell how few rows get past them,
// costs the statement high enough to compile it (JIT), and compiling takes
// longer than running it: the statement runs without, and the setting is
// put back after it.
func (im *Import) checkLimits(ctx context.Context) error {
	var jit string
	if err := im.tx.GetContext(ctx, &jit, `SELECT current_setting('jit')`); err != nil {
		return fmt.Errorf("read jit: %w", err)
	}
	if _, err := im.tx.ExecContext(ctx, `SELECT set_config('jit', 'off', true)`); err != nil {
		return fmt.Errorf("jit off: %w", err)
	}
	if _, err := im.tx.ExecContext(ctx, overLimit, storage.MaxEmailsPerPerson, storage.MaxPhonesPerPerson); err != nil {
		return fmt.Errorf("check limits: %w", err)
	}
	if _, err := im.tx.ExecContext(ctx, `SELECT set_config('jit', $1, true)`, jit); err != nil {
		return fmt.Errorf("jit back: %w", err)
	}
	return nil
}

func (im *Import) stagedProblems(ctx context.Context) ([]contactcsv.Problem, error) {
	rows, err := im.tx.QueryxContext(ctx, stagedProblems, MaxReportedProblems)
	if err != nil {
		return nil, fmt.Errorf("list row problems: %w", err)
	}
	defer rows.Close()
	var out []contactcsv.Problem
	for rows.Next() {
		var p contactcsv.Problem
		if err := rows.Scan(&p.Line, &p.Column, &p.Value, &p.Message); err != nil {
			return nil, fmt.Errorf("list row problems: %w", err)
		}
		p.Value = csvheader.Preview(p.Value)
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list row problems: %w", err)
	}
	return out, nil
}
