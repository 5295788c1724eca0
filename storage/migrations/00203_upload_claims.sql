-- +goose Up
-- Claims of uploads in progress on their object prefix (files.Store.Claim).
-- An upload writes its claim before it stores its first object and
-- releases it in the transaction that records the file, or once it has
-- removed its objects itself. A claim still here after expires_at (the
-- upload's maximum life, TOCSIN_FILE_UPLOAD_MAX_LIFE) belongs to an upload
-- whose process died: the UploadOrphanSweep workflow removes the objects
-- under its prefix, then the claim.
CREATE TABLE upload_claims (
    tenant_id     text        NOT NULL,
    object_prefix text        NOT NULL, -- tenants/<tenant>/files/<upload>/
    workflow_id   text        NOT NULL, -- the ProcessFile run that may write under it
    created_at    timestamptz NOT NULL DEFAULT now(),
    expires_at    timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, object_prefix)
);
CREATE INDEX upload_claims_expiry ON upload_claims (expires_at);

-- +goose Down
DROP TABLE upload_claims;
