-- +goose Up
-- Updates and cancels of an alert's CAP messages, numbered per alert.
CREATE TABLE alert_cap_updates (
    tenant_id  text        NOT NULL,
    alert_id   bigint      NOT NULL,
    seq        int         NOT NULL,
    msg_type   text        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (alert_id, seq)
);

-- +goose Down
DROP TABLE alert_cap_updates;
