package recipients_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"testing"

	"github.com/tocsin/tocsin/api/model"
	"github.com/tocsin/tocsin/internal/stacktest"
)

// form builds a multipart body from name, value pairs; the part named
// "file" is sent as a CSV file.
func form(t testing.TB, pairs ...string) (*bytes.Buffer, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for i := 0; i+1 < len(pairs); i += 2 {
		var err error
		if pairs[i] == "file" {
			var w io.Writer
			if w, err = mw.CreateFormFile("file", "contacts.csv"); err == nil {
				_, err = w.Write([]byte(pairs[i+1]))
			}
		} else {
			err = mw.WriteField(pairs[i], pairs[i+1])
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	return &buf, mw.FormDataContentType()
}

// upload posts a CSV file as a new distribution list.
func upload(t testing.TB, s *stacktest.Stack, tenant, token, name, csv string) stacktest.Response {
	t.Helper()
	body, ct := form(t, "name", name, "description", "test list", "file", csv)
	return s.Do(t, http.MethodPost, fmt.Sprintf("/v4/%s/distributionLists/createFromFile", tenant), token, body, "Content-Type", ct)
}

// mustUpload uploads and decodes a 201 answer.
func mustUpload(t testing.TB, s *stacktest.Stack, tenant, token, name, csv string) model.CreateDistributionListFromFileResponse {
	t.Helper()
	r := upload(t, s, tenant, token, name, csv)
	if r.Status != http.StatusCreated {
		t.Fatalf("upload %q: %d %s", name, r.Status, r.Body)
	}
	var res model.CreateDistributionListFromFileResponse
	r.JSON(t, &res)
	return res
}

// find runs findContacts and decodes a 200 answer.
func find(t testing.TB, s *stacktest.Stack, token, query string, body any) model.PagedContactResponse {
	t.Helper()
	r := s.Do(t, http.MethodPost, "/v2/contacts/find"+query, token, body)
	if r.Status != http.StatusOK {
		t.Fatalf("find %s %v: %d %s", query, body, r.Status, r.Body)
	}
	var res model.PagedContactResponse
	r.JSON(t, &res)
	return res
}

func externalIDs(p model.PagedContactResponse) []string {
	out := make([]string, len(p.Items))
	for i, c := range p.Items {
		out[i] = c.ExternalID
	}
	return out
}

// insertGroup adds a group the way the directory does: path holds the ids
// from the root down, between slashes.
func insertGroup(t testing.TB, s *stacktest.Stack, tenant string, parent int64, name string) int64 {
	t.Helper()
	ctx := context.Background()
	var id int64
	var parentID any
	if parent != 0 {
		parentID = parent
	}
	err := s.DB.QueryRowContext(ctx, `INSERT INTO groups (tenant_id, parent_id, name) VALUES ($1, $2, $3) RETURNING id`,
		tenant, parentID, name).Scan(&id)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.DB.ExecContext(ctx, `UPDATE groups g SET
		path = coalesce((SELECT p.path FROM groups p WHERE p.id = g.parent_id), '/') || g.id || '/',
		depth = coalesce((SELECT p.depth + 1 FROM groups p WHERE p.id = g.parent_id), 0)
		WHERE g.id = $1`, id)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// personID looks up a contact by external id.
func personID(t testing.TB, s *stacktest.Stack, tenant, externalID string) int64 {
	t.Helper()
	var id int64
	if err := s.DB.QueryRowContext(context.Background(), `SELECT id FROM people WHERE tenant_id = $1 AND external_id = $2`, tenant, externalID).Scan(&id); err != nil {
		t.Fatalf("contact %s: %v", externalID, err)
	}
	return id
}

func addMember(t testing.TB, s *stacktest.Stack, tenant string, group, person int64) {
	t.Helper()
	if _, err := s.DB.ExecContext(context.Background(), `INSERT INTO group_memberships (tenant_id, group_id, person_id) VALUES ($1, $2, $3)`, tenant, group, person); err != nil {
		t.Fatal(err)
	}
}

func count(t testing.TB, s *stacktest.Stack, q string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := s.DB.QueryRowContext(context.Background(), q, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
