// Package files stores the per-tenant file store's metadata (files and
// their versions, the assets) next to the objects on the object store, and
// records file.uploaded and file.deleted events with the changes.
package files

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
	"github.com/minio/minio-go/v7"

	"github.com/tocsin/tocsin/hooks/events"
	"github.com/tocsin/tocsin/storage"
)

// ErrObjectStore marks a failure of the object store (rather than of the database).
var ErrObjectStore = errors.New("object store")

// Store is the repository of files.
type Store struct {
	DB      *storage.DB
	Objects *storage.Objects
}

// New returns the Store over db and objects.
func New(db *storage.DB, objects *storage.Objects) *Store { return &Store{DB: db, Objects: objects} }

// File is a stored file with its assets, the original first.
type File struct {
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
	Assets      []Asset   `db:"-"`
}

// Asset is a stored version of a file (original, resized, voice or eas).
type Asset struct {
	FileID      int64  `db:"file_id"`
	Kind        string `db:"kind"`
	Key         string `db:"object_key"`
	ContentType string `db:"content_type"`
	SizeBytes   int64  `db:"size_bytes"`
	SHA256      string `db:"sha256"`
	Details     []byte `db:"details"`
}

const fileColumns = `id, full_name, folder_name, file_name, kind, content_type, size_bytes, sha256, description, details, created_at, updated_at`

// withAssets reads the assets of files, each file's in the order original,
// resized, voice, eas.
func (s *Store) withAssets(ctx context.Context, q sqlx.QueryerContext, tenant string, files []File) ([]File, error) {
	if len(files) == 0 {
		return files, nil
	}
	ids := make(pq.Int64Array, len(files))
	for i, f := range files {
		ids[i] = f.ID
	}
	assets, err := storage.SelectAll[Asset](ctx, q, "load file assets", `SELECT file_id, kind, object_key, content_type, size_bytes, sha256, details FROM file_assets
		WHERE tenant_id = $1 AND file_id = ANY($2)
		ORDER BY file_id, array_position(ARRAY['original','resized','voice','eas'], kind)`, tenant, ids)
	if err != nil {
		return nil, err
	}
	byFile := map[int64][]Asset{}
	for _, a := range assets {
		byFile[a.FileID] = append(byFile[a.FileID], a)
	}
	for i := range files {
		files[i].Assets = byFile[files[i].ID]
	}
	return files, nil
}

// List returns the tenant's files by full name, only those of kind when it
// is not empty and only those whose full name contains term
// (case-insensitive) when it is not empty.
func (s *Store) List(ctx context.Context, tenant, kind, term string) ([]File, error) {
	rows, err := storage.SelectAll[File](ctx, s.DB, "list files", `SELECT `+fileColumns+` FROM files
		WHERE tenant_id = $1 AND ($2 = '' OR kind = $2) AND ($3 = '' OR strpos(lower(full_name), lower($3)) > 0)
		ORDER BY full_name`, tenant, kind, term)
	if err != nil {
		return nil, err
	}
	return s.withAssets(ctx, s.DB, tenant, rows)
}

