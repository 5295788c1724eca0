-- +goose Up
-- A failed start holds back only its own event (storage.EventOutbox): the
-- dispatcher marks the events of a claim whose deliveries were all
-- started, and an event with a start that failed stays undispatched but
-- waits until retry_at (1 s doubling to 1 min with attempts) before it is
-- claimed again, so an event whose starts keep failing does not come
-- first in every claim and hold the events behind it. last_error is the
-- last failure, for the operator. Adding the columns rewrites nothing: a
-- constant default is kept in the catalog.
ALTER TABLE events ADD COLUMN attempts integer NOT NULL DEFAULT 0,
    ADD COLUMN retry_at timestamptz,
    ADD COLUMN last_error text NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE events DROP COLUMN last_error, DROP COLUMN retry_at, DROP COLUMN attempts;
