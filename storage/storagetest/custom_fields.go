package storagetest

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jmoiron/sqlx"

	"github.com/tocsin/tocsin/storage"
)

// AddCustomFields merges fields into the custom fields of the tenant's
// contact person, past every limit, and lists their keys among the
// tenant's, as contacts written before the limits of custom fields hold
// them after the migration that lists the keys. Only tests use it, to
// check what becomes of such contacts.
func AddCustomFields(ctx context.Context, q sqlx.QueryerContext, tenant string, person int64, fields map[string]string) error {
	b, err := json.Marshal(fields)
	if err != nil {
		return fmt.Errorf("custom fields: %w", err)
	}
	var n int
	if err := sqlx.GetContext(ctx, q, &n, `WITH p AS (
		    UPDATE people SET custom_fields = custom_fields || $3::jsonb WHERE tenant_id = $1 AND id = $2 RETURNING id),
		k AS (
		    INSERT INTO custom_field_keys (tenant_id, key)
		    SELECT $1, k FROM jsonb_object_keys($3::jsonb) AS k WHERE EXISTS (SELECT 1 FROM p)
		    ON CONFLICT DO NOTHING)
		SELECT count(*) FROM p`, tenant, person, string(b)); err != nil {
		return fmt.Errorf("add custom fields: %w", err)
	}
	if n != 1 {
		return storage.ErrNotFound
	}
	return nil
}

// RecipientCustomFields returns the custom fields copied into the
// recipient rows of the tenant's alert, by the recipient's number (seq);
// a recipient without any is left out.
func RecipientCustomFields(ctx context.Context, q sqlx.QueryerContext, tenant string, alertID int64) (map[int64]map[string]string, error) {
	var rows []struct {
		Seq    int64  `db:"seq"`
		Custom []byte `db:"custom_fields"`
	}
	if err := sqlx.SelectContext(ctx, q, &rows, `SELECT seq, custom_fields FROM alert_recipients
		WHERE tenant_id = $1 AND alert_id = $2 AND custom_fields IS NOT NULL ORDER BY seq`, tenant, alertID); err != nil {
		return nil, fmt.Errorf("read recipients' custom fields: %w", err)
	}
	out := make(map[int64]map[string]string, len(rows))
	for _, r := range rows {
		var m map[string]string
		if err := json.Unmarshal(r.Custom, &m); err != nil {
			return nil, fmt.Errorf("recipient %d's custom fields: %w", r.Seq, err)
		}
		out[r.Seq] = m
	}
	return out, nil
}
