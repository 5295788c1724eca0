package storagetest

import (
	"context"

	"github.com/jmoiron/sqlx"

	"github.com/tocsin/tocsin/storage"
)

// UploadClaim is an upload's claim on its objects as stored, and whether
// it has expired.
type UploadClaim struct {
	Prefix     string `db:"object_prefix"`
	WorkflowID string `db:"workflow_id"`
	Expired    bool   `db:"expired"`
}

// UploadClaims returns the tenant's upload claims by prefix. The API does
// not show them; tests read them to see what an upload left behind.
func UploadClaims(ctx context.Context, q sqlx.QueryerContext, tenant string) ([]UploadClaim, error) {
	return storage.SelectAll[UploadClaim](ctx, q, "read upload claims", `
		SELECT object_prefix, workflow_id, expires_at < now() AS expired
		FROM upload_claims WHERE tenant_id = $1 ORDER BY object_prefix`, tenant)
}
