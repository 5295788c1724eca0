-- +goose Up
-- Every group keeps how many direct subgroups it has (child_count), as it
-- keeps its members (00302_member_counts), so that a node of the group
-- tree reads its count rather than counting its children for each page.
-- Triggers on groups keep it, once per statement, with count_members, which
-- now takes the column it keeps as a third argument (member_count without
-- one). A group never changes parent (its path and its subtree's paths
-- would not follow), so the inserts and deletes of groups, those that
-- cascade from a deleted parent included, are all that change a count. The
-- migration counts the existing subgroups once.
ALTER TABLE groups ADD COLUMN child_count bigint NOT NULL DEFAULT 0;
UPDATE groups g SET child_count = c.n
FROM (SELECT parent_id, count(*) AS n FROM groups WHERE parent_id IS NOT NULL GROUP BY parent_id) c WHERE g.id = c.parent_id;

-- count_members keeps the count column TG_ARGV[2] (member_count when not
-- given) of the table TG_ARGV[0] whose rows the column TG_ARGV[1] of the
-- changed rows names: it adds the rows a statement inserted (the
-- transition table added) or subtracts those it deleted (removed), per row
-- named.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION count_members() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format('UPDATE %1$I t SET %2$I = t.%2$I %3$s c.n
        FROM (SELECT %4$I AS id, count(*) AS n FROM %5$I GROUP BY 1) c WHERE t.id = c.id',
        TG_ARGV[0], coalesce(TG_ARGV[2], 'member_count'), CASE TG_OP WHEN 'INSERT' THEN '+' ELSE '-' END, TG_ARGV[1],
        CASE TG_OP WHEN 'INSERT' THEN 'added' ELSE 'removed' END);
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER groups_added AFTER INSERT ON groups
    REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION count_members('groups', 'parent_id', 'child_count');
CREATE TRIGGER groups_removed AFTER DELETE ON groups
    REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION count_members('groups', 'parent_id', 'child_count');

-- +goose Down
DROP TRIGGER groups_removed ON groups;
DROP TRIGGER groups_added ON groups;
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION count_members() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format('UPDATE %I t SET member_count = t.member_count %s c.n
        FROM (SELECT %I AS id, count(*) AS n FROM %I GROUP BY 1) c WHERE t.id = c.id',
        TG_ARGV[0], CASE TG_OP WHEN 'INSERT' THEN '+' ELSE '-' END, TG_ARGV[1],
        CASE TG_OP WHEN 'INSERT' THEN 'added' ELSE 'removed' END);
    RETURN NULL;
END
$$;
-- +goose StatementEnd
ALTER TABLE groups DROP COLUMN child_count;
