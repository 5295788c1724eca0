package directory

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/tocsin/tocsin/storage"
)

// AddLocation stores a location of the person and returns its id; one
// past storage.MaxLocationsPerPerson is a *storage.LimitError.
func AddLocation(ctx context.Context, q Querier, tenant string, person int64, c NewLocation) (int64, error) {
	addr := c.Address
	if addr == nil {
		addr = json.RawMessage("{}")
	}
	var id int64
	err := q.GetContext(ctx, &id, `
		INSERT INTO person_locations (tenant_id, person_id, name, address, latitude, longitude) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
		tenant, person, c.Name, []byte(addr), c.Latitude, c.Longitude)
	if err != nil {
		return 0, fmt.Errorf("insert location: %w", err)
	}
	return id, locationLimit.check(ctx, q, tenant, person)
}

// GetLocation reads one location of the person.
func GetLocation(ctx context.Context, q Querier, tenant string, person, id int64) (storage.Location, error) {
	return locations.get(ctx, q, tenant, person, id)
}

// ListLocations reads the person's locations.
func ListLocations(ctx context.Context, q Querier, tenant string, person int64) ([]storage.Location, error) {
	return locations.list(ctx, q, tenant, person)
}

// RemoveLocation removes a location (and the weather subscriptions for it).
func RemoveLocation(ctx context.Context, q Querier, tenant string, person, id int64) error {
	return storage.ExecOne(ctx, q, "delete location", `DELETE FROM person_locations WHERE tenant_id = $1 AND person_id = $2 AND id = $3`, tenant, person, id)
}

// WeatherChange is one category's channels to add or remove, optionally for one location.
type WeatherChange struct {
	Category string
	Channels []string
	Location int64
}

// AddWeather merges channels into the person's subscriptions; new
// subscriptions past storage.MaxWeatherPerPerson are a
// *storage.LimitError. Changes that only merge channels into subscriptions
// the person has pass, even for a person given more before the limit
// existed.
func AddWeather(ctx context.Context, tx *sqlx.Tx, tenant string, person int64, changes []WeatherChange) error {
	added := false
	for _, c := range changes {
		// A row the statement inserted has no xmax; one it updated has the
		// transaction's.
		var inserted bool
		err := tx.GetContext(ctx, &inserted, `
			INSERT INTO directory_weather_notifications (tenant_id, person_id, category, location_id, channels)
			VALUES ($1, $2, $3, NULLIF($4, 0), $5)
			ON CONFLICT (person_id, category, location_id) DO UPDATE
			SET channels = ARRAY(SELECT DISTINCT unnest(directory_weather_notifications.channels || excluded.channels) ORDER BY 1),
				updated_at = now()
			RETURNING xmax = 0`,
			tenant, person, c.Category, c.Location, pq.StringArray(sorted(c.Channels)))
		if err != nil {
			return fmt.Errorf("add weather notification: %w", err)
		}
		added = added || inserted
	}
	if !added {
		return nil
	}
	return weatherLimit.check(ctx, tx, tenant, person)
}

// RemoveWeather takes channels out of the person's subscriptions; no
// channels removes the category. A subscription left without channels is
// removed. It reports how many subscriptions it touched.
func RemoveWeather(ctx context.Context, tx *sqlx.Tx, tenant string, person int64, changes []WeatherChange) (int64, error) {
	var touched int64
	for _, c := range changes {
		var res interface{ RowsAffected() (int64, error) }
		var err error
		if len(c.Channels) == 0 {
			res, err = tx.ExecContext(ctx, `DELETE FROM directory_weather_notifications
				WHERE tenant_id = $1 AND person_id = $2 AND category = $3 AND location_id IS NOT DISTINCT FROM NULLIF($4, 0)::bigint`,
				tenant, person, c.Category, c.Location)
		} else {
			res, err = tx.ExecContext(ctx, `UPDATE directory_weather_notifications
				SET channels = ARRAY(SELECT unnest(channels) EXCEPT SELECT unnest($5::text[]) ORDER BY 1), updated_at = now()
				WHERE tenant_id = $1 AND person_id = $2 AND category = $3 AND location_id IS NOT DISTINCT FROM NULLIF($4, 0)::bigint`,
				tenant, person, c.Category, c.Location, pq.StringArray(c.Channels))
		}
		if err != nil {
			return 0, fmt.Errorf("remove weather notification: %w", err)
		}
		n, _ := res.RowsAffected()
		touched += n
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM directory_weather_notifications WHERE tenant_id = $1 AND person_id = $2 AND cardinality(channels) = 0`,
		tenant, person); err != nil {
		return 0, fmt.Errorf("remove empty weather notifications: %w", err)
	}
	return touched, nil
}

// ListWeather reads the person's weather subscriptions.
func ListWeather(ctx context.Context, q Querier, tenant string, person int64) ([]Weather, error) {
	var rows []struct {
		Category  string         `db:"category"`
		Location  *int64         `db:"location_id"`
		Channels  pq.StringArray `db:"channels"`
		CreatedAt time.Time      `db:"created_at"`
		UpdatedAt time.Time      `db:"updated_at"`
	}
	if err := q.SelectContext(ctx, &rows, `SELECT category, location_id, channels, created_at, updated_at
		FROM directory_weather_notifications WHERE tenant_id = $1 AND person_id = $2 ORDER BY category, location_id NULLS FIRST`, tenant, person); err != nil {
		return nil, fmt.Errorf("list weather notifications: %w", err)
	}
	out := make([]Weather, 0, len(rows))
	for _, r := range rows {
		out = append(out, Weather{Category: r.Category, LocationID: r.Location, Channels: []string(r.Channels), CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt})
	}
	return out, nil
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return slices.Compact(s)
}
