package results

import (
	"context"
	"fmt"
)

// AlertDeliveries returns every delivery to a recipient of the tenant's
// alert, on all channels, by channel, recipient and cycle. The result
// pages show them a channel or a recipient at a time; tests read them
// whole to check that each recipient got one row per channel.
func (s *Store) AlertDeliveries(ctx context.Context, tenant string, alertID int64) ([]Delivery, error) {
	var out []Delivery
	if err := s.DB.SelectContext(ctx, &out, `SELECT `+deliveryColumns+` FROM alert_deliveries
		WHERE alert_id = $1 AND tenant_id = $2 ORDER BY channel, seq, cycle`, alertID, tenant); err != nil {
		return nil, fmt.Errorf("read deliveries: %w", err)
	}
	return out, nil
}
