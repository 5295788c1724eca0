package directory_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/stacktest"
)

type groupSummary struct {
	ID          int64
	Name, Path  string
	ParentID    *int64
	Depth       int
	IsPublic    bool
	MemberCount int64
}

func TestGroups(t *testing.T) {
	t.Parallel()
	e := start(t)
	create := func(name string, public bool, parent int64) groupSummary {
		t.Helper()
		body := map[string]any{"name": name, "isPublic": public, "description": "the " + name}
		if parent != 0 {
			body["parentId"] = fmt.Sprint(parent)
		}
		var g groupSummary
		r := want(t, e.do(t, "POST", e.base()+"/groups", body), 201)
		r.JSON(t, &g)
		if r.Header.Get("Location") == "" {
			t.Fatal("no Location")
		}
		return g
	}
	campus := create("Campus", true, 0)
	north := create("North building", true, campus.ID)
	wardens := create("Fire wardens", true, north.ID)
	board := create("Board", false, 0)
	create("Visitors", true, 0)
	if wardens.Depth != 2 || wardens.Path != "Campus / North building / Fire wardens" || *wardens.ParentID != north.ID || campus.ParentID != nil {
		t.Fatalf("%+v", wardens)
	}
	wantProblem(t, e.do(t, "POST", e.base()+"/groups", map[string]any{"name": "Fire wardens", "parentId": fmt.Sprint(north.ID)}), 409, "")
	want(t, e.do(t, "POST", e.base()+"/groups", map[string]any{"name": "Fire wardens", "parentId": fmt.Sprint(campus.ID), "isPublic": true}), 201)
	wantProblem(t, e.do(t, "POST", e.base()+"/groups", map[string]any{"name": "Orphan", "parentId": "999999999"}), 404, "")
	wantProblem(t, e.do(t, "POST", e.base()+"/groups", map[string]any{"name": "Orphan", "parentId": "x"}), 400, "body.parentId")
	wantProblem(t, e.do(t, "POST", e.base()+"/groups", map[string]any{"name": ""}), 400, "body.name")
	// Another tenant cannot nest under our groups.
	other := e.s.Token(t, "42"+e.tenant[2:], "directory:public")
	wantProblem(t, e.s.Do(t, "POST", "/42"+e.tenant[2:]+"/directory/staff/groups", other, map[string]any{"name": "Sneaky", "parentId": fmt.Sprint(campus.ID)}), 404, "")

	ada := e.createUser(t, "Ada", "Lovelace")
	grace := e.createUser(t, "Grace", "Hopper")
	hidden := e.createUser(t, "Hidden", "Person", map[string]any{"selfServiceSettings": map[string]any{"canJoinGroups": true, "showInGroupDirectory": false}})
	for _, u := range []string{ada, grace, hidden} {
		want(t, e.do(t, "POST", e.user(u)+"/notifications/memberships", fmt.Sprint(wardens.ID)), 204)
	}

	type page struct {
		Paging struct{ TotalCount int }
		Items  []groupSummary
	}
	find := func(q any, query string) (string, page) {
		t.Helper()
		var p page
		want(t, e.do(t, "POST", e.base()+"/groups/find"+query, q), 200).JSON(t, &p)
		var names []string
		for _, g := range p.Items {
			names = append(names, g.Name)
		}
		return strings.Join(names, ","), p
	}
	if got, p := find(nil, ""); got != "Board,Campus,Fire wardens,Fire wardens,North building,Visitors" || p.Paging.TotalCount != 6 {
		t.Fatalf("all: %s", got)
	}
	if got, _ := find(map[string]any{"name": "WARD"}, "?sort=path"); got != "Fire wardens,Fire wardens" {
		t.Fatalf("by name: %s", got)
	}
	if got, _ := find(map[string]any{"ancestorId": fmt.Sprint(campus.ID)}, "?sort=path"); got != "Fire wardens,North building,Fire wardens" {
		t.Fatalf("below campus: %s", got)
	}
	if got, _ := find(map[string]any{"parentId": fmt.Sprint(north.ID)}, ""); got != "Fire wardens" {
		t.Fatalf("children: %s", got)
	}
	if got, _ := find(map[string]any{"rootsOnly": true, "isPublic": true}, "?sort=-name"); got != "Visitors,Campus" {
		t.Fatalf("public roots: %s", got)
	}
	if got, p := find(map[string]any{"memberUserId": ada}, ""); got != "Fire wardens" || p.Items[0].MemberCount != 3 || p.Items[0].ID != wardens.ID {
		t.Fatalf("ada's: %s %+v", got, p)
	}
	if got, _ := find(map[string]any{"isPublic": false}, ""); got != "Board" {
		t.Fatalf("private: %s", got)
	}
	wantProblem(t, e.do(t, "POST", e.base()+"/groups/find?sort=colour", nil), 400, "query.sort")

	// Discover: public groups in tree order, minus the user's own.
	discover := func(query string) string {
		t.Helper()
		var p struct {
			Items []struct {
				ID, Name, Path string
				Depth          int
			}
		}
		want(t, e.do(t, "GET", e.base()+"/groups/discover"+query, nil), 200).JSON(t, &p)
		var s []string
		for _, g := range p.Items {
			s = append(s, g.Path)
		}
		return strings.Join(s, "|")
	}
	if got := discover(""); got != "Campus|Campus / Fire wardens|Campus / North building|Campus / North building / Fire wardens|Visitors" {
		t.Fatalf("discover: %s", got)
	}
	if got := discover("?userId=" + ada); strings.Contains(got, "North building / Fire wardens") || !strings.Contains(got, "Visitors") {
		t.Fatalf("discover for ada: %s", got)
	}
	locked := e.createUser(t, "Locked", "Out", map[string]any{"selfServiceSettings": map[string]any{"canJoinGroups": false, "showInGroupDirectory": true}})
	if got := discover("?userId=" + locked); got != "" {
		t.Fatalf("discover for a user who cannot join: %s", got)
	}
	wantProblem(t, e.do(t, "GET", e.base()+"/groups/discover?userId=999999999", nil), 404, "")
	if strings.Contains(discover(""), "Board") {
		t.Fatal("a private group was offered")
	}

	// Members: users of the directory shown in group directories.
	var m struct {
		Paging struct{ TotalCount int }
		Items  []struct {
			ID   string
			Name struct{ Last string }
		}
	}
	want(t, e.do(t, "POST", e.base()+fmt.Sprintf("/groups/%d/members?sort=-lastName", wardens.ID), nil), 200).JSON(t, &m)
	if m.Paging.TotalCount != 2 || m.Items[0].Name.Last != "Lovelace" || m.Items[1].Name.Last != "Hopper" {
		t.Fatalf("%+v", m)
	}
	want(t, e.do(t, "POST", e.base()+fmt.Sprintf("/groups/%d/members", board.ID), nil), 200).JSON(t, &m)
	if m.Paging.TotalCount != 0 || m.Items == nil {
		t.Fatalf("%+v", m)
	}
	wantProblem(t, e.do(t, "POST", e.base()+"/groups/999999999/members", nil), 404, "")
	wantProblem(t, e.do(t, "POST", e.base()+"/groups/x/members", nil), 400, "path.groupId")
	// Another directory's view lists none of these users.
	want(t, e.do(t, "POST", "/"+e.tenant+"/directory/other/groups/"+fmt.Sprint(wardens.ID)+"/members", nil), 200).JSON(t, &m)
	if m.Paging.TotalCount != 0 {
		t.Fatalf("%+v", m)
	}
}

