-- +goose Up
-- The nonce rate limit counts reservations per address of a tenant in this
-- table, which removing the address or its user does not empty: removing and
-- adding an address again must not reset its limit. Rows hold a keyed hash
-- (HMAC-SHA256 under a key derived from TOCSIN_SECRETS_KEY) of the address,
-- not the address, and are pruned once older than a day.
CREATE TABLE directory_nonce_window (
    tenant_id    text        NOT NULL,
    kind         text        NOT NULL CHECK (kind IN ('email', 'phone')),
    address_hash bytea       NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX directory_nonce_window_address ON directory_nonce_window (tenant_id, kind, address_hash, created_at);

-- +goose Down
DROP TABLE directory_nonce_window;
