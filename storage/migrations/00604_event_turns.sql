-- +goose Up
-- Tenants take turns in the events outbox, as in the workflow-start one
-- (00602): an event's turn is its place among its tenant's events not
-- dispatched yet when it was written (storage.EmitEvent), and the
-- dispatcher claims events by turn, then age (storage.EventOutbox). So a
-- tenant whose alerts write thousands of events, each a delivery to every
-- subscription, delays its own hook deliveries, not another tenant's.
-- Events written before turns have turn 0 and go first, as they did.
ALTER TABLE events ADD COLUMN turn bigint NOT NULL DEFAULT 0;
CREATE INDEX events_undispatched_turn ON events (turn, created_at) WHERE dispatched_at IS NULL;
CREATE INDEX events_undispatched_tenant_turn ON events (tenant_id, turn) WHERE dispatched_at IS NULL;
DROP INDEX events_undispatched;

-- +goose Down
CREATE INDEX events_undispatched ON events (created_at) WHERE dispatched_at IS NULL;
DROP INDEX events_undispatched_tenant_turn;
DROP INDEX events_undispatched_turn;
ALTER TABLE events DROP COLUMN turn;
