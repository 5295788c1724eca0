package directory_test

import (
	"fmt"
	"testing"

	"github.com/tocsin/tocsin/internal/stacktest"
)

// TestPushDevicesAndFaxNumbers registers push devices and a fax number
// through the API: they show in the contact information, tokens are unique
// per tenant, and another tenant cannot touch them.
func TestPushDevicesAndFaxNumbers(t *testing.T) {
	t.Parallel()
	e := start(t)
	ada := e.createUser(t, "Ada", "Lovelace", map[string]any{"mobileApps": []map[string]any{
		{"installationId": "ios-1", "platform": "ios", "pushToken": "app-token-ada"}}})
	alan := e.createUser(t, "Alan", "Turing")

	var d struct {
		ID            int64
		App, Platform string
		Token         string
	}
	want(t, e.do(t, "POST", e.user(ada)+"/contact/devices", map[string]any{"platform": "ios", "token": "push-token-ada-1"}), 201).JSON(t, &d)
	if d.ID == 0 || d.App != "push" || d.Platform != "ios" || d.Token != "push-token-ada-1" {
		t.Fatalf("device %+v", d)
	}
	first := d.ID
	want(t, e.do(t, "POST", e.user(ada)+"/contact/devices", map[string]any{"platform": "android", "token": "push-token-ada-2"}), 201)
	// The same token again, for this user or another, is a conflict; the
	// app's token may also be a push token.
	wantProblem(t, e.do(t, "POST", e.user(alan)+"/contact/devices", map[string]any{"platform": "ios", "token": "push-token-ada-1"}), 409, "")
	want(t, e.do(t, "POST", e.user(alan)+"/contact/devices", map[string]any{"platform": "web", "token": "app-token-ada"}), 201)
	wantProblem(t, e.do(t, "POST", e.user(ada)+"/contact/devices", map[string]any{"platform": "ios", "token": "short"}), 400, "body.token")
	wantProblem(t, e.do(t, "POST", e.user(ada)+"/contact/devices", map[string]any{"platform": "symbian", "token": "push-token-x"}), 400, "body.platform")
	wantProblem(t, e.do(t, "POST", e.user(ada)+"/contact/devices", map[string]any{"platform": "ios", "token": "push token x"}), 400, "body.token")
	wantProblem(t, e.do(t, "POST", e.user("999999999")+"/contact/devices", map[string]any{"platform": "ios", "token": "push-token-x"}), 404, "")

	// A fax number: no texts, no calls.
	var ph struct {
		Number, Type     string
		CanText, CanCall bool
	}
	want(t, e.do(t, "POST", e.user(ada)+"/contact/phones", map[string]any{"number": "+12025550188", "type": "Fax"}), 201).JSON(t, &ph)
	if ph.Type != "Fax" || ph.CanText || ph.CanCall {
		t.Fatalf("fax phone %+v", ph)
	}
	wantProblem(t, e.do(t, "POST", e.user(ada)+"/contact/phones", map[string]any{"number": "+12025550189", "type": "Fax", "canCall": true}), 400, "body.canCall")

	var ci struct {
		Phones  []struct{ Number, Type string }
		Devices []struct {
			ID         int64
			App, Token string
		}
	}
	want(t, e.do(t, "GET", e.user(ada)+"/contact", nil), 200).JSON(t, &ci)
	apps := map[string]string{}
	for _, dv := range ci.Devices {
		apps[dv.Token] = dv.App
	}
	if len(ci.Devices) != 3 || apps["push-token-ada-1"] != "push" || apps["push-token-ada-2"] != "push" || apps["app-token-ada"] != "myalerts" {
		t.Fatalf("devices %+v", ci.Devices)
	}
	if len(ci.Phones) != 1 || ci.Phones[0].Type != "Fax" {
		t.Fatalf("phones %+v", ci.Phones)
	}

	// Read and remove; the app's device goes with its mobileApps entry.
	want(t, e.do(t, "GET", fmt.Sprintf("%s/contact/devices/%d", e.user(ada), first), nil), 200)
	var appDevice int64
	for _, dv := range ci.Devices {
		if dv.App == "myalerts" {
			appDevice = dv.ID
		}
	}
	wantProblem(t, e.do(t, "DELETE", fmt.Sprintf("%s/contact/devices/%d", e.user(ada), appDevice), nil), 409, "")
	wantProblem(t, e.do(t, "DELETE", fmt.Sprintf("%s/contact/devices/%d", e.user(alan), first), nil), 404, "")

	// Another tenant sees nothing of it.
	other := stacktest.NewTenant()
	otok := e.s.Token(t, other, "directory:public")
	path := fmt.Sprintf("/%s/directory/%s/users/%s/contact/devices/%d", other, e.dir, ada, first)
	if r := e.s.Do(t, "GET", path, otok, nil); r.Status != 404 {
		t.Fatalf("another tenant read the device: %d %s", r.Status, r.Body)
	}
	if r := e.s.Do(t, "DELETE", e.user(ada)+fmt.Sprintf("/contact/devices/%d", first), otok, nil); r.Status != 404 {
		t.Fatalf("another tenant's token on this tenant's path: %d %s", r.Status, r.Body)
	}

	want(t, e.do(t, "DELETE", fmt.Sprintf("%s/contact/devices/%d", e.user(ada), first), nil), 204)
	wantProblem(t, e.do(t, "GET", fmt.Sprintf("%s/contact/devices/%d", e.user(ada), first), nil), 404, "")
}
