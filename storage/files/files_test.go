package files_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/minio/minio-go/v7"

	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/files"
)

func newFile(tenant, folder, name, kind string) files.NewFile {
	full := name
	if folder != "" {
		full = folder + "/" + name
	}
	prefix := storage.TenantKey(tenant, "files/"+full+"/")
	f := files.NewFile{
		Tenant: tenant, FullName: full, FolderName: folder, FileName: name, Kind: kind, ContentType: "audio/wav",
		SizeBytes: 10, SHA256: "abc", Description: "d", ObjectPrefix: prefix, Details: map[string]any{"format": "wav"},
		Assets: []files.NewAsset{
			{Kind: "voice", Key: prefix + "voice", ContentType: "audio/wav", SizeBytes: 4, SHA256: "v", Details: map[string]any{}},
			{Kind: "original", Key: prefix + "original", ContentType: "audio/wav", SizeBytes: 10, SHA256: "abc"},
		},
	}
	if kind == "image" {
		f.ContentType = "image/png"
		f.Assets = []files.NewAsset{{Kind: "original", Key: prefix + "original", ContentType: "image/png", SizeBytes: 10, SHA256: "abc"}}
	}
	return f
}

func events(t *testing.T, db *storage.DB, tenant, typ string) int {
	t.Helper()
	var n int
	if err := db.GetContext(context.Background(), &n, `SELECT count(*) FROM events WHERE tenant_id = $1 AND type = $2`, tenant, typ); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestFilesAreRecordedWithAssetsAndEvents(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, other := stacktest.DBTenants(t)
	s := files.New(db, nil)
	for _, f := range []files.NewFile{newFile(tenant, "sirens", "tornado.wav", "audio"), newFile(tenant, "", "logo.png", "image"),
		newFile(other, "sirens", "tornado.wav", "audio")} {
		if err := s.Create(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Create(ctx, newFile(tenant, "sirens", "tornado.wav", "audio")); !errors.Is(err, storage.ErrConflict) {
		t.Fatalf("a second file of the same name: %v", err)
	}
	if n := events(t, db, tenant, storage.EventFileUploaded); n != 2 {
		t.Fatalf("%d file.uploaded events", n)
	}

	f, err := s.Get(ctx, tenant, "sirens/tornado.wav")
	if err != nil {
		t.Fatal(err)
	}
	if f.FileName != "tornado.wav" || f.FolderName != "sirens" || len(f.Assets) != 2 || f.Assets[0].Kind != "original" || f.Assets[1].Kind != "voice" {
		t.Fatalf("file %+v", f)
	}
	if _, err := s.Get(ctx, tenant, "nothing.wav"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("missing file: %v", err)
	}

	all, err := s.List(ctx, tenant, "", "")
	if err != nil || len(all) != 2 || all[0].FullName != "logo.png" || all[1].FullName != "sirens/tornado.wav" {
		t.Fatalf("list %+v, %v", all, err)
	}
	audio, err := s.List(ctx, tenant, "audio", "TORN")
	if err != nil || len(audio) != 1 || audio[0].FullName != "sirens/tornado.wav" || len(audio[0].Assets) != 2 {
		t.Fatalf("audio named torn: %+v, %v", audio, err)
	}

	if ok, err := s.Exists(ctx, tenant, "logo.png"); err != nil || !ok {
		t.Fatalf("exists: %v %v", ok, err)
	}
	if ok, _ := s.Exists(ctx, stacktest.NewTenant(), "logo.png"); ok {
		t.Fatal("a file exists for another tenant")
	}

	ref, err := s.Original(ctx, tenant, "sirens/tornado.wav")
	if err != nil || ref.Name != "tornado.wav" || ref.Size != 10 || ref.Key != f.Assets[0].Key {
		t.Fatalf("original %+v, %v", ref, err)
	}
	if _, err := s.Original(ctx, stacktest.NewTenant(), "sirens/tornado.wav"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("another tenant's attachment: %v", err)
	}

	if err := s.SetDescription(ctx, tenant, "logo.png", "new"); err != nil {
		t.Fatal(err)
	}
	if f, _ := s.Get(ctx, tenant, "logo.png"); f.Description != "new" {
		t.Fatalf("description %q", f.Description)
	}
	if f, _ := s.Get(ctx, other, "sirens/tornado.wav"); f.Description != "d" {
		t.Fatal("another tenant's file changed")
	}
	if err := s.SetDescription(ctx, tenant, "nothing.png", "x"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("describe a missing file: %v", err)
	}
}

func TestDeleteRemovesObjectsThenMetadata(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, other := stacktest.DBTenants(t)
	objects := stacktest.Objects(t)
	s := files.New(db, objects)
	nf := newFile(tenant, "sirens", "tornado.wav", "audio")
	for _, a := range nf.Assets {
		if _, err := objects.Client.PutObject(ctx, objects.Bucket, a.Key, bytes.NewReader([]byte("data")), 4, minio.PutObjectOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Create(ctx, nf); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, other, nf.FullName); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("another tenant deletes the file: %v", err)
	}
	if err := s.Delete(ctx, tenant, nf.FullName); err != nil {
		t.Fatal(err)
	}
	for _, a := range nf.Assets {
		if _, err := objects.Client.StatObject(ctx, objects.Bucket, a.Key, minio.StatObjectOptions{}); err == nil {
			t.Fatalf("object %s is left", a.Key)
		}
	}
	if _, err := s.Get(ctx, tenant, nf.FullName); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("metadata left: %v", err)
	}
	if n := events(t, db, tenant, storage.EventFileDeleted); n != 1 {
		t.Fatalf("%d file.deleted events", n)
	}
	if err := s.Delete(ctx, tenant, nf.FullName); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
}

// The total and the page come from one snapshot: while files are being
// recorded, a page of all of them holds as many as the total says, each
// with its versions.
func TestPageAgreesWithItsTotalUnderWrites(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, _ := stacktest.DBTenants(t)
	s := files.New(db, nil)
	const n = 300
	done := make(chan error, 1)
	go func() {
		for i := range n {
			if err := s.Create(ctx, newFile(tenant, "", fmt.Sprintf("f%03d.wav", i), "audio")); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	for pages := 0; ; pages++ {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			if pages < 10 {
				t.Fatalf("only %d pages read while files were recorded", pages)
			}
			return
		default:
		}
		fs, total, err := s.Page(ctx, tenant, "", "", 1000, 0)
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(fs)) != total {
			t.Fatalf("page of %d files, total %d", len(fs), total)
		}
		for _, f := range fs {
			if len(f.Assets) != 2 {
				t.Fatalf("%s has %d versions", f.FullName, len(f.Assets))
			}
		}
	}
}
