package recipients_test

import (
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/tocsin/tocsin/api/model"
	"github.com/tocsin/tocsin/internal/auth"
	"github.com/tocsin/tocsin/internal/stacktest"
)

func TestDistributionListsListGetDelete(t *testing.T) {
	t.Parallel()
	s := stacktest.Shared(t)
	tenant, tok := s.NewTenant(t)
	other, otherTok := s.NewTenant(t)
	var csv strings.Builder
	csv.WriteString("externalId,firstName,lastName,emails,mobilePhones\n")
	for i := range 12 {
		fmt.Fprintf(&csv, "M%02d,First%02d,Last%02d,m%d@example.com,+1555300%04d\n", i, i, 11-i, i, i)
	}
	big := mustUpload(t, s, tenant, tok, "Building A", csv.String())
	small := mustUpload(t, s, tenant, tok, "building B", "externalId,firstName,lastName\nM01,,\n")
	mustUpload(t, s, tenant, tok, "Campus", "externalId,firstName,lastName\nM02,,\n")
	theirs := mustUpload(t, s, other, otherTok, "Building A", "externalId,firstName,lastName\nZ1,Zed,Zulu\n")

	base := fmt.Sprintf("/v4/%s/distributionLists", tenant)
	var page model.PagedDistributionProfileResponse
	r := s.Do(t, http.MethodGet, base+"?name=build&sort=-name", tok, nil)
	r.JSON(t, &page)
	if r.Status != 200 || page.Paging.TotalCount != 2 || page.Items[0].Name != "building B" || page.Items[1].Name != "Building A" ||
		page.Items[1].MemberCount != 12 || page.Items[0].MemberCount != 1 {
		t.Fatalf("lists %d %s", r.Status, r.Body)
	}
	r = s.Do(t, http.MethodGet, base+"?pageSize=2&page=2", tok, nil)
	r.JSON(t, &page)
	if page.Paging.TotalCount != 3 || page.Paging.TotalPages != 2 || len(page.Items) != 1 || page.Items[0].Name != "Campus" {
		t.Fatalf("second page %s", r.Body)
	}

	// A list with its recipients, paged, in id order by default.
	var got model.GetDistributionListRecipientsResponse
	var ids []string
	for p := 1; p <= 3; p++ {
		r = s.Do(t, http.MethodGet, fmt.Sprintf("%s/%d?pageSize=5&page=%d", base, big.DistributionList.ID, p), tok, nil)
		r.JSON(t, &got)
		if r.Status != 200 || got.DistributionList.Name != "Building A" || got.Paging.TotalCount != 12 {
			t.Fatalf("recipients %d %s", r.Status, r.Body)
		}
		for _, c := range got.Recipients {
			ids = append(ids, c.ExternalID)
		}
	}
	want := []string{}
	for i := range 12 {
		want = append(want, fmt.Sprintf("M%02d", i))
	}
	if !reflect.DeepEqual(ids, want) {
		t.Fatalf("recipients in id order %v", ids)
	}
	r = s.Do(t, http.MethodGet, fmt.Sprintf("%s/%d?pageSize=1&sort=lastName", base, big.DistributionList.ID), tok, nil)
	r.JSON(t, &got)
	if c := got.Recipients[0]; c.ExternalID != "M11" || c.Name.Last != "Last00" || c.PrimaryEmail != "m11@example.com" || c.PrimaryPhone != "+15553000011" {
		t.Fatalf("sorted by last name %+v", c)
	}

	// Other tenants' lists are not there, whatever the path says.
	for _, c := range []struct{ token, path string }{
		{tok, fmt.Sprintf("%s/%d", base, theirs.DistributionList.ID)},
		{tok, fmt.Sprintf("/v4/%s/distributionLists/%d", other, theirs.DistributionList.ID)},
		{tok, base + "/999999999"},
	} {
		if r := s.Do(t, http.MethodGet, c.path, c.token, nil); r.Status != http.StatusNotFound {
			t.Errorf("GET %s: %d", c.path, r.Status)
		}
		if r := s.Do(t, http.MethodDelete, c.path, c.token, nil); r.Status != http.StatusNotFound {
			t.Errorf("DELETE %s: %d", c.path, r.Status)
		}
	}
	if r := s.Do(t, http.MethodGet, base, s.Token(t, tenant, auth.ScopeContent), nil); r.Status != http.StatusForbidden {
		t.Fatalf("without scope %d", r.Status)
	}

	// Deleting a list keeps its contacts.
	path := fmt.Sprintf("%s/%d", base, small.DistributionList.ID)
	if r := s.Do(t, http.MethodDelete, path, tok, nil); r.Status != http.StatusNoContent {
		t.Fatalf("delete %d %s", r.Status, r.Body)
	}
	if r := s.Do(t, http.MethodGet, path, tok, nil); r.Status != http.StatusNotFound {
		t.Fatalf("deleted list %d", r.Status)
	}
	if r := s.Do(t, http.MethodDelete, path, tok, nil); r.Status != http.StatusNotFound {
		t.Fatalf("second delete %d", r.Status)
	}
	if n := contactCount(t, s, tenant); n != 12 {
		t.Fatalf("%d contacts after the delete", n)
	}
	if n := listCount(t, s, other); n != 1 {
		t.Fatalf("the other tenant has %d lists", n)
	}
}

