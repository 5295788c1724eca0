-- +goose Up
-- getSubscriptionTest sends a real request to the subscription's target,
-- so a subscription's tests are limited (hooksubs.ClaimTest): a few at
-- once, then one every few seconds. tests_paid_until is when the tests
-- sent so far are paid for at that pace (NULL: none sent). Adding a
-- column without a default rewrites nothing.
ALTER TABLE hook_subscriptions ADD COLUMN tests_paid_until timestamptz;

-- +goose Down
ALTER TABLE hook_subscriptions DROP COLUMN tests_paid_until;
