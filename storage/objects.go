package storage

import (
	"context"
	"fmt"
	"io"
	"strconv"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/tocsin/tocsin/channels"
)

// Objects is the object store (MinIO) holding uploaded files and their
// encoded versions. Keys start with the tenant id, so tenants never share a prefix.
type Objects struct {
	Client *minio.Client
	Bucket string
}

// ObjectsConfig says where the object store is.
type ObjectsConfig struct {
	Endpoint, AccessKey, SecretKey, Bucket string
	Secure                                 bool
}

// OpenObjects connects to MinIO and creates the bucket when it is missing.
func OpenObjects(ctx context.Context, c ObjectsConfig) (*Objects, error) {
	cl, err := minio.New(c.Endpoint, &minio.Options{
		Creds:  credentials.NewStaticV4(c.AccessKey, c.SecretKey, ""),
		Secure: c.Secure,
	})
	if err != nil {
		return nil, fmt.Errorf("object store client: %w", err)
	}
	o := &Objects{Client: cl, Bucket: c.Bucket}
	if err := o.EnsureBucket(ctx); err != nil {
		return nil, err
	}
	return o, nil
}

// EnsureBucket creates the bucket if it does not exist yet.
func (o *Objects) EnsureBucket(ctx context.Context) error {
	ok, err := o.Client.BucketExists(ctx, o.Bucket)
	if err != nil {
		return fmt.Errorf("object store bucket %s: %w", o.Bucket, err)
	}
	if ok {
		return nil
	}
	if err := o.Client.MakeBucket(ctx, o.Bucket, minio.MakeBucketOptions{}); err != nil {
		return fmt.Errorf("create bucket %s: %w", o.Bucket, err)
	}
	return nil
}

// Ping checks that the object store answers.
func (o *Objects) Ping(ctx context.Context) error {
	if _, err := o.Client.BucketExists(ctx, o.Bucket); err != nil {
		return fmt.Errorf("object store: %w", err)
	}
	return nil
}

// Read reads the object key and its content type. An object larger than
// limit bytes (when limit > 0) is refused. The object store's failures are
// ObjectErrors: callers word them with channels.FileProblem.
func (o *Objects) Read(ctx context.Context, key string, limit int64) ([]byte, string, error) {
	obj, err := o.Client.GetObject(ctx, o.Bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return nil, "", ObjectError("get", key, err)
	}
	defer obj.Close()
	st, err := obj.Stat()
	if err != nil {
		return nil, "", ObjectError("stat", key, err)
	}
	if limit > 0 && st.Size > limit {
		return nil, "", fmt.Errorf("the file is larger than %d bytes", limit)
	}
	b, err := io.ReadAll(obj)
	if err != nil {
		return nil, "", ObjectError("read", key, err)
	}
	return b, st.ContentType, nil
}

// ObjectError is a failure of the object store on key: it wraps
// channels.ErrFileMissing when the object is not there (final: the file
// was deleted), else channels.ErrFileUnavailable (the store failed; a
// retry may succeed), both with the store's own words for the logs.
func ObjectError(op, key string, err error) error {
	kind := channels.ErrFileUnavailable
	// Only a missing object is final; a missing bucket (also a 404) is the
	// store's configuration, and retrying may find it.
	if r := minio.ToErrorResponse(err); r.Code == "NoSuchKey" {
		kind = channels.ErrFileMissing
	}
	return fmt.Errorf("%s %s: %w (%w)", op, key, kind, err)
}

// TenantKey is the object key of name within tenant's prefix.
func TenantKey(tenant, name string) string { return "tenants/" + tenant + "/" + name }

// AttachmentPrefix is the key prefix of the file uploaded with the tenant's
// alert id (createAlertWithAttachment): tenants/<tenant>/alerts/<id>-<tag>/,
// with the alert's tag (alert.NewTag), so that an alert id handed out
// again (the database restored from a backup while the object store keeps
// its objects) gets a prefix of its own. Alerts stored before tags came
// have tenants/<tenant>/alerts/<id>/ (tag ""); their rows keep the keys
// (Alert's Attachments), which nothing computes again. Nothing else is
// stored under a prefix, and none is the start of another, so an orphan
// sweep may empty it.
func AttachmentPrefix(tenant string, alertID int64, tag string) string {
	id := strconv.FormatInt(alertID, 10)
	if tag != "" {
		id += "-" + tag
	}
	return TenantKey(tenant, "alerts/"+id+"/")
}

// RemovePrefix removes every object under prefix and returns how many it
// removed. It stops at the first failure.
func (o *Objects) RemovePrefix(ctx context.Context, prefix string) (int, error) {
	ctx, cancel := context.WithCancel(ctx) // ends the listing when a removal fails
	defer cancel()
	n := 0
	for obj := range o.Client.ListObjects(ctx, o.Bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if obj.Err != nil {
			return n, fmt.Errorf("list %s: %w", prefix, obj.Err)
		}
		if err := o.Client.RemoveObject(ctx, o.Bucket, obj.Key, minio.RemoveObjectOptions{}); err != nil {
			return n, fmt.Errorf("remove %s: %w", obj.Key, err)
		}
		n++
	}
	return n, nil
}
