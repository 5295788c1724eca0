-- +goose Up
-- A page of contacts reads each one's groups of the lowest ids (with when
-- the membership began) and lists of the highest, and counts both, from
-- these indexes alone: the memberships not shown are neither read nor
-- joined. They lead with person_id, as the indexes they replace did, for
-- the deletes that cascade from people.
CREATE INDEX group_memberships_person_group ON group_memberships (person_id, tenant_id, group_id) INCLUDE (created_at);
DROP INDEX group_memberships_person;
CREATE INDEX distribution_list_members_person_list ON distribution_list_members (person_id, tenant_id, list_id);
DROP INDEX distribution_list_members_person;

-- +goose Down
CREATE INDEX distribution_list_members_person ON distribution_list_members (person_id);
DROP INDEX distribution_list_members_person_list;
CREATE INDEX group_memberships_person ON group_memberships (person_id);
DROP INDEX group_memberships_person_group;
