-- +goose Up
-- The phone numbers an ETN alert calls: those inside the alert's areas
-- (contacts' locations and imported address points), one row per number
-- with its delivery's latest state.
CREATE TABLE alert_etn_targets (
    tenant_id           text             NOT NULL,
    alert_id            bigint           NOT NULL,
    seq                 bigint           NOT NULL,
    phone               text             NOT NULL,
    source              text             NOT NULL,
    person_id           bigint,
    name                text             NOT NULL DEFAULT '',
    latitude            double precision NOT NULL,
    longitude           double precision NOT NULL,
    status              text             NOT NULL DEFAULT 'Pending',
    attempts            int              NOT NULL DEFAULT 0,
    provider_message_id text             NOT NULL DEFAULT '',
    error               text             NOT NULL DEFAULT '',
    sent_at             timestamptz,
    delivered_at        timestamptz,
    updated_at          timestamptz      NOT NULL DEFAULT now(),
    PRIMARY KEY (alert_id, seq),
    CONSTRAINT alert_etn_targets_phone UNIQUE (alert_id, phone)
);

-- +goose Down
DROP TABLE alert_etn_targets;