func TestMeta(t *testing.T) {
	t.Parallel()
	e := start(t)
	var langs struct {
		Languages []struct {
			Code, Name, NativeName string
			Written, Spoken        bool
		}
	}
	want(t, e.do(t, "GET", "/"+e.tenant+"/directory/meta/languages", nil), 200).JSON(t, &langs)
	found := false
	for _, l := range langs.Languages {
		if l.Code == "es" && l.Name == "Spanish" && l.NativeName == "español" && l.Written && l.Spoken {
			found = true
		}
	}
	if !found || len(langs.Languages) < 20 {
		t.Fatalf("%+v", langs)
	}

	var zones struct {
		TimeZones []struct {
			ID, Abbreviation, UTCOffset string
			OffsetMinutes               int
			IsDst                       bool
		}
		AsOf time.Time
	}
	want(t, e.do(t, "GET", "/"+e.tenant+"/directory/meta/timezones", nil), 200).JSON(t, &zones)
	byID := map[string]int{}
	for i, z := range zones.TimeZones {
		byID[z.ID] = i
	}
	if len(zones.TimeZones) < 300 || zones.AsOf.IsZero() {
		t.Fatalf("%d zones", len(zones.TimeZones))
	}
	utc := zones.TimeZones[byID["UTC"]]
	kolkata := zones.TimeZones[byID["Asia/Kolkata"]]
	chicago := zones.TimeZones[byID["America/Chicago"]]
	if utc.UTCOffset != "+00:00" || kolkata.UTCOffset != "+05:30" || kolkata.OffsetMinutes != 330 ||
		(chicago.OffsetMinutes != -360 && chicago.OffsetMinutes != -300) || chicago.IsDst != (chicago.OffsetMinutes == -300) {
		t.Fatalf("%+v %+v %+v", utc, kolkata, chicago)
	}

	var cats struct {
		Categories []struct {
			ID, Name, Description string
			Events                []string
		}
	}
	want(t, e.do(t, "GET", "/"+e.tenant+"/directory/meta/weather/categories", nil), 200).JSON(t, &cats)
	if len(cats.Categories) < 10 || cats.Categories[0].ID != "Tornado" || len(cats.Categories[0].Events) == 0 {
		t.Fatalf("%+v", cats)
	}
	// Another tenant's path is a 404.
	wantProblem(t, e.do(t, "GET", "/1/directory/meta/languages", nil), 404, "")
}

