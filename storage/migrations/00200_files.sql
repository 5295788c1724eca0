-- +goose Up
-- Files of a tenant (images and audio). The bytes live in the object store
-- under the tenant's prefix; these rows describe them.
CREATE TABLE files (
    id            bigserial PRIMARY KEY,
    tenant_id     text        NOT NULL,
    full_name     text        NOT NULL, -- folder/name, the FileName path parameter
    folder_name   text        NOT NULL DEFAULT '',
    file_name     text        NOT NULL,
    kind          text        NOT NULL CHECK (kind IN ('image', 'audio')),
    content_type  text        NOT NULL,
    size_bytes    bigint      NOT NULL,
    sha256        text        NOT NULL,
    description   text        NOT NULL DEFAULT '',
    object_prefix text        NOT NULL, -- every asset's key starts with it
    details       jsonb       NOT NULL DEFAULT '{}',
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT files_tenant_full_name UNIQUE (tenant_id, full_name)
);

-- The stored versions of a file: the original and the encoded ones.
CREATE TABLE file_assets (
    file_id      bigint      NOT NULL REFERENCES files (id) ON DELETE CASCADE,
    tenant_id    text        NOT NULL,
    kind         text        NOT NULL CHECK (kind IN ('original', 'resized', 'voice', 'eas')),
    object_key   text        NOT NULL,
    content_type text        NOT NULL,
    size_bytes   bigint      NOT NULL,
    sha256       text        NOT NULL,
    details      jsonb       NOT NULL DEFAULT '{}',
    PRIMARY KEY (file_id, kind)
);
CREATE INDEX file_assets_tenant ON file_assets (tenant_id, file_id);

-- +goose Down
DROP TABLE file_assets, files;
