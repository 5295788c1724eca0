-- +goose Up
-- Hook subscriptions: where a tenant's events are POSTed.
CREATE TABLE hook_subscriptions (
    id               bigserial PRIMARY KEY,
    tenant_id        text        NOT NULL,
    url              text        NOT NULL,
    event_types      text[]      NOT NULL,
    active           boolean     NOT NULL DEFAULT true,
    description      text        NOT NULL DEFAULT '',
    headers          jsonb       NOT NULL DEFAULT '{}',
    secret_encrypted bytea       NOT NULL, -- AES-256-GCM under TOCSIN_SECRETS_KEY
    disabled_reason  text        NOT NULL DEFAULT '',
    disabled_at      timestamptz,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX hook_subscriptions_tenant ON hook_subscriptions (tenant_id, id);

-- One row per delivery attempt of an event to a subscription.
CREATE TABLE hook_attempts (
    id              bigserial PRIMARY KEY,
    tenant_id       text        NOT NULL,
    subscription_id bigint      NOT NULL REFERENCES hook_subscriptions (id) ON DELETE CASCADE,
    event_id        text        NOT NULL,
    event_type      text        NOT NULL,
    attempt         int         NOT NULL,
    requested_at    timestamptz NOT NULL,
    response_status int,
    latency_ms      bigint      NOT NULL DEFAULT 0,
    outcome         text        NOT NULL,
    error           text        NOT NULL DEFAULT '',
    next_retry_at   timestamptz,
    CONSTRAINT hook_attempts_once UNIQUE (subscription_id, event_id, attempt)
);
CREATE INDEX hook_attempts_subscription ON hook_attempts (tenant_id, subscription_id, requested_at DESC);
CREATE INDEX hook_attempts_requested ON hook_attempts (requested_at);

-- +goose Down
DROP TABLE hook_attempts, hook_subscriptions;