func TestGroupTree(t *testing.T) {
	t.Parallel()
	s := stacktest.Shared(t)
	tenant, other := stacktest.NewTenant(), stacktest.NewTenant()
	tok := s.Token(t, tenant, auth.ScopeElm)
	p1, p2, p3 := directoryUser(t, s, tenant, "P1", "A", "A"), directoryUser(t, s, tenant, "P2", "B", "B"), directoryUser(t, s, tenant, "P3", "C", "C")
	campus := directoryGroup(t, s, tenant, 0, "Campus")
	annex := directoryGroup(t, s, tenant, 0, "Annex")
	facilities := directoryGroup(t, s, tenant, campus, "Facilities")
	security := directoryGroup(t, s, tenant, campus, "Security")
	night := directoryGroup(t, s, tenant, facilities, "Night shift")
	directoryGroup(t, s, other, 0, "Elsewhere")
	for _, p := range []int64{p1, p2, p3} {
		join(t, s, tenant, p, facilities)
	}
	join(t, s, tenant, p1, night)

	tree := func(query string) model.PagedGroupTreeNodeResponse {
		t.Helper()
		r := s.Do(t, http.MethodGet, "/v2.1/groups/tree"+query, tok, nil)
		if r.Status != http.StatusOK {
			t.Fatalf("%s: %d %s", query, r.Status, r.Body)
		}
		var res model.PagedGroupTreeNodeResponse
		r.JSON(t, &res)
		return res
	}
	names := func(res model.PagedGroupTreeNodeResponse) []string {
		out := []string{}
		for _, n := range res.Items {
			out = append(out, n.Name)
		}
		return out
	}
	all := tree("")
	if all.Paging.TotalCount != 5 {
		t.Fatalf("total %d (other tenants leak?)", all.Paging.TotalCount)
	}
	byName := map[string]model.GroupTreeNode{}
	for _, n := range all.Items {
		byName[n.Name] = n
	}
	f := byName["Facilities"]
	if f.ID != facilities || *f.ParentID != campus || f.Depth != 1 || f.Path != "Campus / Facilities" ||
		f.IDPath != fmt.Sprintf("/%d/%d/", campus, facilities) || f.ChildCount != 1 || f.MemberCount != 3 {
		t.Fatalf("facilities %+v", f)
	}
	if n := byName["Night shift"]; n.Path != "Campus / Facilities / Night shift" || n.ChildCount != 0 || n.MemberCount != 1 || n.Depth != 2 {
		t.Fatalf("night shift %+v", n)
	}
	if c := byName["Campus"]; c.ParentID != nil || c.ChildCount != 2 || c.MemberCount != 0 {
		t.Fatalf("campus %+v", c)
	}
	// The default order keeps each subtree together, parents first.
	got := names(all)
	if got[0] != "Campus" && got[0] != "Annex" {
		t.Fatalf("order %v", got)
	}
	pos := map[string]int{}
	for i, n := range got {
		pos[n] = i
	}
	if !(pos["Campus"] < pos["Facilities"] && pos["Facilities"] < pos["Night shift"] && pos["Campus"] < pos["Security"]) {
		t.Fatalf("parents must come before children: %v", got)
	}

	cases := map[string][]string{
		"?depth=0&sort=name":                            {"Annex", "Campus"},
		"?depth=1&sort=-name":                           {"Security", "Facilities"},
		fmt.Sprintf("?parentId=%d&sort=name", campus):   {"Facilities", "Security"},
		fmt.Sprintf("?parentId=%d", annex):              {},
		fmt.Sprintf("?ancestorId=%d&sort=name", campus): {"Facilities", "Night shift", "Security"},
		fmt.Sprintf("?ancestorId=%d&depth=2", campus):   {"Night shift"},
		"?ancestorId=999999999":                         {},
		"?sort=name&pageSize=2&page=2":                  {"Facilities", "Night shift"},
	}
	for q, want := range cases {
		if got := names(tree(q)); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %v, want %v", q, got, want)
		}
	}

	// Teams created at once under one group all count among its children,
	// and every node shows as many children as the nodes under it.
	const teams = 8
	statuses := make(chan int, teams)
	var wg sync.WaitGroup
	for i := range teams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses <- s.Do(t, http.MethodPost, "/"+tenant+"/directory/staff/groups", s.Token(t, tenant),
				map[string]any{"name": fmt.Sprintf("Team %d", i), "parentId": fmt.Sprint(security)}).Status
		}()
	}
	wg.Wait()
	close(statuses)
	for st := range statuses {
		if st != http.StatusCreated {
			t.Errorf("a team created beside the others: %d", st)
		}
	}
	all = tree("?pageSize=100")
	children := map[int64]int64{}
	for _, n := range all.Items {
		if n.ParentID != nil {
			children[*n.ParentID]++
		}
	}
	for _, n := range all.Items {
		if n.ChildCount != children[n.ID] {
			t.Errorf("%s shows %d children, has %d", n.Path, n.ChildCount, children[n.ID])
		}
	}
	if children[security] != teams || all.Paging.TotalCount != 5+teams {
		t.Errorf("security has %d teams of %d groups", children[security], all.Paging.TotalCount)
	}
	for _, q := range []string{"?depth=-1", "?depth=abc", "?sort=size", "?parentId=x"} {
		if r := s.Do(t, http.MethodGet, "/v2.1/groups/tree"+q, tok, nil); r.Status != http.StatusBadRequest {
			t.Errorf("%s: %d", q, r.Status)
		}
	}
	if r := s.Do(t, http.MethodGet, "/v2.1/groups/tree", s.Token(t, tenant, auth.ScopeTamarack), nil); r.Status != http.StatusForbidden {
		t.Fatalf("the tree needs the elm scope: %d", r.Status)
	}
}
