-- +goose Up
-- Names are stored in Unicode normalization form C (NFC, internal/names),
-- so that two spellings of one text (é as one character, or e and a
-- combining accent) are one name: the names that must be unique (groups
-- among their siblings, distribution lists and ETN address-point lists in
-- the tenant, external ids in their directory) and the directory ids with
-- them, and the names of people (first, middle and last names and roles)
-- and of their locations. The names stored before are put in NFC. Where
-- that would give a name another already has (two spellings stored
-- side by side, or an NFC name beside a decomposed one), the first
-- stored keeps the NFC name and each other one gets it with its id
-- ("Café (17)"; an external id "E-1 (17)"; an address-point list, which
-- has no id, the time it was imported), so that none is lost and each
-- can still be told apart and reached. Names that hold characters the
-- rule refuses today (controls, bidirectional controls, invisible
-- characters) are left as they are: no other name can stand for them
-- without guessing; lookups find them by their NFC form, and a user's
-- name sent back unchanged is kept. normalize() needs a UTF-8 database,
-- as tocsin's are.
-- +goose StatementBegin
DO $$
BEGIN
    IF current_setting('server_encoding') = 'UTF8' THEN
        UPDATE groups g SET name = CASE
                WHEN g.id IN (
                    SELECT DISTINCT ON (x.tenant_id, x.parent_id, normalize(x.name, NFC)) x.id
                    FROM groups x WHERE x.name IS NOT NFC NORMALIZED
                    ORDER BY x.tenant_id, x.parent_id, normalize(x.name, NFC), x.id)
                AND NOT EXISTS (SELECT 1 FROM groups o WHERE o.tenant_id = g.tenant_id
                    AND o.parent_id IS NOT DISTINCT FROM g.parent_id AND o.name = normalize(g.name, NFC))
                THEN normalize(g.name, NFC)
                ELSE normalize(g.name, NFC) || ' (' || g.id || ')' END
        WHERE g.name IS NOT NFC NORMALIZED;

        UPDATE distribution_lists l SET name = CASE
                WHEN l.id IN (
                    SELECT DISTINCT ON (x.tenant_id, normalize(x.name, NFC)) x.id
                    FROM distribution_lists x WHERE x.name IS NOT NFC NORMALIZED
                    ORDER BY x.tenant_id, normalize(x.name, NFC), x.id)
                AND NOT EXISTS (SELECT 1 FROM distribution_lists o WHERE o.tenant_id = l.tenant_id AND o.name = normalize(l.name, NFC))
                THEN normalize(l.name, NFC)
                ELSE normalize(l.name, NFC) || ' (' || l.id || ')' END
        WHERE l.name IS NOT NFC NORMALIZED;

        -- A list's points carry its name: both take the new one.
        CREATE TEMPORARY TABLE etn_list_names ON COMMIT DROP AS
        SELECT l.tenant_id, l.list_name AS old_name, CASE
                WHEN row_number() OVER (PARTITION BY l.tenant_id, normalize(l.list_name, NFC) ORDER BY l.imported_at, l.list_name) = 1
                AND NOT EXISTS (SELECT 1 FROM etn_address_point_lists o WHERE o.tenant_id = l.tenant_id AND o.list_name = normalize(l.list_name, NFC))
                THEN normalize(l.list_name, NFC)
                ELSE normalize(l.list_name, NFC) || ' (' || to_char(l.imported_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') || ')' END AS new_name
        FROM etn_address_point_lists l WHERE l.list_name IS NOT NFC NORMALIZED;
        UPDATE etn_address_points p SET list_name = n.new_name
        FROM etn_list_names n WHERE p.tenant_id = n.tenant_id AND p.list_name = n.old_name;
        UPDATE etn_address_point_lists l SET list_name = n.new_name
        FROM etn_list_names n WHERE l.tenant_id = n.tenant_id AND l.list_name = n.old_name;

        UPDATE people p SET directory_id = normalize(p.directory_id, NFC), external_id = CASE
                WHEN p.external_id IS NULL OR p.id IN (
                    SELECT DISTINCT ON (x.tenant_id, coalesce(normalize(x.directory_id, NFC), ''), normalize(x.external_id, NFC)) x.id
                    FROM people x
                    WHERE x.external_id IS NOT NULL AND (x.directory_id IS NOT NFC NORMALIZED OR x.external_id IS NOT NFC NORMALIZED)
                    ORDER BY x.tenant_id, coalesce(normalize(x.directory_id, NFC), ''), normalize(x.external_id, NFC), x.id)
                AND NOT EXISTS (SELECT 1 FROM people o WHERE o.tenant_id = p.tenant_id
                    AND coalesce(o.directory_id, '') = coalesce(normalize(p.directory_id, NFC), '') AND o.external_id = normalize(p.external_id, NFC))
                THEN normalize(p.external_id, NFC)
                ELSE normalize(p.external_id, NFC) || ' (' || p.id || ')' END
        WHERE p.directory_id IS NOT NFC NORMALIZED OR p.external_id IS NOT NFC NORMALIZED;

        UPDATE people p SET first_name = normalize(p.first_name, NFC), middle_name = normalize(p.middle_name, NFC),
            last_name = normalize(p.last_name, NFC),
            roles = ARRAY(SELECT d.r FROM (
                SELECT DISTINCT ON (normalize(u.r, NFC)) normalize(u.r, NFC) AS r, u.n
                FROM unnest(p.roles) WITH ORDINALITY AS u (r, n) ORDER BY normalize(u.r, NFC), u.n) d ORDER BY d.n)
        WHERE p.first_name IS NOT NFC NORMALIZED OR p.middle_name IS NOT NFC NORMALIZED OR p.last_name IS NOT NFC NORMALIZED
            OR EXISTS (SELECT 1 FROM unnest(p.roles) AS u (r) WHERE u.r IS NOT NFC NORMALIZED);

        UPDATE person_locations SET name = normalize(name, NFC) WHERE name IS NOT NFC NORMALIZED;
    END IF;
END
$$;
-- +goose StatementEnd

-- +goose Down
SELECT 1;
