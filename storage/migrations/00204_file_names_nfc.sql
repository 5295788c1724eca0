-- +goose Up
-- File names are stored in Unicode normalization form C (NFC), so that a
-- name written with composed or decomposed characters names one file. The
-- names stored before are put in NFC. When the tenant already has a file of
-- the NFC name, or two stored forms have the same NFC name (the first stored
-- takes it), the other is put in NFC with its id before its extension
-- ("odd/Ärger (17).png"), so that every file stays reachable by its name.
-- normalize() needs a UTF-8 database, as tocsin's are.
-- +goose StatementBegin
DO $$
BEGIN
    IF current_setting('server_encoding') = 'UTF8' THEN
        UPDATE files f SET full_name = normalize(f.full_name, NFC), folder_name = normalize(f.folder_name, NFC),
            file_name = normalize(f.file_name, NFC)
        WHERE f.id IN (
            SELECT DISTINCT ON (x.tenant_id, normalize(x.full_name, NFC)) x.id
            FROM files x
            WHERE x.full_name IS NOT NFC NORMALIZED OR x.folder_name IS NOT NFC NORMALIZED OR x.file_name IS NOT NFC NORMALIZED
            ORDER BY x.tenant_id, normalize(x.full_name, NFC), x.id)
        AND NOT EXISTS (SELECT 1 FROM files g WHERE g.tenant_id = f.tenant_id AND g.id <> f.id
            AND g.full_name = normalize(f.full_name, NFC));
        UPDATE files f SET full_name = regexp_replace(normalize(f.full_name, NFC), '(\.[^./]*)?$', ' (' || f.id || ')\1'),
            folder_name = normalize(f.folder_name, NFC),
            file_name = regexp_replace(normalize(f.file_name, NFC), '(\.[^./]*)?$', ' (' || f.id || ')\1')
        WHERE f.full_name IS NOT NFC NORMALIZED OR f.folder_name IS NOT NFC NORMALIZED OR f.file_name IS NOT NFC NORMALIZED;
    END IF;
END
$$;
-- +goose StatementEnd

-- +goose Down
SELECT 1;
