package directory

import (
	"context"
	"fmt"

	"github.com/tocsin/tocsin/storage"
)

// personLimit is the most rows of a table one person may hold
// (storage.Max…PerPerson); what names the rows in errors.
type personLimit struct {
	table, what string
	max         int
}

var (
	emailLimit    = personLimit{emails.table, "email addresses", storage.MaxEmailsPerPerson}
	phoneLimit    = personLimit{phones.table, "phone numbers", storage.MaxPhonesPerPerson}
	deviceLimit   = personLimit{devices.table, "devices", storage.MaxDevicesPerPerson}
	locationLimit = personLimit{locations.table, "locations", storage.MaxLocationsPerPerson}
	weatherLimit  = personLimit{"directory_weather_notifications", "weather subscriptions", storage.MaxWeatherPerPerson}
	groupLimit    = personLimit{"group_memberships", "group memberships", storage.MaxGroupsPerPerson}
)

// check runs after a change of the transaction has added rows: when the
// person now holds more than the limit it fails with a
// *storage.LimitError, and the transaction, rolled back, leaves nothing
// of the change. The callers hold the person's row locked (see
// directoryservice), so two changes that each stay within the limit alone
// cannot both pass it.
func (l personLimit) check(ctx context.Context, q Querier, tenant string, person int64) error {
	var n int
	if err := q.GetContext(ctx, &n, `SELECT count(*) FROM (SELECT 1 FROM `+l.table+` WHERE tenant_id = $1 AND person_id = $2 LIMIT $3) r`,
		tenant, person, l.max+1); err != nil {
		return fmt.Errorf("count %s: %w", l.what, err)
	}
	if n > l.max {
		return &storage.LimitError{What: l.what, Limit: l.max}
	}
	return nil
}
