-- +goose Up
-- The outbox of workflow starts (see storage.EnqueueStart): a request to
-- start a workflow is written in the transaction that makes it necessary
-- (an accepted alert, a spent verification nonce, an uploaded file), and
-- dispatch.Starter starts the workflow under its business id after commit,
-- then deletes the row. Rows are ordered by priority, then age.
CREATE TABLE workflow_starts (
    id            bigserial   PRIMARY KEY,
    tenant_id     text        NOT NULL,
    workflow_id   text        NOT NULL,
    workflow_type text        NOT NULL,
    input         jsonb       NOT NULL,
    signal_name   text,
    signal_input  jsonb,
    priority      int         NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    available_at  timestamptz NOT NULL DEFAULT now(),
    attempts      int         NOT NULL DEFAULT 0,
    last_error    text
);
CREATE INDEX workflow_starts_next ON workflow_starts (priority, id);

-- The NonEmergency alerts accepted and not yet final, which back-pressure counts.
CREATE INDEX alerts_backlog ON alerts (tenant_id)
    WHERE status IN ('Queued', 'Processing') AND priority <> 'Emergency';

-- +goose Down
DROP INDEX alerts_backlog;
DROP TABLE workflow_starts;
