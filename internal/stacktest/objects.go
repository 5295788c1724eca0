package stacktest

import (
	"context"
	"testing"

	"github.com/minio/minio-go/v7"

	"github.com/tocsin/tocsin/storage/storagetest"
)

// ObjectKeys lists the keys of the stack's objects under prefix.
func (s *Stack) ObjectKeys(t testing.TB, prefix string) []string {
	t.Helper()
	var keys []string
	for o := range s.Objects.Client.ListObjects(context.Background(), s.Objects.Bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if o.Err != nil {
			t.Fatal(o.Err)
		}
		keys = append(keys, o.Key)
	}
	return keys
}

// UploadClaims returns the tenant's claims on uploaded objects, which the
// API does not show.
func (s *Stack) UploadClaims(t testing.TB, tenant string) []storagetest.UploadClaim {
	t.Helper()
	cs, err := storagetest.UploadClaims(context.Background(), s.DB, tenant)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}
