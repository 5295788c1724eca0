-- +goose Up
-- An alert's sender name is stored in NFC (internal/names), as the from
-- filter of the alert lists looks for it: the sender names of the alerts
-- stored before are put in NFC, so that a name sent decomposed is found
-- too. Sender names need not be unique, so none clash. normalize() needs a
-- UTF-8 database, as tocsin's are.
-- +goose StatementBegin
DO $$
BEGIN
    IF current_setting('server_encoding') = 'UTF8' THEN
        UPDATE alerts SET sender_name = normalize(sender_name, NFC) WHERE sender_name IS NOT NFC NORMALIZED;
    END IF;
END
$$;
-- +goose StatementEnd

-- +goose Down
SELECT 1;
