-- +goose Up
-- Tenants take turns in the outbox: a start request's turn is its place
-- among the requests of its tenant and priority waiting when it was written
-- (storage.EnqueueStart), and requests are claimed by priority, then turn,
-- then age (storage.ClaimStarts). So a tenant's first request waiting goes
-- before another tenant's thousandth, and a flood of one tenant delays its
-- own starts, not another's. Requests written before turns have turn 0 and
-- go first, as they did.
ALTER TABLE workflow_starts ADD COLUMN turn bigint NOT NULL DEFAULT 0;
CREATE INDEX workflow_starts_turn ON workflow_starts (priority, turn, id);
CREATE INDEX workflow_starts_tenant_turn ON workflow_starts (tenant_id, priority, turn);
DROP INDEX workflow_starts_next;

-- +goose Down
CREATE INDEX workflow_starts_next ON workflow_starts (priority, id);
DROP INDEX workflow_starts_tenant_turn;
DROP INDEX workflow_starts_turn;
ALTER TABLE workflow_starts DROP COLUMN turn;
