-- +goose Up
-- Alerts: one row per alert with its settings as sent, its lifecycle
-- (Scheduled -> Queued -> Processing -> Sent | Failed, then completed) and
-- the columns the list filters use.
CREATE TABLE alerts (
    id              bigserial PRIMARY KEY,
    tenant_id       text        NOT NULL,
    created_by      text        NOT NULL DEFAULT '',
    client_key      text,
    alert_type      text        NOT NULL,
    priority        text        NOT NULL,
    subject         text        NOT NULL,
    sender_name     text        NOT NULL DEFAULT '',
    incident_name   text        NOT NULL DEFAULT '',
    facility_names  text[]      NOT NULL DEFAULT '{}',
    hidden          boolean     NOT NULL DEFAULT false,
    restricted      boolean     NOT NULL DEFAULT false,
    channels        text[]      NOT NULL,
    settings        jsonb       NOT NULL,
    attachments     jsonb       NOT NULL DEFAULT '[]',
    status          text        NOT NULL,
    error           text        NOT NULL DEFAULT '',
    workflow_id     text        NOT NULL,
    batch_size      int         NOT NULL DEFAULT 0,
    recipient_count bigint      NOT NULL DEFAULT 0,
    current_cycle   int         NOT NULL DEFAULT 0,
    scheduled_for   timestamptz,
    created_at      timestamptz NOT NULL DEFAULT now(),
    queued_at       timestamptz,
    processing_at   timestamptz,
    sent_at         timestamptz,
    failed_at       timestamptz,
    completed_at    timestamptz,
    resolved_at     timestamptz
);
CREATE UNIQUE INDEX alerts_tenant_client_key ON alerts (tenant_id, client_key) WHERE client_key IS NOT NULL;
CREATE INDEX alerts_tenant_created ON alerts (tenant_id, created_at DESC, id DESC);
CREATE INDEX alerts_tenant_creator ON alerts (tenant_id, created_by, created_at DESC, id DESC);

-- Every status an alert went through, for the status operation.
CREATE TABLE alert_status_changes (
    id        bigserial PRIMARY KEY,
    tenant_id text        NOT NULL,
    alert_id  bigint      NOT NULL REFERENCES alerts (id) ON DELETE CASCADE,
    status    text        NOT NULL,
    detail    text        NOT NULL DEFAULT '',
    at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX alert_status_changes_alert ON alert_status_changes (alert_id, id);

-- The recipients of an alert, resolved once with INSERT ... SELECT. seq numbers
-- them 1..n, so a delivery batch is "seq in (lo, hi]".
CREATE TABLE alert_recipients (
    tenant_id     text    NOT NULL,
    alert_id      bigint  NOT NULL,
    seq           bigint  NOT NULL,
    person_id     bigint,
    external_id   text    NOT NULL DEFAULT '',
    first_name    text    NOT NULL DEFAULT '',
    last_name     text    NOT NULL DEFAULT '',
    email         text,
    phone         text,
    voice_phone   text,
    custom_fields jsonb,
    is_mandatory  boolean NOT NULL DEFAULT false,
    confirmed_at  timestamptz,
    responded_at  timestamptz,
    PRIMARY KEY (alert_id, seq)
);
CREATE INDEX alert_recipients_person ON alert_recipients (alert_id, person_id);

-- One row per recipient, channel and cycle: the delivery's latest state.
-- Retried batches upsert the same row, so there is never more than one.
CREATE TABLE alert_deliveries (
    tenant_id           text        NOT NULL,
    alert_id            bigint      NOT NULL,
    channel             text        NOT NULL,
    cycle               int         NOT NULL,
    seq                 bigint      NOT NULL,
    address             text        NOT NULL DEFAULT '',
    status              text        NOT NULL,
    attempts            int         NOT NULL DEFAULT 1,
    provider_message_id text        NOT NULL DEFAULT '',
    error               text        NOT NULL DEFAULT '',
    permanent           boolean     NOT NULL DEFAULT false,
    sent_at             timestamptz,
    delivered_at        timestamptz,
    updated_at          timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (alert_id, channel, cycle, seq)
);

-- Counts per delivery batch, rewritten with each batch, so progress is a sum
-- over a few hundred rows instead of a count over a million.
CREATE TABLE alert_batches (
    tenant_id  text        NOT NULL,
    alert_id   bigint      NOT NULL,
    channel    text        NOT NULL,
    cycle      int         NOT NULL,
    lo         bigint      NOT NULL,
    hi         bigint      NOT NULL,
    total      int         NOT NULL DEFAULT 0,
    sent       int         NOT NULL DEFAULT 0,
    delivered  int         NOT NULL DEFAULT 0,
    failed     int         NOT NULL DEFAULT 0,
    skipped    int         NOT NULL DEFAULT 0,
    retrying   int         NOT NULL DEFAULT 0,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (alert_id, channel, cycle, lo)
);

-- Poll answers and confirmations: one per recipient and question (the last one counts).
CREATE TABLE alert_responses (
    tenant_id    text        NOT NULL,
    alert_id     bigint      NOT NULL,
    seq          bigint      NOT NULL,
    question_id  int         NOT NULL,
    option_id    int         NOT NULL,
    via          text        NOT NULL DEFAULT 'link',
    responded_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (alert_id, seq, question_id)
);
CREATE INDEX alert_responses_option ON alert_responses (alert_id, option_id);

-- A tenant's defaults for new alerts.
CREATE TABLE alert_defaults (
    tenant_id  text PRIMARY KEY,
    defaults   jsonb       NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE alert_defaults, alert_responses, alert_batches, alert_deliveries,
    alert_recipients, alert_status_changes, alerts;
