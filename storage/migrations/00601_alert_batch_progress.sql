-- +goose Up
-- What a delivery batch run as a local activity (a single-batch alert's,
-- inside the workflow task) has sent so far: the messages its provider
-- took (activities.BatchProgress as JSON), rewritten at most once a second
-- while they leave and once more when its send fails. A batch run as an
-- activity keeps the same in its Temporal heartbeat details instead. The
-- attempt that follows a dead worker reads the row and records those
-- messages' results instead of sending them again; the transaction that
-- records the batch's results deletes it, and the end of the alert
-- (CompleteAlert, FailAlert) deletes what its batches left.
CREATE TABLE alert_batch_progress (
    tenant_id  text        NOT NULL,
    alert_id   bigint      NOT NULL,
    channel    text        NOT NULL,
    cycle      int         NOT NULL,
    lo         bigint      NOT NULL,
    hi         bigint      NOT NULL,
    sent       jsonb       NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (alert_id, channel, cycle, lo, hi)
);

-- +goose Down
DROP TABLE alert_batch_progress;
