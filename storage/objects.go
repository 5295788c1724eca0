package storage

import (
	"context"
	"fmt"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
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

// TenantKey is the object key of name within tenant's prefix.
func TenantKey(tenant, name string) string { return "tenants/" + tenant + "/" + name }
