-- +goose Up
-- An ad-hoc entry that brings an address no earlier recipient of the alert
-- is sent to is a recipient of its own, and keeps every address it gives:
-- an address an earlier recipient is sent to already (on one channel)
-- names that recipient here, and the entry's delivery on that channel is
-- Skipped ("reached as recipient N") rather than a second message to it.
-- NULL: the address is the recipient's own (every row written before).
ALTER TABLE alert_recipients
    ADD COLUMN email_reached_as bigint,
    ADD COLUMN phone_reached_as bigint,
    ADD COLUMN voice_phone_reached_as bigint;

-- +goose Down
ALTER TABLE alert_recipients
    DROP COLUMN voice_phone_reached_as,
    DROP COLUMN phone_reached_as,
    DROP COLUMN email_reached_as;
