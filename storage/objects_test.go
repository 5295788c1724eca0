package storage_test

import (
	"context"
	"errors"
	"testing"

	"github.com/tocsin/tocsin/channels"
	"github.com/tocsin/tocsin/internal/stacktest"
)

// TestObjectErrorsTellAMissingFileFromAMissingBucket: a deleted object is
// final (ErrFileMissing), a bucket that is not there is the store's
// configuration and may be fixed (ErrFileUnavailable).
func TestObjectErrorsTellAMissingFileFromAMissingBucket(t *testing.T) {
	t.Parallel()
	objects := stacktest.Objects(t)
	ctx := context.Background()
	if _, _, err := objects.Read(ctx, "tenants/1/none.png", 0); !errors.Is(err, channels.ErrFileMissing) {
		t.Errorf("missing object: %v", err)
	}
	noBucket := *objects
	noBucket.Bucket = objects.Bucket + "-not-there"
	_, _, err := noBucket.Read(ctx, "tenants/1/none.png", 0)
	if !errors.Is(err, channels.ErrFileUnavailable) || errors.Is(err, channels.ErrFileMissing) {
		t.Errorf("missing bucket: %v", err)
	}
}
