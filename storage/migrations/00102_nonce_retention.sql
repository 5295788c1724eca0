-- +goose Up
-- Reserved nonces and the nonce rate limit's counts of every tenant are
-- pruned a day after they were created, in batches, by the NonceRetention
-- workflow (directory.PruneNonces): each batch finds its rows by creation
-- time.
CREATE INDEX directory_verification_nonces_created ON directory_verification_nonces (created_at);
CREATE INDEX directory_nonce_window_created ON directory_nonce_window (created_at);

-- +goose Down
DROP INDEX directory_verification_nonces_created, directory_nonce_window_created;
