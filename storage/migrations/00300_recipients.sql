-- +goose Up
-- Contacts (the people table) need an index for every common filter of
-- findContacts, so that a tenant with a million contacts never scans them all.
-- Name filters are prefix matches on lower-case names; text_pattern_ops makes
-- LIKE 'abc%' an index range scan whatever the database collation.
CREATE INDEX people_tenant_first_prefix ON people (tenant_id, lower(first_name) text_pattern_ops);
CREATE INDEX people_tenant_last_prefix ON people (tenant_id, lower(last_name) text_pattern_ops);
-- External ids are unique per directory (people_tenant_directory_external);
-- contacts are found and matched by external id whatever their directory.
CREATE INDEX people_tenant_external ON people (tenant_id, external_id) WHERE external_id IS NOT NULL;
-- Custom fields are matched by containment (custom_fields @> '{"building":"A"}').
-- The GIN indexes leave out people without custom fields or roles, so that
-- bulk inserts of such people do not pay for them.
CREATE INDEX people_custom_fields ON people USING gin (custom_fields jsonb_path_ops) WHERE custom_fields <> '{}';

-- Roles a contact holds (for example "Floor warden") and the team-chat
-- accounts that reach it ([{"platform":"slack","userId":"U123"}]).
ALTER TABLE people ADD COLUMN roles text[] NOT NULL DEFAULT '{}';
ALTER TABLE people ADD COLUMN chat_users jsonb NOT NULL DEFAULT '[]';
CREATE INDEX people_roles ON people USING gin (roles) WHERE roles <> '{}';

-- The group tree is read level by level.
CREATE INDEX groups_tenant_depth ON groups (tenant_id, depth, path);

-- Distribution lists are listed by name prefix and their members read in
-- contact order; the primary key (list_id, person_id) serves membership tests.
CREATE INDEX distribution_lists_tenant_name_prefix ON distribution_lists (tenant_id, lower(name) text_pattern_ops);

-- Shortened URLs. code is globally unique because /s/{code} carries no tenant.
-- target_hash (sha256 of the target) lets one tenant reuse the code of a target
-- it already shortened with the same expiry, without indexing long URLs.
CREATE TABLE short_urls (
    id              bigserial PRIMARY KEY,
    tenant_id       text        NOT NULL,
    code            text        NOT NULL,
    target_url      text        NOT NULL,
    target_hash     bytea       NOT NULL,
    expires_at      timestamptz,
    clicks          bigint      NOT NULL DEFAULT 0,
    last_clicked_at timestamptz,
    created_at      timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT short_urls_code UNIQUE (code)
);
CREATE UNIQUE INDEX short_urls_reuse ON short_urls (tenant_id, target_hash, expires_at) NULLS NOT DISTINCT;

-- +goose Down
DROP TABLE short_urls;
DROP INDEX distribution_lists_tenant_name_prefix;
DROP INDEX groups_tenant_depth;
DROP INDEX people_roles;
ALTER TABLE people DROP COLUMN chat_users;
ALTER TABLE people DROP COLUMN roles;
DROP INDEX people_custom_fields;
DROP INDEX people_tenant_external;
DROP INDEX people_tenant_last_prefix;
DROP INDEX people_tenant_first_prefix;
