-- +goose Up
-- Broadcast-style channels (EAS, mobile broadcast, team chat, social posts,
-- neighborhood) are delivered once per alert and destination, not per
-- recipient: one row per alert, channel, cycle and destination.
CREATE TABLE alert_broadcasts (
    tenant_id           text        NOT NULL,
    alert_id            bigint      NOT NULL,
    channel             text        NOT NULL,
    cycle               int         NOT NULL,
    destination         text        NOT NULL,
    destination_name    text        NOT NULL DEFAULT '',
    status              text        NOT NULL,
    provider_message_id text        NOT NULL DEFAULT '',
    error               text        NOT NULL DEFAULT '',
    permanent           boolean     NOT NULL DEFAULT false,
    attempts            int         NOT NULL DEFAULT 1,
    idempotency_key     text        NOT NULL,
    sent_at             timestamptz,
    updated_at          timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (alert_id, channel, cycle, destination)
);
CREATE INDEX alert_broadcasts_tenant ON alert_broadcasts (tenant_id, alert_id);

-- +goose Down
DROP TABLE alert_broadcasts;
