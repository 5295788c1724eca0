-- +goose Up
-- Every distribution list and group keeps how many members it has, so that
-- a page of lists or groups reads their counts rather than counting every
-- member of each (a list or group of all of a tenant's million contacts).
-- Triggers keep the counts with the memberships, whatever writes them: an
-- import's one INSERT of a list's members, a directory user joining or
-- leaving a group, and the deletes that cascade from people, lists and
-- groups. Each fires once per statement and adds or subtracts the rows it
-- wrote per list or group (a count of a deleted list or group has no row
-- left to change).
ALTER TABLE distribution_lists ADD COLUMN member_count bigint NOT NULL DEFAULT 0;
ALTER TABLE groups ADD COLUMN member_count bigint NOT NULL DEFAULT 0;
UPDATE distribution_lists l SET member_count = c.n
FROM (SELECT list_id, count(*) AS n FROM distribution_list_members GROUP BY list_id) c WHERE l.id = c.list_id;
UPDATE groups g SET member_count = c.n
FROM (SELECT group_id, count(*) AS n FROM group_memberships GROUP BY group_id) c WHERE g.id = c.group_id;

-- count_members keeps the count of the table TG_ARGV[0] whose rows the
-- membership column TG_ARGV[1] names: it adds the rows a statement
-- inserted (the transition table added) or subtracts those it deleted
-- (removed), per row named.
-- +goose StatementBegin
CREATE FUNCTION count_members() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format('UPDATE %I t SET member_count = t.member_count %s c.n
        FROM (SELECT %I AS id, count(*) AS n FROM %I GROUP BY 1) c WHERE t.id = c.id',
        TG_ARGV[0], CASE TG_OP WHEN 'INSERT' THEN '+' ELSE '-' END, TG_ARGV[1],
        CASE TG_OP WHEN 'INSERT' THEN 'added' ELSE 'removed' END);
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER distribution_list_members_added AFTER INSERT ON distribution_list_members
    REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION count_members('distribution_lists', 'list_id');
CREATE TRIGGER distribution_list_members_removed AFTER DELETE ON distribution_list_members
    REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION count_members('distribution_lists', 'list_id');
CREATE TRIGGER group_memberships_added AFTER INSERT ON group_memberships
    REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION count_members('groups', 'group_id');
CREATE TRIGGER group_memberships_removed AFTER DELETE ON group_memberships
    REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION count_members('groups', 'group_id');

-- +goose Down
DROP TRIGGER group_memberships_removed ON group_memberships;
DROP TRIGGER group_memberships_added ON group_memberships;
DROP TRIGGER distribution_list_members_removed ON distribution_list_members;
DROP TRIGGER distribution_list_members_added ON distribution_list_members;
DROP FUNCTION count_members();
ALTER TABLE groups DROP COLUMN member_count;
ALTER TABLE distribution_lists DROP COLUMN member_count;
