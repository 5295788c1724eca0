-- +goose Up
-- Verification of directory users' email addresses and phone numbers. One
-- row per address holds the most recently sent code (its hash only) and the
-- state of its verification; nonces reserve resends and rate-limit them.
CREATE TABLE directory_verifications (
    id            bigserial PRIMARY KEY,
    tenant_id     text        NOT NULL,
    person_id     bigint      NOT NULL REFERENCES people (id) ON DELETE CASCADE,
    kind          text        NOT NULL CHECK (kind IN ('email', 'phone')),
    address       text        NOT NULL,
    status        text        NOT NULL DEFAULT 'Unverified',
    -- seq counts resends; a code is stored only by the resend that asked for it.
    seq           int         NOT NULL DEFAULT 0,
    code_salt     bytea,
    code_hash     bytea,
    -- The plain code, kept only while TOCSIN_TESTING_ENDPOINTS is on, for the
    -- testing operations; NULL otherwise.
    testing_code  text,
    attempts      int         NOT NULL DEFAULT 0,
    max_attempts  int         NOT NULL DEFAULT 5,
    sent_at       timestamptz,
    expires_at    timestamptz,
    failure       text        NOT NULL DEFAULT '',
    workflow_id   text        NOT NULL DEFAULT '',
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT directory_verifications_address UNIQUE (person_id, kind, address)
);
CREATE INDEX directory_verifications_tenant_pending ON directory_verifications (tenant_id, kind, expires_at)
    WHERE status = 'Pending';

CREATE TABLE directory_verification_nonces (
    id         bigserial PRIMARY KEY,
    tenant_id  text        NOT NULL,
    person_id  bigint      NOT NULL REFERENCES people (id) ON DELETE CASCADE,
    kind       text        NOT NULL CHECK (kind IN ('email', 'phone')),
    address    text        NOT NULL,
    nonce      text        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    used_at    timestamptz,
    CONSTRAINT directory_verification_nonces_nonce UNIQUE (person_id, kind, address, nonce)
);
CREATE INDEX directory_verification_nonces_window ON directory_verification_nonces (tenant_id, kind, address, created_at);

-- Weather notifications a directory user asked for: a category, optionally
-- for one of the user's locations, on a set of channels.
CREATE TABLE directory_weather_notifications (
    id          bigserial PRIMARY KEY,
    tenant_id   text        NOT NULL,
    person_id   bigint      NOT NULL REFERENCES people (id) ON DELETE CASCADE,
    category    text        NOT NULL,
    location_id bigint REFERENCES person_locations (id) ON DELETE CASCADE,
    channels    text[]      NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT directory_weather_notifications_unique UNIQUE NULLS NOT DISTINCT (person_id, category, location_id)
);
CREATE INDEX directory_weather_notifications_tenant_category ON directory_weather_notifications (tenant_id, category);

-- +goose Down
DROP TABLE directory_weather_notifications, directory_verification_nonces, directory_verifications;
