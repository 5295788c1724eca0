-- +goose Up
-- One row per address-point list of a tenant, written in the transaction
-- that imports or deletes its points, so that listing the lists reads a
-- row per list, not every point (a list holds up to 200,000).
-- A list exists while it has points, and then it has this row.
CREATE TABLE etn_address_point_lists (
    tenant_id   text        NOT NULL,
    list_name   text        NOT NULL,
    points      int         NOT NULL,
    imported_at timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, list_name)
);
-- Every sort of the listing reads a page from an index.
CREATE INDEX etn_address_point_lists_points ON etn_address_point_lists (tenant_id, points, list_name);
CREATE INDEX etn_address_point_lists_imported ON etn_address_point_lists (tenant_id, imported_at, list_name);
INSERT INTO etn_address_point_lists (tenant_id, list_name, points, imported_at)
SELECT tenant_id, list_name, count(*), max(created_at) FROM etn_address_points GROUP BY tenant_id, list_name;

-- +goose Down
DROP TABLE etn_address_point_lists;
