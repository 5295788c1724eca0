-- +goose Up
-- Provider configuration per tenant and channel. The whole configuration is
-- sealed with AES-256-GCM (TOCSIN_SECRETS_KEY), bound to tenant and channel.
CREATE TABLE channel_providers (
    tenant_id  text        NOT NULL,
    channel    text        NOT NULL,
    sealed     bytea       NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, channel)
);

-- One row per voice or ETN call: what was asked, what the provider said in
-- its status callbacks, and when a busy or unanswered call is dialled again.
CREATE TABLE voice_calls (
    tenant_id        text        NOT NULL,
    call_key         text        NOT NULL,
    channel          text        NOT NULL,
    alert_id         bigint,
    recipient        text        NOT NULL,
    message          jsonb       NOT NULL,
    provider_call_id text        NOT NULL DEFAULT '',
    earlier_call_ids text[]      NOT NULL DEFAULT '{}',
    status           text        NOT NULL DEFAULT 'Requested',
    answered_by      text        NOT NULL DEFAULT '',
    digits           text        NOT NULL DEFAULT '',
    confirmed_at     timestamptz,
    attempts         int         NOT NULL DEFAULT 0,
    max_attempts     int         NOT NULL DEFAULT 1,
    retry_interval_s int         NOT NULL DEFAULT 300,
    next_attempt_at  timestamptz,
    error            text        NOT NULL DEFAULT '',
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, call_key)
);
CREATE INDEX voice_calls_due ON voice_calls (next_attempt_at) WHERE next_attempt_at IS NOT NULL;
CREATE INDEX voice_calls_alert ON voice_calls (tenant_id, alert_id, channel);

-- ETN call slots: a tenant has as many rows as concurrent calls it allows;
-- a call holds one from its request until its final status callback (or the
-- lease expires), so the limit holds across every worker.
CREATE TABLE etn_call_slots (
    tenant_id  text NOT NULL,
    slot       int  NOT NULL,
    holder     text,
    expires_at timestamptz,
    PRIMARY KEY (tenant_id, slot)
);
CREATE INDEX etn_call_slots_holder ON etn_call_slots (tenant_id, holder) WHERE holder IS NOT NULL;

-- Imported address points for ETN: phone numbers at places, besides the
-- contacts' own locations.
CREATE TABLE etn_address_points (
    id          bigserial PRIMARY KEY,
    tenant_id   text             NOT NULL,
    list_name   text             NOT NULL,
    external_id text             NOT NULL DEFAULT '',
    name        text             NOT NULL DEFAULT '',
    address     text             NOT NULL DEFAULT '',
    phone       text             NOT NULL,
    latitude    double precision NOT NULL CHECK (latitude BETWEEN -90 AND 90),
    longitude   double precision NOT NULL CHECK (longitude BETWEEN -180 AND 180),
    created_at  timestamptz      NOT NULL DEFAULT now()
);
CREATE INDEX etn_address_points_tenant_list ON etn_address_points (tenant_id, list_name, id);
CREATE INDEX etn_address_points_tenant_lat_lng ON etn_address_points (tenant_id, latitude, longitude);

-- Per account and group outcome of a neighborhood-network post.
CREATE TABLE neighborhood_statuses (
    tenant_id    text        NOT NULL,
    alert_id     bigint,
    message_key  text        NOT NULL,
    account_id   text        NOT NULL,
    account_name text        NOT NULL DEFAULT '',
    group_id     text        NOT NULL,
    group_name   text        NOT NULL DEFAULT '',
    status       text        NOT NULL,
    post_id      text        NOT NULL DEFAULT '',
    error        text        NOT NULL DEFAULT '',
    updated_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, message_key, account_id, group_id)
);
CREATE INDEX neighborhood_statuses_alert ON neighborhood_statuses (tenant_id, alert_id, lower(account_name));

-- CAP messages sent for EAS and mobile broadcast; updates and cancels
-- reference earlier ones.
CREATE TABLE cap_messages (
    tenant_id   text        NOT NULL,
    identifier  text        NOT NULL,
    alert_id    bigint,
    channel     text        NOT NULL,
    sender      text        NOT NULL,
    sent        timestamptz NOT NULL,
    msg_type    text        NOT NULL,
    refs        text        NOT NULL DEFAULT '',
    document    text        NOT NULL,
    status      text        NOT NULL DEFAULT 'Sent',
    error       text        NOT NULL DEFAULT '',
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, identifier)
);
CREATE INDEX cap_messages_alert ON cap_messages (tenant_id, alert_id, channel, sent);

-- +goose Down
DROP TABLE cap_messages, neighborhood_statuses, etn_address_points, etn_call_slots, voice_calls, channel_providers;
