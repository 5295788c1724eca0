-- +goose Up
-- People of a tenant: the contacts alerts reach. Directory users are people
-- with a directory_id; plain contacts have none. One table, so the two never drift.
CREATE TABLE people (
    id            bigserial PRIMARY KEY,
    tenant_id     text        NOT NULL,
    directory_id  text,
    external_id   text,
    first_name    text        NOT NULL DEFAULT '',
    middle_name   text        NOT NULL DEFAULT '',
    last_name     text        NOT NULL DEFAULT '',
    language      text        NOT NULL DEFAULT 'en',
    time_zone     text        NOT NULL DEFAULT 'UTC',
    custom_fields jsonb       NOT NULL DEFAULT '{}',
    self_service  jsonb       NOT NULL DEFAULT '{}',
    mobile_apps   jsonb       NOT NULL DEFAULT '[]',
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX people_tenant_id ON people (tenant_id, id);
CREATE INDEX people_tenant_last_first ON people (tenant_id, lower(last_name), lower(first_name), id);
CREATE UNIQUE INDEX people_tenant_directory_external ON people (tenant_id, coalesce(directory_id, ''), external_id)
    WHERE external_id IS NOT NULL;
CREATE INDEX people_tenant_directory ON people (tenant_id, directory_id, id) WHERE directory_id IS NOT NULL;

CREATE TABLE person_emails (
    id                  bigserial PRIMARY KEY,
    tenant_id           text        NOT NULL,
    person_id           bigint      NOT NULL REFERENCES people (id) ON DELETE CASCADE,
    address             text        NOT NULL, -- normalised: lower case
    label               text        NOT NULL DEFAULT 'work',
    verification_status text        NOT NULL DEFAULT 'Unverified',
    verified_at         timestamptz,
    created_at          timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT person_emails_person_address UNIQUE (person_id, address)
);
CREATE INDEX person_emails_tenant_address ON person_emails (tenant_id, address);

CREATE TABLE person_phones (
    id                  bigserial PRIMARY KEY,
    tenant_id           text        NOT NULL,
    person_id           bigint      NOT NULL REFERENCES people (id) ON DELETE CASCADE,
    number              text        NOT NULL, -- E.164
    phone_type          text        NOT NULL DEFAULT 'Mobile',
    can_text            boolean     NOT NULL DEFAULT true,
    can_call            boolean     NOT NULL DEFAULT true,
    verification_status text        NOT NULL DEFAULT 'Unverified',
    verified_at         timestamptz,
    created_at          timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT person_phones_person_number UNIQUE (person_id, number)
);
CREATE INDEX person_phones_tenant_number ON person_phones (tenant_id, number);

-- Devices that receive push and app notifications.
CREATE TABLE person_devices (
    id         bigserial PRIMARY KEY,
    tenant_id  text        NOT NULL,
    person_id  bigint      NOT NULL REFERENCES people (id) ON DELETE CASCADE,
    app        text        NOT NULL DEFAULT 'push', -- push | myalerts
    platform   text        NOT NULL DEFAULT 'android',
    token      text        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT person_devices_token UNIQUE (tenant_id, app, token)
);
CREATE INDEX person_devices_person ON person_devices (person_id);

-- Places a person wants notifications for; geo-targeted alerts match these.
CREATE TABLE person_locations (
    id         bigserial PRIMARY KEY,
    tenant_id  text             NOT NULL,
    person_id  bigint           NOT NULL REFERENCES people (id) ON DELETE CASCADE,
    name       text             NOT NULL,
    address    jsonb            NOT NULL DEFAULT '{}',
    latitude   double precision NOT NULL CHECK (latitude BETWEEN -90 AND 90),
    longitude  double precision NOT NULL CHECK (longitude BETWEEN -180 AND 180),
    created_at timestamptz      NOT NULL DEFAULT now()
);
CREATE INDEX person_locations_person ON person_locations (person_id);
CREATE INDEX person_locations_tenant_lat_lng ON person_locations (tenant_id, latitude, longitude);

-- Groups form a tree per tenant. path is the chain of ancestor ids including
-- the group itself ("/1/5/9/"), so a subtree is one indexed prefix match.
CREATE TABLE groups (
    id          bigserial PRIMARY KEY,
    tenant_id   text        NOT NULL,
    parent_id   bigint REFERENCES groups (id) ON DELETE CASCADE,
    name        text        NOT NULL,
    description text        NOT NULL DEFAULT '',
    is_public   boolean     NOT NULL DEFAULT false,
    path        text        NOT NULL DEFAULT '',
    depth       int         NOT NULL DEFAULT 0,
    created_at  timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT groups_tenant_parent_name UNIQUE NULLS NOT DISTINCT (tenant_id, parent_id, name)
);
CREATE INDEX groups_tenant_path ON groups (tenant_id, path text_pattern_ops);
CREATE INDEX groups_tenant_parent ON groups (tenant_id, parent_id);

CREATE TABLE group_memberships (
    tenant_id  text        NOT NULL,
    group_id   bigint      NOT NULL REFERENCES groups (id) ON DELETE CASCADE,
    person_id  bigint      NOT NULL REFERENCES people (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (group_id, person_id)
);
CREATE INDEX group_memberships_person ON group_memberships (person_id);

CREATE TABLE distribution_lists (
    id          bigserial PRIMARY KEY,
    tenant_id   text        NOT NULL,
    name        text        NOT NULL,
    description text        NOT NULL DEFAULT '',
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT distribution_lists_tenant_name UNIQUE (tenant_id, name)
);

CREATE TABLE distribution_list_members (
    tenant_id  text   NOT NULL,
    list_id    bigint NOT NULL REFERENCES distribution_lists (id) ON DELETE CASCADE,
    person_id  bigint NOT NULL REFERENCES people (id) ON DELETE CASCADE,
    PRIMARY KEY (list_id, person_id)
);
CREATE INDEX distribution_list_members_person ON distribution_list_members (person_id);

-- The outbox of events for hook subscriptions (see storage.EmitEvent).
CREATE TABLE events (
    id            text PRIMARY KEY,
    tenant_id     text        NOT NULL,
    type          text        NOT NULL,
    payload       jsonb       NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    dispatched_at timestamptz
);
CREATE INDEX events_undispatched ON events (created_at) WHERE dispatched_at IS NULL;
CREATE INDEX events_tenant_created ON events (tenant_id, created_at);

-- Runs of the smoke workflow that proves API -> Temporal -> worker -> PostgreSQL.
CREATE TABLE smoke_runs (
    id          bigserial PRIMARY KEY,
    tenant_id   text        NOT NULL,
    workflow_id text        NOT NULL UNIQUE,
    note        text        NOT NULL DEFAULT '',
    created_at  timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE smoke_runs, events, distribution_list_members, distribution_lists,
    group_memberships, groups, person_locations, person_devices, person_phones,
    person_emails, people;
