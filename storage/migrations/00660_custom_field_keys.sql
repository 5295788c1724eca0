-- +goose Up
-- The custom-field keys each tenant's contacts hold, so that a contacts
-- import can hold the tenant to contactcsv.MaxCustomColumns different keys
-- (every one of which the export writes as a column) without reading every
-- contact: the import adds the keys it writes. It may list keys no contact
-- holds any more (their contacts deleted); an import that would pass the
-- limit counts them again from the contacts first (storage/contacts).
CREATE TABLE custom_field_keys (
    tenant_id text NOT NULL,
    key       text NOT NULL,
    PRIMARY KEY (tenant_id, key)
);
INSERT INTO custom_field_keys (tenant_id, key)
SELECT DISTINCT p.tenant_id, k.key
FROM people p CROSS JOIN LATERAL jsonb_object_keys(p.custom_fields) AS k(key)
WHERE p.custom_fields <> '{}';

-- +goose Down
DROP TABLE custom_field_keys;
