-- +goose Up
-- Email addresses are stored in one spelling (internal/emailaddr): the
-- local part quoted exactly when it must be. Before, the directory dropped
-- the quotes of a local part that needs them, so "a b"@example.com was
-- stored as a b@example.com, which is no address, and "a@b"@example.com as
-- a@b@example.com, which reads as another: such an address could be
-- neither read nor removed by the spelling answered for it, nor sent to.
-- Those addresses get their quotes back, in the people's addresses and in
-- their verifications and nonces. No write stored a quoted spelling before,
-- so none collides. (The nonce counts, kept under a keyed hash of the
-- address, start again for them.)
-- +goose StatementBegin
DO $$
DECLARE
    -- An address whose local part is a dot-atom: atext (visible ASCII but
    -- the specials, or any non-ASCII character) in dot-separated runs.
    plain CONSTANT text := '^([A-Za-z0-9!#$%&''*+/=?^_`{|}~-]|[^\x01-\x7f])+(\.([A-Za-z0-9!#$%&''*+/=?^_`{|}~-]|[^\x01-\x7f])+)*@[^@]*$';
BEGIN
    UPDATE person_emails SET address = '"' || replace(replace(regexp_replace(address, '@[^@]*$', ''), '\', '\\'), '"', '\"') || '"'
            || substring(address from '@[^@]*$')
        WHERE address !~ plain AND address NOT LIKE '"%';
    UPDATE directory_verifications SET address = '"' || replace(replace(regexp_replace(address, '@[^@]*$', ''), '\', '\\'), '"', '\"') || '"'
            || substring(address from '@[^@]*$')
        WHERE kind = 'email' AND address !~ plain AND address NOT LIKE '"%';
    UPDATE directory_verification_nonces SET address = '"' || replace(replace(regexp_replace(address, '@[^@]*$', ''), '\', '\\'), '"', '\"') || '"'
            || substring(address from '@[^@]*$')
        WHERE kind = 'email' AND address !~ plain AND address NOT LIKE '"%';
END
$$;
-- +goose StatementEnd

-- +goose Down
SELECT 1;
