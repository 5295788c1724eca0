-- +goose Up
-- How often a recipient's response link may change answers it already gave
-- (results.AnswerChanges): the time at which the link has its whole
-- allowance of changes again, NULL when it has it now. Kept on the
-- recipient's row, which a response locks anyway, so the limit holds
-- across API processes and leaves with the alert.
ALTER TABLE alert_recipients ADD COLUMN answer_changes_full_at timestamptz;

-- +goose Down
ALTER TABLE alert_recipients DROP COLUMN answer_changes_full_at;
