package files

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/tocsin/tocsin/storage"
)

// ErrClaimLost means that an upload's claim on its objects is gone: the
// upload outlived its maximum life and the orphan sweep took its objects.
// An upload is a file's (fileservice) or the attachment uploaded with an
// alert (storage.AttachmentPrefix).
var ErrClaimLost = errors.New("the upload's claim on its objects is gone")

// UploadClaim is an upload's claim on the objects under its prefix: while
// it holds, the objects are the upload's; once it expires with the upload
// neither recorded nor removed, they are orphans.
type UploadClaim struct {
	Tenant string `db:"tenant_id"`
	// Prefix is the key prefix of every object of the upload.
	Prefix string `db:"object_prefix"`
	// WorkflowID is the ProcessFile run that may write under Prefix;
	// empty when only the request that claimed it writes there (an
	// alert's attachment).
	WorkflowID string    `db:"workflow_id"`
	CreatedAt  time.Time `db:"created_at"`
	ExpiresAt  time.Time `db:"expires_at"`
}

// Claim records c (Tenant, Prefix and WorkflowID; the times are the
// database's), expiring after life. An upload claims its prefix before it
// stores the first object under it.
func (s *Store) Claim(ctx context.Context, c UploadClaim, life time.Duration) error {
	if _, err := s.DB.ExecContext(ctx, `
		INSERT INTO upload_claims (tenant_id, object_prefix, workflow_id, expires_at)
		VALUES ($1, $2, $3, now() + $4 * interval '1 millisecond')`,
		c.Tenant, c.Prefix, c.WorkflowID, life.Milliseconds()); err != nil {
		return fmt.Errorf("claim upload objects: %w", err)
	}
	return nil
}

// Release deletes tenant's claim on prefix, if there is one: the upload
// removed its objects itself. It waits for a sweep that holds the claim.
func (s *Store) Release(ctx context.Context, tenant, prefix string) error {
	if _, err := s.DB.ExecContext(ctx, `DELETE FROM upload_claims WHERE tenant_id = $1 AND object_prefix = $2`, tenant, prefix); err != nil {
		return fmt.Errorf("release upload claim: %w", err)
	}
	return nil
}

// ReleaseIn is what deletes tenant's claim on prefix inside the
// transaction that records what refers to its objects, when another
// repository writes that (storage.AcceptAlert): ErrClaimLost when the
// claim is gone.
func ReleaseIn(tenant, prefix string) func(context.Context, *sqlx.Tx) error {
	return func(ctx context.Context, tx *sqlx.Tx) error { return releaseInTx(ctx, tx, tenant, prefix) }
}

// releaseInTx deletes tenant's claim on prefix inside tx, ErrClaimLost when
// there is none (it waits for a sweep that holds it).
func releaseInTx(ctx context.Context, tx *sqlx.Tx, tenant, prefix string) error {
	res, err := tx.ExecContext(ctx, `DELETE FROM upload_claims WHERE tenant_id = $1 AND object_prefix = $2`, tenant, prefix)
	if err != nil {
		return fmt.Errorf("release upload claim: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrClaimLost
	}
	return nil
}

// SweepClaims takes up to limit expired claims of every tenant, the
// longest expired first, skipping those another sweep holds, and hands
// each to sweep, all in one transaction. The claims sweep handled (nil) are
// deleted; the others are kept and expire again after retryIn, so a sweep
// moves on to other claims. It returns how many claims it deleted and how
// many it kept. Each claim carries its tenant: sweep must touch nothing
// outside it.
func (s *Store) SweepClaims(ctx context.Context, limit int, retryIn time.Duration, sweep func(UploadClaim) error) (deleted, kept int, err error) {
	err = s.DB.InTx(ctx, func(tx *sqlx.Tx) error {
		claims, err := storage.SelectAll[UploadClaim](ctx, tx, "take expired upload claims", `
			SELECT tenant_id, object_prefix, workflow_id, created_at, expires_at FROM upload_claims
			WHERE expires_at < now() ORDER BY expires_at LIMIT $1
			FOR UPDATE SKIP LOCKED`, limit)
		if err != nil {
			return err
		}
		for _, c := range claims {
			if sweep(c) == nil {
				if _, err := tx.ExecContext(ctx, `DELETE FROM upload_claims WHERE tenant_id = $1 AND object_prefix = $2`, c.Tenant, c.Prefix); err != nil {
					return fmt.Errorf("delete swept upload claim: %w", err)
				}
				deleted++
				continue
			}
			if _, err := tx.ExecContext(ctx, `UPDATE upload_claims SET expires_at = now() + $3 * interval '1 millisecond'
				WHERE tenant_id = $1 AND object_prefix = $2`, c.Tenant, c.Prefix, retryIn.Milliseconds()); err != nil {
				return fmt.Errorf("postpone upload claim: %w", err)
			}
			kept++
		}
		return nil
	})
	if err != nil {
		return 0, 0, err
	}
	return deleted, kept, nil
}
