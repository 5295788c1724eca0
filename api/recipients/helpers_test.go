package recipients_test

import (
	"bytes"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"strconv"
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

// directoryUser creates a user of the tenant's staff directory through the
// directory API and returns its id; such users are contacts too.
func directoryUser(t testing.TB, s *stacktest.Stack, tenant, externalID, first, last string) int64 {
	t.Helper()
	body := map[string]any{"name": map[string]any{"first": first, "last": last}}
	if externalID != "" {
		body["externalId"] = externalID
	}
	r := s.Create(t, "/"+tenant+"/directory/staff/users", s.Token(t, tenant), body)
	var u struct{ ID string }
	r.JSON(t, &u)
	id, err := strconv.ParseInt(u.ID, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// directoryGroup creates a public group (under parent when not zero)
// through the directory API and returns its id.
func directoryGroup(t testing.TB, s *stacktest.Stack, tenant string, parent int64, name string) int64 {
	t.Helper()
	body := map[string]any{"name": name, "isPublic": true}
	if parent != 0 {
		body["parentId"] = fmt.Sprint(parent)
	}
	r := s.Create(t, "/"+tenant+"/directory/staff/groups", s.Token(t, tenant), body)
	var g struct{ ID int64 }
	r.JSON(t, &g)
	return g.ID
}

// join makes the directory user a member of the group, as the user does.
func join(t testing.TB, s *stacktest.Stack, tenant string, user, group int64) {
	t.Helper()
	path := fmt.Sprintf("/%s/directory/staff/users/%d/notifications/memberships", tenant, user)
	if r := s.Do(t, http.MethodPost, path, s.Token(t, tenant), fmt.Sprint(group)); r.Status != http.StatusNoContent {
		t.Fatalf("join group %d: %d %s", group, r.Status, r.Body)
	}
}

// personID looks up a contact by external id with findContacts.
func personID(t testing.TB, s *stacktest.Stack, tenant, externalID string) int64 {
	t.Helper()
	res := find(t, s, s.Token(t, tenant), "", map[string]any{"externalId": externalID})
	if len(res.Items) != 1 {
		t.Fatalf("contact %s: %+v", externalID, res.Items)
	}
	return res.Items[0].ID
}

// contactCount is how many contacts findContacts counts for the tenant.
func contactCount(t testing.TB, s *stacktest.Stack, tenant string) int64 {
	t.Helper()
	return find(t, s, s.Token(t, tenant), "?pageSize=1", nil).Paging.TotalCount
}

// listCount is how many distribution lists the tenant has.
func listCount(t testing.TB, s *stacktest.Stack, tenant string) int64 {
	t.Helper()
	r := s.Do(t, http.MethodGet, fmt.Sprintf("/v4/%s/distributionLists?pageSize=1", tenant), s.Token(t, tenant), nil)
	if r.Status != http.StatusOK {
		t.Fatalf("lists: %d %s", r.Status, r.Body)
	}
	var page model.PagedDistributionProfileResponse
	r.JSON(t, &page)
	return page.Paging.TotalCount
}
