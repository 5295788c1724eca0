-- +goose Up
-- Custom header values of hook subscriptions often carry the receiver's
-- credentials: they are sealed like the signing secret (AES-256-GCM under
-- TOCSIN_SECRETS_KEY, bound to tenant and subscription) in
-- headers_encrypted, NULL when the subscription has none. headers keeps
-- the plain headers of rows written before, until the worker seals them at
-- its start (hooks.SealStoredHeaders) and empties it; nothing writes plain
-- headers any more.
ALTER TABLE hook_subscriptions ADD COLUMN headers_encrypted bytea;

-- subscription.test is sent only by getSubscriptionTest, to any
-- subscription, and cannot be subscribed to any more: drop it from the
-- lists that name other types too (a list of it alone is left, and
-- receives nothing but tests, as before).
UPDATE hook_subscriptions SET event_types = array_remove(event_types, 'subscription.test')
WHERE 'subscription.test' = ANY (event_types) AND cardinality(event_types) > 1;

-- +goose Down
-- Headers sealed since the Up are lost: SQL cannot open them.
ALTER TABLE hook_subscriptions DROP COLUMN headers_encrypted;
