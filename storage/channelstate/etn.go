package channelstate

import (
	"bufio"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"iter"
	"os"
	"strconv"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/tocsin/tocsin/alert"
	"github.com/tocsin/tocsin/storage"
)

// targetsSQL returns a query of the distinct phone numbers of tenant ($1)
// inside the place p (storage.InsidePlace, the rule contacts are selected
// by, its values added to a): contacts' callable phones at their locations
// and the points of the named address-point lists ($2, text[]), a
// contact's phone preferred to the same number in a list. Its columns are
// phone, source ("contact" or "addressPoint"), person_id, name, latitude
// and longitude.
func targetsSQL(a *storage.Args, p alert.Place) string {
	return `SELECT DISTINCT ON (phone) phone, source, person_id, name, latitude, longitude FROM (
		SELECT p.number AS phone, 'contact' AS source, pe.id AS person_id,
			trim(pe.first_name || ' ' || pe.last_name) AS name, l.latitude, l.longitude, 0 AS pref
		FROM person_locations l
		JOIN people pe ON pe.id = l.person_id AND pe.tenant_id = $1
		JOIN person_phones p ON p.person_id = l.person_id AND p.tenant_id = $1 AND p.can_call
		WHERE l.tenant_id = $1 AND ` + storage.InsidePlace(a, p, "l.latitude", "l.longitude") + `
		UNION ALL
		SELECT ap.phone, 'addressPoint', NULL, ap.name, ap.latitude, ap.longitude, 1
		FROM etn_address_points ap
		WHERE ap.tenant_id = $1 AND ap.list_name = ANY($2::text[]) AND ` + storage.InsidePlace(a, p, "ap.latitude", "ap.longitude") + `
	) t ORDER BY phone, pref`
}

// AddressPoint is one imported address point: a phone number at a place.
type AddressPoint struct {
	ExternalID string  `db:"external_id"`
	Name       string  `db:"name"`
	Address    string  `db:"address"`
	Phone      string  `db:"phone"`
	Latitude   float64 `db:"latitude"`
	Longitude  float64 `db:"longitude"`
}

// AddressPointList describes an imported list.
type AddressPointList struct {
	Name       string    `db:"list_name"`
	Points     int       `db:"points"`
	ImportedAt time.Time `db:"imported_at"`
}

// AddressPoints stores address-point lists (etn_address_points).
type AddressPoints struct {
	DB *storage.DB
}

