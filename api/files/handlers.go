package files

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/minio/minio-go/v7"

	"github.com/tocsin/tocsin/api/model"
	"github.com/tocsin/tocsin/api/rest"
	"github.com/tocsin/tocsin/hooks/events"
	"github.com/tocsin/tocsin/media"
	"github.com/tocsin/tocsin/storage"
)

// URLLifetime is how long presigned download URLs work.
const URLLifetime = 15 * time.Minute

func jsonOf(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func details(raw []byte) model.FileDetails {
	var d media.Details
	_ = json.Unmarshal(raw, &d)
	return model.FileDetails{
		Format: d.Format, Width: d.Width, Height: d.Height, DurationMs: d.DurationMs,
		SampleRate: d.SampleRate, Channels: d.Channels, BitsPerSample: d.BitsPerSample,
	}
}

type fileRow struct {
	ID          int64     `db:"id"`
	FullName    string    `db:"full_name"`
	FolderName  string    `db:"folder_name"`
	FileName    string    `db:"file_name"`
	Kind        string    `db:"kind"`
	ContentType string    `db:"content_type"`
	SizeBytes   int64     `db:"size_bytes"`
	SHA256      string    `db:"sha256"`
	Description string    `db:"description"`
	Details     []byte    `db:"details"`
	CreatedAt   time.Time `db:"created_at"`
	UpdatedAt   time.Time `db:"updated_at"`
}

const fileColumns = `id, full_name, folder_name, file_name, kind, content_type, size_bytes, sha256, description, details, created_at, updated_at`

type assetRow struct {
	FileID      int64  `db:"file_id"`
	Kind        string `db:"kind"`
	Key         string `db:"object_key"`
	ContentType string `db:"content_type"`
	SizeBytes   int64  `db:"size_bytes"`
	SHA256      string `db:"sha256"`
	Details     []byte `db:"details"`
}

// fileWithKeys is a FileModel and the object key of each asset, in order.
type fileWithKeys struct {
	model.FileModel
	keys []string
}

func (h *handlers) models(ctx context.Context, tenant string, rows []fileRow) ([]fileWithKeys, error) {
	if len(rows) == 0 {
		return nil, nil
	}
	ids := make([]int64, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	query, args, err := sqlx.In(`SELECT file_id, kind, object_key, content_type, size_bytes, sha256, details FROM file_assets
		WHERE tenant_id = ? AND file_id IN (?)
		ORDER BY file_id, array_position(ARRAY['original','resized','voice','eas'], kind)`, tenant, ids)
	if err != nil {
		return nil, err
	}
	var assets []assetRow
	if err := h.d.DB.SelectContext(ctx, &assets, h.d.DB.Rebind(query), args...); err != nil {
		return nil, fmt.Errorf("load file assets: %w", err)
	}
	byFile := map[int64][]assetRow{}
	for _, a := range assets {
		byFile[a.FileID] = append(byFile[a.FileID], a)
	}
	out := make([]fileWithKeys, len(rows))
	for i, r := range rows {
		m := fileWithKeys{FileModel: model.FileModel{
			FileName: r.FullName, Name: r.FileName, FolderName: r.FolderName, Kind: model.FileKind(r.Kind),
			ContentType: r.ContentType, SizeBytes: r.SizeBytes, Sha256: r.SHA256, Description: r.Description,
			Details: details(r.Details), Assets: []model.AssetInformation{}, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
		}}
		for _, a := range byFile[r.ID] {
			m.Assets = append(m.Assets, model.AssetInformation{
				Kind: model.AssetKind(a.Kind), ContentType: a.ContentType, SizeBytes: a.SizeBytes, Sha256: a.SHA256, Details: details(a.Details),
			})
			m.keys = append(m.keys, a.Key)
		}
		out[i] = m
	}
	return out, nil
}

var errNoFile = errors.New("no such file")

// load returns one file by full name, with its object keys.
func (h *handlers) load(ctx context.Context, tenant, full string) (fileWithKeys, error) {
	var r fileRow
	err := h.d.DB.GetContext(ctx, &r, `SELECT `+fileColumns+` FROM files WHERE tenant_id = $1 AND full_name = $2`, tenant, full)
	if errors.Is(err, sql.ErrNoRows) {
		return fileWithKeys{}, errNoFile
	}
	if err != nil {
		return fileWithKeys{}, fmt.Errorf("load file: %w", err)
	}
	ms, err := h.models(ctx, tenant, []fileRow{r})
	if err != nil {
		return fileWithKeys{}, err
	}
	return ms[0], nil
}

// sign adds presigned URLs to the assets of m: to all of them, or to audio
// files' only when all is false.
func (h *handlers) sign(ctx context.Context, m *fileWithKeys, all bool) error {
	if !all && m.Kind != "audio" {
		return nil
	}
	expires := time.Now().Add(URLLifetime).UTC().Truncate(time.Second)
	for i := range m.Assets {
		u, err := h.d.Objects.Client.PresignedGetObject(ctx, h.d.Objects.Bucket, m.keys[i], URLLifetime, url.Values{})
		if err != nil {
			return rest.Unavailable("the object store", err)
		}
		m.Assets[i].URL = u.String()
		m.Assets[i].URLExpiresAt = &expires
	}
	return nil
}

func pathName(raw string) (string, error) {
	full, err := url.PathUnescape(raw)
	if err != nil {
		return "", rest.Invalid("path", "FileName", "bad URL encoding", raw)
	}
	if err := checkPath(full); err != nil {
		return "", rest.Invalid("path", "FileName", err.Error(), full)
	}
	return full, nil
}

func notFound(err error) error {
	if errors.Is(err, errNoFile) {
		return rest.NotFound("file")
	}
	return err
}

func (h *handlers) get(ctx context.Context, in *FilePath) (*fileOutput, error) {
	full, err := pathName(in.FileName)
	if err != nil {
		return nil, err
	}
	m, err := h.load(ctx, rest.Tenant(ctx), full)
	if err != nil {
		return nil, notFound(err)
	}
	if err := h.sign(ctx, &m, true); err != nil {
		return nil, err
	}
	return &fileOutput{Body: m.FileModel}, nil
}

type listInput struct {
	TenantID         int64          `path:"tenantId" doc:"The tenant; must be the token's." example:"1001"`
	IncludeAudioUrls bool           `query:"IncludeAudioUrls" required:"true" doc:"Give the versions of audio files presigned download URLs (valid 15 minutes)."`
	Filter           model.FileKind `query:"Filter" doc:"Only images or only audio."`
	SearchTerm       string         `query:"SearchTerm" maxLength:"200" doc:"Only files whose full name contains this, case-insensitive." example:"siren"`
}

func (h *handlers) list(ctx context.Context, in *listInput) (*struct{ Body []model.FileModel }, error) {
	tenant := rest.Tenant(ctx)
	var rows []fileRow
	if err := h.d.DB.SelectContext(ctx, &rows, `SELECT `+fileColumns+` FROM files
		WHERE tenant_id = $1 AND ($2 = '' OR kind = $2) AND ($3 = '' OR strpos(lower(full_name), lower($3)) > 0)
		ORDER BY full_name`, tenant, string(in.Filter), in.SearchTerm); err != nil {
		return nil, fmt.Errorf("list files: %w", err)
	}
	ms, err := h.models(ctx, tenant, rows)
	if err != nil {
		return nil, err
	}
	out := &struct{ Body []model.FileModel }{Body: make([]model.FileModel, len(ms))}
	for i := range ms {
		if in.IncludeAudioUrls {
			if err := h.sign(ctx, &ms[i], false); err != nil {
				return nil, err
			}
		}
		out.Body[i] = ms[i].FileModel
	}
	return out, nil
}

// DescriptionBody is the JSON body of updateFileDescriptionV4.
type DescriptionBody struct {
	Description string `json:"description" maxLength:"1000" doc:"The new description." example:"Tornado siren, 10 s"`
}

type updateInput struct {
	FilePath
	Description string           `query:"Description" maxLength:"1000" doc:"The new description (or send it in the body)." example:"Tornado siren, 10 s"`
	Body        *DescriptionBody `required:"false"`
}

func (h *handlers) update(ctx context.Context, in *updateInput) (*struct{ Body model.FileModelResponse }, error) {
	full, err := pathName(in.FileName)
	if err != nil {
		return nil, err
	}
	desc := in.Description
	if in.Body != nil {
		if in.Description != "" {
			return nil, rest.Invalid("query", "Description", "give the description in the query or in the body, not both", in.Description)
		}
		desc = in.Body.Description
	}
	tenant := rest.Tenant(ctx)
	res, err := h.d.DB.ExecContext(ctx, `UPDATE files SET description = $3, updated_at = now() WHERE tenant_id = $1 AND full_name = $2`,
		tenant, full, desc)
	if err != nil {
		return nil, fmt.Errorf("update description: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return nil, rest.NotFound("file")
	}
	m, err := h.load(ctx, tenant, full)
	if err != nil {
		return nil, notFound(err)
	}
	if err := h.sign(ctx, &m, true); err != nil {
		return nil, err
	}
	return &struct{ Body model.FileModelResponse }{Body: model.FileModelResponse{File: m.FileModel, Message: "description updated"}}, nil
}

func (h *handlers) delete(ctx context.Context, in *FilePath) (*struct{}, error) {
	full, err := pathName(in.FileName)
	if err != nil {
		return nil, err
	}
	tenant := rest.Tenant(ctx)
	err = h.d.DB.InTx(ctx, func(tx *sqlx.Tx) error {
		var f struct {
			ID   int64  `db:"id"`
			Kind string `db:"kind"`
		}
		err := tx.GetContext(ctx, &f, `SELECT id, kind FROM files WHERE tenant_id = $1 AND full_name = $2 FOR UPDATE`, tenant, full)
		if errors.Is(err, sql.ErrNoRows) {
			return errNoFile
		}
		if err != nil {
			return fmt.Errorf("lock file: %w", err)
		}
		var keys []string
		if err := tx.SelectContext(ctx, &keys, `SELECT object_key FROM file_assets WHERE tenant_id = $1 AND file_id = $2`, tenant, f.ID); err != nil {
			return fmt.Errorf("file assets: %w", err)
		}
		// Objects first: if the store is down, the metadata stays as it was.
		for _, k := range keys {
			if err := h.d.Objects.Client.RemoveObject(ctx, h.d.Objects.Bucket, k, minio.RemoveObjectOptions{}); err != nil {
				return rest.Unavailable("the object store", err)
			}
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM files WHERE tenant_id = $1 AND id = $2`, tenant, f.ID); err != nil {
			return fmt.Errorf("delete file: %w", err)
		}
		_, err = storage.EmitEvent(ctx, tx, tenant, storage.EventFileDeleted, events.FileDeleted{FileName: full, Kind: f.Kind})
		return err
	})
	if err != nil {
		return nil, notFound(err)
	}
	return nil, nil
}
