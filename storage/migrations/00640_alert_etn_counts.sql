-- +goose Up
-- Every ETN alert with areas keeps how many numbers it calls and where
-- their calls stand, so that its results page, its results and its count
-- on etn read one row rather than counting every number it calls (an
-- area alert can call hundreds of thousands). A trigger keeps the row with
-- alert_etn_targets, whatever writes them: the first batch's INSERT of the
-- numbers, the UPDATE that records a page of calls, a call's status
-- callback. It fires once per statement and adds what the statement
-- changed per alert; a statement that changes no status (a call's attempts
-- alone) touches no row. The migration counts the numbers stored before it
-- once.
CREATE TABLE alert_etn_counts (
    tenant_id text   NOT NULL,
    alert_id  bigint PRIMARY KEY,
    total     bigint NOT NULL DEFAULT 0,
    pending   bigint NOT NULL DEFAULT 0,
    retrying  bigint NOT NULL DEFAULT 0,
    sent      bigint NOT NULL DEFAULT 0,
    delivered bigint NOT NULL DEFAULT 0,
    failed    bigint NOT NULL DEFAULT 0
);

-- count_etn_targets adds to the counts of each alert the numbers a
-- statement inserted (+1 in their status), moved from one status to
-- another (-1 in the old, +1 in the new) or deleted (-1). Only an INSERT
-- makes an alert's row; the changes of an alert without one (its counts
-- deleted with it) are left out. Rows are written in alert order, so two
-- statements never wait for each other's rows in turn.
-- +goose StatementBegin
CREATE FUNCTION count_etn_targets() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format($sql$
        INSERT INTO alert_etn_counts AS c (tenant_id, alert_id, total, pending, retrying, sent, delivered, failed)
        SELECT tenant_id, alert_id, sum(n),
            coalesce(sum(n) FILTER (WHERE status = 'Pending'), 0), coalesce(sum(n) FILTER (WHERE status = 'Retrying'), 0),
            coalesce(sum(n) FILTER (WHERE status = 'Sent'), 0), coalesce(sum(n) FILTER (WHERE status = 'Delivered'), 0),
            coalesce(sum(n) FILTER (WHERE status = 'Failed'), 0)
        FROM (%s) changed (tenant_id, alert_id, status, n)
        WHERE %L = 'INSERT' OR EXISTS (SELECT FROM alert_etn_counts e WHERE e.alert_id = changed.alert_id)
        GROUP BY tenant_id, alert_id ORDER BY alert_id
        ON CONFLICT (alert_id) DO UPDATE SET total = c.total + excluded.total,
            pending = c.pending + excluded.pending, retrying = c.retrying + excluded.retrying, sent = c.sent + excluded.sent,
            delivered = c.delivered + excluded.delivered, failed = c.failed + excluded.failed
        $sql$,
        CASE TG_OP
            WHEN 'INSERT' THEN 'SELECT tenant_id, alert_id, status, 1 FROM added'
            WHEN 'DELETE' THEN 'SELECT tenant_id, alert_id, status, -1 FROM removed'
            ELSE 'SELECT a.tenant_id, a.alert_id, s.status, s.n FROM added a
                JOIN removed r ON r.alert_id = a.alert_id AND r.seq = a.seq
                CROSS JOIN LATERAL (VALUES (a.status, 1), (r.status, -1)) s (status, n)
                WHERE a.status <> r.status'
        END, TG_OP);
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER alert_etn_targets_added AFTER INSERT ON alert_etn_targets
    REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION count_etn_targets();
CREATE TRIGGER alert_etn_targets_changed AFTER UPDATE ON alert_etn_targets
    REFERENCING OLD TABLE AS removed NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION count_etn_targets();
CREATE TRIGGER alert_etn_targets_removed AFTER DELETE ON alert_etn_targets
    REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION count_etn_targets();

INSERT INTO alert_etn_counts (tenant_id, alert_id, total, pending, retrying, sent, delivered, failed)
SELECT tenant_id, alert_id, count(*), count(*) FILTER (WHERE status = 'Pending'), count(*) FILTER (WHERE status = 'Retrying'),
    count(*) FILTER (WHERE status = 'Sent'), count(*) FILTER (WHERE status = 'Delivered'), count(*) FILTER (WHERE status = 'Failed')
FROM alert_etn_targets GROUP BY tenant_id, alert_id;

-- +goose Down
DROP TRIGGER alert_etn_targets_removed ON alert_etn_targets;
DROP TRIGGER alert_etn_targets_changed ON alert_etn_targets;
DROP TRIGGER alert_etn_targets_added ON alert_etn_targets;
DROP FUNCTION count_etn_targets();
DROP TABLE alert_etn_counts;