// Replace makes the points that points yields the content of the tenant's
// list name, in one transaction, and returns how many there were. The
// points are spooled to a temporary file as they come, so memory does not
// grow with the list and no database connection waits on a slow client;
// once points ends they are copied into a temporary table (COPY, which
// lib/pq sends in messages of about 64 KiB) and the list is swapped for
// them. An error from points ends the import and leaves the list as it
// was, and so do no points at all (0 and a nil error).
func (s *AddressPoints) Replace(ctx context.Context, tenant, name string, points iter.Seq2[AddressPoint, error]) (int, error) {
	spool, err := os.CreateTemp("", "tocsin-etn-points-*.csv")
	if err != nil {
		return 0, fmt.Errorf("spool address points: %w", err)
	}
	defer func() { _ = spool.Close(); _ = os.Remove(spool.Name()) }()
	buf := bufio.NewWriter(spool)
	w := csv.NewWriter(buf)
	n := 0
	for p, err := range points {
		if err != nil {
			return 0, err
		}
		if err := w.Write([]string{p.ExternalID, p.Name, p.Address, p.Phone,
			strconv.FormatFloat(p.Latitude, 'g', -1, 64), strconv.FormatFloat(p.Longitude, 'g', -1, 64)}); err != nil {
			return 0, fmt.Errorf("spool address points: %w", err)
		}
		n++
	}
	if n == 0 {
		return 0, nil
	}
	if w.Flush(); w.Error() != nil {
		return 0, fmt.Errorf("spool address points: %w", w.Error())
	}
	if _, err := spool.Seek(0, io.SeekStart); err != nil {
		return 0, fmt.Errorf("spool address points: %w", err)
	}
	err = s.DB.InTx(ctx, func(tx *sqlx.Tx) error {
		if _, err := tx.ExecContext(ctx, `CREATE TEMP TABLE etn_point_import (
			external_id text, name text, address text, phone text, latitude float8, longitude float8) ON COMMIT DROP`); err != nil {
			return fmt.Errorf("stage address points: %w", err)
		}
		stmt, err := tx.PrepareContext(ctx, pq.CopyIn("etn_point_import", "external_id", "name", "address", "phone", "latitude", "longitude"))
		if err != nil {
			return fmt.Errorf("start copy: %w", err)
		}
		defer stmt.Close()
		r := csv.NewReader(bufio.NewReader(spool))
		r.FieldsPerRecord = 6
		r.ReuseRecord = true
		for {
			rec, err := r.Read()
			if err == io.EOF {
				break
			}
			if err != nil {
				return fmt.Errorf("read spooled address points: %w", err)
			}
			lat, _ := strconv.ParseFloat(rec[4], 64)
			lng, _ := strconv.ParseFloat(rec[5], 64)
			if _, err := stmt.ExecContext(ctx, rec[0], rec[1], rec[2], rec[3], lat, lng); err != nil {
				return fmt.Errorf("copy address points: %w", err)
			}
		}
		// Without arguments, the COPY ends.
		if _, err := stmt.ExecContext(ctx); err != nil {
			return fmt.Errorf("copy address points: %w", err)
		}
		// Imports of one list take turns from here to their commit, so that
		// each DELETE sees what the one before inserted: the list ends as
		// one import.
		if err := lockPointList(ctx, tx, tenant, name); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM etn_address_points WHERE tenant_id = $1 AND list_name = $2`, tenant, name); err != nil {
			return fmt.Errorf("clear address points: %w", err)
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO etn_address_points (tenant_id, list_name, external_id, name, address, phone, latitude, longitude)
			SELECT $1, $2, external_id, name, address, phone, latitude, longitude FROM etn_point_import`, tenant, name)
		if err != nil {
			return fmt.Errorf("insert address points: %w", err)
		}
		inserted, _ := res.RowsAffected()
		if _, err := tx.ExecContext(ctx, `INSERT INTO etn_address_point_lists (tenant_id, list_name, points, imported_at) VALUES ($1, $2, $3, now())
			ON CONFLICT (tenant_id, list_name) DO UPDATE SET points = excluded.points, imported_at = excluded.imported_at`,
			tenant, name, inserted); err != nil {
			return fmt.Errorf("record address-point list: %w", err)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

// PointListSorting is how address-point lists may be ordered: by name
// unless asked otherwise, the name breaking ties.
var PointListSorting = storage.Sorting{
	Columns: map[string]string{"listname": "list_name", "points": "points", "importedat": "imported_at"},
	Default: "list_name", TieBreak: "list_name",
}

// Lists returns a page of the tenant's lists in order (an ORDER BY list
// built from PointListSorting; by name when empty) and how many lists the
// tenant has. It reads the row each import keeps per list
// (etn_address_point_lists), not the points.
func (s *AddressPoints) Lists(ctx context.Context, tenant, order string, limit, offset int) ([]AddressPointList, storage.Total, error) {
	if order == "" {
		order = PointListSorting.Default
	}
	const from = `FROM etn_address_point_lists WHERE tenant_id = $1`
	return storage.Page[AddressPointList](ctx, s.DB, "address-point lists", storage.CountRows(from),
		`SELECT list_name, points, imported_at `+from+` ORDER BY `+order, []any{tenant}, limit, offset)
}

// MissingPointLists returns the names among names that are no list of the
// tenant (a list exists while it has points), each once, in order.
func MissingPointLists(ctx context.Context, q sqlx.QueryerContext, tenant string, names []string) ([]string, error) {
	if len(names) == 0 {
		return nil, nil
	}
	return storage.SelectAll[string](ctx, q, "check address-point lists", `SELECT n FROM unnest($2::text[]) WITH ORDINALITY AS u(n, i)
		WHERE NOT EXISTS (SELECT 1 FROM etn_address_points p WHERE p.tenant_id = $1 AND p.list_name = u.n)
		GROUP BY n ORDER BY min(i)`, tenant, pq.StringArray(names))
}

// Delete removes a list; storage.ErrNotFound when it has no points.
// It waits for an import of the list in progress, so that it removes the
// list that import leaves rather than finding none.
func (s *AddressPoints) Delete(ctx context.Context, tenant, name string) error {
	return s.DB.InTx(ctx, func(tx *sqlx.Tx) error {
		if err := lockPointList(ctx, tx, tenant, name); err != nil {
			return err
		}
		if err := storage.ExecOne(ctx, tx, "delete address points", `DELETE FROM etn_address_points WHERE tenant_id = $1 AND list_name = $2`, tenant, name); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM etn_address_point_lists WHERE tenant_id = $1 AND list_name = $2`, tenant, name); err != nil {
			return fmt.Errorf("delete address-point list: %w", err)
		}
		return nil
	})
}

// lockPointList makes the transactions that replace or delete one list
// take turns until they commit.
func lockPointList(ctx context.Context, tx *sqlx.Tx, tenant, name string) error {
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 11))`, tenant+"\n"+name); err != nil {
		return fmt.Errorf("lock address points: %w", err)
	}
	return nil
}

// CallSlots are a tenant's ETN call slots (etn_call_slots): a call holds
// one from its request until it is released or its lease runs out.
type CallSlots struct {
	DB *storage.DB
}

// Ensure creates the tenant's slots 1..limit that do not exist yet.
func (s *CallSlots) Ensure(ctx context.Context, tenant string, limit int) error {
	if _, err := s.DB.ExecContext(ctx, `INSERT INTO etn_call_slots (tenant_id, slot)
		SELECT $1, g FROM generate_series(1, $2::int) g ON CONFLICT DO NOTHING`, tenant, limit); err != nil {
		return fmt.Errorf("create call slots: %w", err)
	}
	return nil
}

// Take gives holder a free slot among the tenant's first limit ones (or the
// one it holds already) for lease, and reports whether there was one.
func (s *CallSlots) Take(ctx context.Context, tenant string, limit int, holder string, lease time.Duration) (bool, error) {
	var slot []int
	err := s.DB.SelectContext(ctx, &slot, `
		UPDATE etn_call_slots s SET holder = $3, expires_at = now() + make_interval(secs => $4)
		FROM (SELECT slot FROM etn_call_slots
			WHERE tenant_id = $1 AND slot <= $2 AND (holder IS NULL OR holder = $3 OR expires_at < now())
			ORDER BY (holder = $3) DESC NULLS LAST, slot LIMIT 1 FOR UPDATE SKIP LOCKED) f
		WHERE s.tenant_id = $1 AND s.slot = f.slot RETURNING s.slot`,
		tenant, limit, holder, lease.Seconds())
	if err != nil {
		return false, fmt.Errorf("take call slot: %w", err)
	}
	return len(slot) > 0, nil
}

// Release frees the slot holder has, if any.
func (s *CallSlots) Release(ctx context.Context, tenant, holder string) error {
	if _, err := s.DB.ExecContext(ctx, `UPDATE etn_call_slots SET holder = NULL, expires_at = NULL
		WHERE tenant_id = $1 AND holder = $2`, tenant, holder); err != nil {
		return fmt.Errorf("release call slot: %w", err)
	}
	return nil
}

// InUse counts the tenant's held slots.
func (s *CallSlots) InUse(ctx context.Context, tenant string) (int, error) {
	var n int
	err := s.DB.GetContext(ctx, &n, `SELECT count(*) FROM etn_call_slots
		WHERE tenant_id = $1 AND holder IS NOT NULL AND expires_at > now()`, tenant)
	return n, err
}