// Page returns at most limit of the tenant's files of kind (all when
// empty) whose full name contains term (case-insensitive), ordered by full
// name from offset, and how many match in all.
func (s *Store) Page(ctx context.Context, tenant, kind, term string, limit, offset int) (fs []File, total int64, err error) {
	const where = ` FROM files
		WHERE tenant_id = $1 AND ($2 = '' OR kind = $2) AND ($3 = '' OR strpos(lower(full_name), lower($3)) > 0)`
	// One snapshot, so the total and the page (and its versions) agree
	// while files are uploaded and deleted.
	err = s.DB.InSnapshot(ctx, func(tx *sqlx.Tx) error {
		// A tenant's files are a library of images and sounds, not a
		// million rows, so X-Total-Count stays exact.
		rows, n, err := storage.Page[File](ctx, tx, "files", storage.CountExact(`SELECT count(*)`+where), `SELECT `+fileColumns+where+`
		ORDER BY full_name`, []any{tenant, kind, term}, limit, offset)
		if err != nil {
			return err
		}
		total = n.N
		fs, err = s.withAssets(ctx, tx, tenant, rows)
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	return fs, total, nil
}

// Get returns the tenant's file by full name, storage.ErrNotFound when it
// has none.
func (s *Store) Get(ctx context.Context, tenant, fullName string) (File, error) {
	f, err := storage.GetOne[File](ctx, s.DB, "load file", `SELECT `+fileColumns+` FROM files WHERE tenant_id = $1 AND full_name = $2`, tenant, fullName)
	if err != nil {
		return f, err
	}
	fs, err := s.withAssets(ctx, s.DB, tenant, []File{f})
	if err != nil {
		return f, err
	}
	return fs[0], nil
}

// Exists reports whether the tenant has a file of that full name.
func (s *Store) Exists(ctx context.Context, tenant, fullName string) (bool, error) {
	return storage.GetOne[bool](ctx, s.DB, "look up file", `SELECT EXISTS (SELECT 1 FROM files WHERE tenant_id = $1 AND full_name = $2)`, tenant, fullName)
}

// Original returns the original version of the tenant's file by full name
// as an alert attachment, storage.ErrNotFound when there is none.
func (s *Store) Original(ctx context.Context, tenant, fullName string) (storage.AttachmentRef, error) {
	return storage.GetOne[storage.AttachmentRef](ctx, s.DB, "look up attachment", `SELECT f.file_name AS name, a.content_type,
			a.size_bytes AS size, a.object_key AS key
		FROM files f JOIN file_assets a ON a.file_id = f.id AND a.tenant_id = f.tenant_id AND a.kind = 'original'
		WHERE f.tenant_id = $1 AND f.full_name = $2`, tenant, fullName)
}

// SetDescription changes the description of the tenant's file by full
// name, storage.ErrNotFound when it has none.
func (s *Store) SetDescription(ctx context.Context, tenant, fullName, description string) error {
	return storage.ExecOne(ctx, s.DB, "update description", `UPDATE files SET description = $3, updated_at = now() WHERE tenant_id = $1 AND full_name = $2`,
		tenant, fullName, description)
}

// NewFile is a file whose objects are stored, to be recorded.
type NewFile struct {
	Tenant, FullName, FolderName, FileName string
	Kind, ContentType                      string
	SizeBytes                              int64
	SHA256, Description                    string
	// ObjectPrefix is the object key prefix of every asset.
	ObjectPrefix string
	Details      any
	// Assets are the versions, the original first; Details is each one's.
	Assets []NewAsset
	// Claimed says that an upload claimed ObjectPrefix (Claim): Create
	// releases the claim in its transaction, and fails with ErrClaimLost
	// when it is gone.
	Claimed bool
}

// NewAsset is a stored version of a new file.
type NewAsset struct {
	Kind, Key, ContentType string
	SizeBytes              int64
	SHA256                 string
	Details                any
}

func jsonOf(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode file details: %w", err)
	}
	return b, nil
}

// Create records a new file, its assets and the file.uploaded event in one
// transaction, releasing the upload's claim on its objects when it has one.
// A full name the tenant already has is storage.ErrConflict.
func (s *Store) Create(ctx context.Context, f NewFile) error {
	details, err := jsonOf(f.Details)
	if err != nil {
		return err
	}
	err = s.DB.InTx(ctx, func(tx *sqlx.Tx) error {
		if f.Claimed {
			if err := releaseInTx(ctx, tx, f.Tenant, f.ObjectPrefix); err != nil {
				return err
			}
		}
		var id int64
		if err := tx.GetContext(ctx, &id, `
			INSERT INTO files (tenant_id, full_name, folder_name, file_name, kind, content_type, size_bytes, sha256,
				description, object_prefix, details)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING id`,
			f.Tenant, f.FullName, f.FolderName, f.FileName, f.Kind, f.ContentType, f.SizeBytes, f.SHA256,
			f.Description, f.ObjectPrefix, details); err != nil {
			return err
		}
		names := make([]string, len(f.Assets))
		for i, a := range f.Assets {
			names[i] = a.Kind
			d, err := jsonOf(a.Details)
			if err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `
				INSERT INTO file_assets (file_id, tenant_id, kind, object_key, content_type, size_bytes, sha256, details)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
				id, f.Tenant, a.Kind, a.Key, a.ContentType, a.SizeBytes, a.SHA256, d); err != nil {
				return fmt.Errorf("insert file asset: %w", err)
			}
		}
		_, err := storage.EmitEvent(ctx, tx, f.Tenant, storage.EventFileUploaded, events.FileUploaded{
			FileName: f.FullName, Kind: f.Kind, ContentType: f.ContentType, SizeBytes: f.SizeBytes,
			SHA256: f.SHA256, Assets: names,
		})
		return err
	})
	if storage.IsUniqueViolation(err, "files_tenant_full_name") {
		return storage.ErrConflict
	}
	if errors.Is(err, ErrClaimLost) {
		return err
	}
	if err != nil {
		return fmt.Errorf("record file: %w", err)
	}
	return nil
}

// lockedFile is the id and kind of a file being deleted.
type lockedFile struct {
	ID   int64  `db:"id"`
	Kind string `db:"kind"`
}

// Delete removes the tenant's file by full name: its objects first (if the
// object store fails, the metadata stays as it was and the error wraps
// ErrObjectStore), then its metadata with the file.deleted event.
// storage.ErrNotFound when the tenant has no such file.
func (s *Store) Delete(ctx context.Context, tenant, fullName string) error {
	return s.DB.InTx(ctx, func(tx *sqlx.Tx) error {
		f, err := storage.GetOne[lockedFile](ctx, tx, "lock file", `SELECT id, kind FROM files WHERE tenant_id = $1 AND full_name = $2 FOR UPDATE`, tenant, fullName)
		if err != nil {
			return err
		}
		keys, err := storage.SelectAll[string](ctx, tx, "file assets", `SELECT object_key FROM file_assets WHERE tenant_id = $1 AND file_id = $2`, tenant, f.ID)
		if err != nil {
			return err
		}
		for _, k := range keys {
			if err := s.Objects.Client.RemoveObject(ctx, s.Objects.Bucket, k, minio.RemoveObjectOptions{}); err != nil {
				return fmt.Errorf("%w: %w", ErrObjectStore, err)
			}
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM files WHERE tenant_id = $1 AND id = $2`, tenant, f.ID); err != nil {
			return fmt.Errorf("delete file: %w", err)
		}
		_, err = storage.EmitEvent(ctx, tx, tenant, storage.EventFileDeleted, events.FileDeleted{FileName: fullName, Kind: f.Kind})
		return err
	})
}