// TestGroupTreeDepthAndPathAreBounded: the tree is at most 32 levels deep
// and a group's path at most 1,000 characters; a group beyond either is a
// 400 naming parentId and changes nothing, so a page of the tree stays small.
func TestGroupTreeDepthAndPathAreBounded(t *testing.T) {
	t.Parallel()
	e := start(t)
	create := func(name string, parent int64) stacktest.Response {
		t.Helper()
		body := map[string]any{"name": name}
		if parent != 0 {
			body["parentId"] = fmt.Sprint(parent)
		}
		return e.do(t, "POST", e.base()+"/groups", body)
	}
	// A chain of 32 levels: depth 0 to 31.
	var parent int64
	for depth := 0; depth < 32; depth++ {
		var g groupSummary
		want(t, create(fmt.Sprintf("level %d", depth), parent), 201).JSON(t, &g)
		if g.Depth != depth {
			t.Fatalf("depth %d: %+v", depth, g)
		}
		parent = g.ID
	}
	p := wantProblem(t, create("level 32", parent), 400, "body.parentId")
	if !strings.Contains(p.Errors[0].ErrorMessage, "32 levels") {
		t.Fatalf("the problem does not give the limit: %+v", p)
	}
	// Long names reach the path limit first: 200 + 3 + 200 + ... characters.
	name := func(i int) string { return fmt.Sprintf("%d", i) + strings.Repeat("n", 199) }
	parent = 0
	for depth := 0; depth < 4; depth++ {
		var g groupSummary
		want(t, create(name(depth), parent), 201).JSON(t, &g)
		if n := len(g.Path); n != 200*(depth+1)+3*depth {
			t.Fatalf("depth %d: path of %d characters", depth, n)
		}
		parent = g.ID
	}
	p = wantProblem(t, create(name(4), parent), 400, "body.parentId")
	if !strings.Contains(p.Errors[0].ErrorMessage, "1012 characters, more than 1000") {
		t.Fatalf("the problem does not give the lengths: %+v", p)
	}
	// A shorter name still fits under the same parent.
	var g groupSummary
	want(t, create(strings.Repeat("s", 188), parent), 201).JSON(t, &g)
	if len(g.Path) != 1000 {
		t.Fatalf("path of %d characters", len(g.Path))
	}
	wantProblem(t, create(strings.Repeat("s", 189), parent), 400, "body.parentId")

	// The refused groups were not made, and the deepest page of the tree
	// holds every group with a bounded path.
	r := e.s.Do(t, "GET", "/v2.1/groups/tree?sort=-depth&pageSize=500", e.s.Token(t, e.tenant, "elm"), nil)
	var tree struct {
		Paging struct{ TotalCount int }
		Items  []struct {
			Depth int
			Path  string
		}
	}
	want(t, r, 200).JSON(t, &tree)
	if tree.Paging.TotalCount != 32+4+1 || tree.Items[0].Depth != 31 {
		t.Fatalf("%d groups, the deepest at %d", tree.Paging.TotalCount, tree.Items[0].Depth)
	}
	for _, n := range tree.Items {
		if len(n.Path) > 1000 {
			t.Fatalf("a path of %d characters", len(n.Path))
		}
	}
}
