-- +goose Up
-- The digest of the request that created an alert with a client key
-- (jobId or Idempotency-Key): a request with the same key and the same
-- digest is a retry and answers that alert; one with another digest reuses
-- the key for another alert and is refused. NULL for alerts without a
-- key, and for the keyed alerts stored before digests were kept, whose
-- requests cannot be compared.
ALTER TABLE alerts ADD COLUMN request_digest bytea;

-- +goose Down
ALTER TABLE alerts DROP COLUMN request_digest;
