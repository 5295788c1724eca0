package alerting_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/channels/sandbox"
	"github.com/tocsin/tocsin/internal/stacktest"
)

// recipientCounts is the recipients block of a preview or of an alert.
type recipientCounts struct {
	Total      int64
	AdHoc      int64 `json:"adHoc"`
	PerChannel []struct {
		Channel string
		Count   int64
	} `json:"perChannel"`
}

func (c *recipientCounts) String() string {
	if c == nil {
		return "null"
	}
	s := fmt.Sprintf("total=%d adHoc=%d", c.Total, c.AdHoc)
	for _, pc := range c.PerChannel {
		s += fmt.Sprintf(" %s=%d", pc.Channel, pc.Count)
	}
	return s
}

// alertView is what the tests read of a preview or of an alert.
type alertView struct {
	Recipients *recipientCounts
	Messages   []struct {
		Channel    string
		Recipients *int64
	}
}

// messageCounts are the recipients of each message of the view.
func (v alertView) messageCounts() string {
	var out []string
	for _, m := range v.Messages {
		n := "absent"
		if m.Recipients != nil {
			n = fmt.Sprint(*m.Recipients)
		}
		out = append(out, m.Channel+"="+n)
	}
	return strings.Join(out, " ")
}

func previewOf(t *testing.T, s *stacktest.Stack, tok string, body map[string]any) alertView {
	t.Helper()
	r := s.Do(t, http.MethodPost, "/v2/alerts/preview", tok, body)
	if r.Status != http.StatusOK {
		t.Fatalf("preview: %d %s", r.Status, r.Body)
	}
	var v alertView
	r.JSON(t, &v)
	return v
}

func alertOf(t *testing.T, s *stacktest.Stack, tok string, id int64) alertView {
	t.Helper()
	r := s.Do(t, http.MethodGet, fmt.Sprintf("/v2/alerts/%d", id), tok, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("alert %d: %d %s", id, r.Status, r.Body)
	}
	var v alertView
	r.JSON(t, &v)
	return v
}

// recipientList is the alert's recipients by last name, each as
// "email/phone/mandatory" (contact or ad-hoc).
func recipientList(t *testing.T, s *stacktest.Stack, tok string, id int64) string {
	t.Helper()
	r := s.Do(t, http.MethodGet, fmt.Sprintf("/v2/alerts/%d/results/recipients?sort=lastName&pageSize=50", id), tok, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("recipients of %d: %d %s", id, r.Status, r.Body)
	}
	var page struct {
		Items []struct {
			ContactID   *int64 `json:"contactId"`
			Email       string
			Phone       string
			IsMandatory bool `json:"isMandatory"`
		}
	}
	r.JSON(t, &page)
	var out []string
	for _, it := range page.Items {
		kind := "contact"
		if it.ContactID == nil {
			kind = "adHoc"
		}
		mandatory := "group"
		if it.IsMandatory {
			mandatory = "direct"
		}
		out = append(out, fmt.Sprintf("%s:%s/%s/%s", kind, it.Email, it.Phone, mandatory))
	}
	return strings.Join(out, " ")
}

// emailTextAlert is an alert body on email and text.
func emailTextAlert(recipients map[string]any) map[string]any {
	return map[string]any{"settings": map[string]any{
		"message":    map[string]any{"subject": "Water main break", "body": "Avoid Main Street."},
		"channels":   map[string]any{"email": map[string]any{"enabled": true}, "text": map[string]any{"enabled": true}},
		"recipients": recipients,
	}}
}

// relate makes body an alert of relation to the earlier alert id that
// includes its recipients.
func relate(body map[string]any, id int64, relation string) map[string]any {
	body["settings"].(map[string]any)["related"] = map[string]any{"alertId": id, "relation": relation,
		"actions": map[string]any{"includeOriginalRecipients": true}}
	return body
}

// mailsTo counts the emails the sandbox received for address.
func mailsTo(sb *sandbox.Sandbox, address string) int {
	n := 0
	for _, m := range sb.SMTP.Messages() {
		if slices.Contains(m.To, address) {
			n++
		}
	}
	return n
}

// textsTo counts the texts the sandbox received for number.
func textsTo(sb *sandbox.Sandbox, number string) int {
	n := 0
	for _, m := range sb.SMS.Messages() {
		if m.To == number {
			n++
		}
	}
	return n
}

// TestFollowUpReachesEveryRecipientOfTheEarlierAlert: a follow-up that
// includes the original recipients reaches each of them (contacts and
// ad-hoc recipients alike) with the standing they had there, the preview
// of the follow-up counts what it then does, and an AllClear whose only
// recipients are the earlier alert's ad-hoc ones is delivered. An earlier
// alert whose recipients are not resolved yet (still Scheduled) is a 409
// naming the field, not an alert that fails later with no recipients.
func TestFollowUpReachesEveryRecipientOfTheEarlierAlert(t *testing.T) {
	t.Parallel()
	sb, withSandbox := stacktest.Sandbox(t)
	s := stacktest.Start(t, withSandbox)
	tenant, tok := s.NewTenant(t)
	direct := &contact{First: "Dee", Last: "Adams", Email: "dee-" + tenant + "@example.com", Phone: "+14155553001"}
	member := &contact{First: "Mo", Last: "Baker", Email: "mo-" + tenant + "@example.com", Phone: "+14155553002"}
	seed(t, s, tenant, direct, member)
	gid := group(t, s, tenant, 0, member)
	zedEmail, zedPhone := "zed-"+tenant+"@example.com", "+14155553999"
	niaEmail, niaPhone := "nia-"+tenant+"@example.com", "+14155553888"

	first := send(t, s, tok, emailTextAlert(map[string]any{
		"contactIds": []int64{direct.ID}, "groups": []map[string]any{{"id": gid}},
		"adHoc": []map[string]any{{"firstName": "Zed", "lastName": "Zulu", "email": zedEmail, "phone": zedPhone}},
	}))
	waitDone(t, s, tok, first.AlertID)
	want := fmt.Sprintf("contact:%s/%s/direct contact:%s/%s/group adHoc:%s/%s/direct",
		direct.Email, direct.Phone, member.Email, member.Phone, zedEmail, zedPhone)
	if got := recipientList(t, s, tok, first.AlertID); got != want {
		t.Fatalf("first alert's recipients:\n got %s\nwant %s", got, want)
	}

	followUp := relate(emailTextAlert(map[string]any{
		"adHoc": []map[string]any{{"firstName": "Nia", "lastName": "Moss", "email": niaEmail, "phone": niaPhone}},
	}), first.AlertID, "FollowUp")
	pv := previewOf(t, s, tok, followUp)
	second := send(t, s, tok, followUp)
	waitDone(t, s, tok, second.AlertID)
	want = fmt.Sprintf("contact:%s/%s/direct contact:%s/%s/group adHoc:%s/%s/direct adHoc:%s/%s/direct",
		direct.Email, direct.Phone, member.Email, member.Phone, niaEmail, niaPhone, zedEmail, zedPhone)
	if got := recipientList(t, s, tok, second.AlertID); got != want {
		t.Fatalf("follow-up's recipients:\n got %s\nwant %s", got, want)
	}
	stacktest.Eventually(t, 30*time.Second, "Zed's second email and text", func() bool {
		return mailsTo(sb, zedEmail) == 2 && textsTo(sb, zedPhone) == 2
	})
	got := alertOf(t, s, tok, second.AlertID)
	if want := "total=4 adHoc=2 email=4 text=4"; got.Recipients.String() != want || pv.Recipients.String() != want {
		t.Fatalf("follow-up counts: preview %s, alert %s, want %s", pv.Recipients, got.Recipients, want)
	}

	// An AllClear with nothing but the earlier alert's one ad-hoc recipient.
	schedEmail := "sched-" + tenant + "@example.com"
	only := send(t, s, tok, emailTextAlert(map[string]any{"adHoc": []map[string]any{{"email": schedEmail}}}))
	waitDone(t, s, tok, only.AlertID)
	allClear := relate(emailTextAlert(map[string]any{}), only.AlertID, "AllClear")
	if pv := previewOf(t, s, tok, allClear); pv.Recipients.String() != "total=1 adHoc=1 email=1 text=0" {
		t.Fatalf("AllClear preview %s", pv.Recipients)
	}
	cleared := send(t, s, tok, allClear)
	if st := waitDone(t, s, tok, cleared.AlertID); st.Status != "Sent" || st.Recipients != 1 {
		t.Fatalf("AllClear %+v", st)
	}
	stacktest.Eventually(t, 30*time.Second, "the AllClear email", func() bool { return mailsTo(sb, schedEmail) == 2 })

	// A scheduled alert has no recipients yet: a follow-up cannot include them.
	later := emailTextAlert(map[string]any{"adHoc": []map[string]any{{"email": "later-" + tenant + "@example.com"}}})
	later["settings"].(map[string]any)["schedule"] = map[string]any{"type": "Later", "sendAt": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)}
	scheduled := send(t, s, tok, later)
	for _, path := range []string{"/v2/alerts", "/v2/alerts/preview"} {
		r := s.Do(t, http.MethodPost, path, tok, relate(emailTextAlert(map[string]any{}), scheduled.AlertID, "AllClear"))
		if r.Status != http.StatusConflict || !strings.Contains(string(r.Body), "body.settings.related.actions.includeOriginalRecipients") {
			t.Fatalf("%s including a scheduled alert's recipients: %d %s", path, r.Status, r.Body)
		}
	}
}

// TestPreviewCountsWhatTheAlertReaches: the preview resolves recipients as
// the alert does (ad-hoc entries that are a selected person, or an earlier
// entry, are that recipient unless they bring an address of their own) and
// counts them as the alert's view does.
func TestPreviewCountsWhatTheAlertReaches(t *testing.T) {
	t.Parallel()
	_, withSandbox := stacktest.Sandbox(t)
	s := stacktest.Start(t, withSandbox)
	tenant, tok := s.NewTenant(t)
	frank := &contact{First: "Frank", Last: "Fox", Email: "frank-" + tenant + "@example.com"}
	ann := &contact{First: "Ann", Last: "Avery", Email: "ann-" + tenant + "@example.com", Phone: "+14155554001"}
	ben := &contact{First: "Ben", Last: "Bell", Email: "ben-" + tenant + "@example.com"}
	cy := &contact{First: "Cy", Last: "Cole", Phone: "+14155554003"}
	seed(t, s, tenant, frank, ann, ben, cy)
	gid := group(t, s, tenant, 0, ben)
	lid := list(t, s, tenant, "cy", cy)

	check := func(name string, body map[string]any, want string) {
		t.Helper()
		pv := previewOf(t, s, tok, body)
		res := send(t, s, tok, body)
		waitDone(t, s, tok, res.AlertID)
		got := alertOf(t, s, tok, res.AlertID)
		if pv.Recipients.String() != want || got.Recipients.String() != want {
			t.Errorf("%s: preview %s, alert %s, want %s", name, pv.Recipients, got.Recipients, want)
		}
		if pv.messageCounts() != got.messageCounts() {
			t.Errorf("%s: preview messages %s, alert messages %s", name, pv.messageCounts(), got.messageCounts())
		}
	}
	// The contact's address three times, in two cases and with its local
	// part quoted: one recipient, the contact.
	local, domain, _ := strings.Cut(frank.Email, "@")
	check("one contact", emailTextAlert(map[string]any{"contactIds": []int64{frank.ID},
		"adHoc": []map[string]any{{"email": frank.Email}, {"email": strings.ToUpper(frank.Email)}, {"email": `"` + local + `"@` + domain}}}),
		"total=1 adHoc=0 email=1 text=0")
	// Ann by id and by phone; Ben through a group and by email; Cy
	// through a list; one walk-in given twice (by email in another case);
	// and one more entry with the walk-in's phone and an email of its own,
	// which is a recipient for that email (its phone counts once).
	walkIn := "walk-" + tenant + "@example.com"
	check("every source", emailTextAlert(map[string]any{
		"contactIds": []int64{ann.ID}, "groups": []map[string]any{{"id": gid}}, "distributionListIds": []int64{lid},
		"adHoc": []map[string]any{
			{"phone": ann.Phone},
			{"firstName": "Walk", "lastName": "In", "email": walkIn, "phone": "+14155554999"},
			{"email": strings.ToUpper(walkIn)},
			{"email": "other-" + tenant + "@example.com", "phone": "+14155554999"},
			{"email": strings.ToUpper(ben.Email)},
		}}), "total=5 adHoc=2 email=4 text=3")

	// ETN with areas calls the numbers inside them, never a recipient's
	// phone: an entry with a contact's email and a phone of its own is the
	// contact on an email and ETN alert.
	areaEtn := emailTextAlert(map[string]any{"contactIds": []int64{frank.ID},
		"areas": []map[string]any{{"center": map[string]any{"lat": -45.0, "lng": 170.0}, "radiusMeters": 500}},
		"adHoc": []map[string]any{{"email": frank.Email, "phone": "+14155554777"}}})
	areaEtn["settings"].(map[string]any)["channels"] = map[string]any{"email": map[string]any{"enabled": true}, "etn": map[string]any{"enabled": true}}
	check("email and ETN with areas", areaEtn, "total=1 adHoc=0 email=1 etn=0")

	// An alert whose recipients are not resolved yet shows no counts
	// (the block is absent) rather than zeros.
	later := emailTextAlert(map[string]any{"contactIds": []int64{ann.ID}})
	later["settings"].(map[string]any)["schedule"] = map[string]any{"type": "Later", "sendAt": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)}
	scheduled := send(t, s, tok, later)
	if v := alertOf(t, s, tok, scheduled.AlertID); v.Recipients != nil || v.messageCounts() != "email=absent text=absent" {
		t.Errorf("scheduled alert: recipients %s, messages %s", v.Recipients, v.messageCounts())
	}
}

// channelResults are the rows of an alert's results on one channel, each
// as "recipientId:address:status:error", in recipient order.
func channelResults(t *testing.T, s *stacktest.Stack, tok string, id int64, channel string) []string {
	t.Helper()
	r := s.Do(t, http.MethodGet, fmt.Sprintf("/v2/alerts/%d/results/channels/%s?pageSize=50", id, channel), tok, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("%s results of %d: %d %s", channel, id, r.Status, r.Body)
	}
	var page struct {
		Items []struct {
			RecipientID                 int64 `json:"recipientId"`
			Email, Phone, Status, Error string
		}
	}
	r.JSON(t, &page)
	var out []string
	for _, it := range page.Items {
		out = append(out, fmt.Sprintf("%d:%s:%s:%s", it.RecipientID, it.Email+it.Phone, it.Status, it.Error))
	}
	slices.Sort(out)
	return out
}

// TestEveryAddressGivenGetsOneMessage: ad-hoc entries that share an
// address with an earlier entry or with a contact lose none of their
// other addresses: an entry with the phone of an earlier one and an email
// of its own gets that email, and an entry with a contact's email and a
// phone of its own gets a text at that phone. No address gets two
// messages on a channel: the shared ones show Skipped, naming the
// recipient whose message reaches them, and the counts of the preview and
// of the alert count each address once.
func TestEveryAddressGivenGetsOneMessage(t *testing.T) {
	t.Parallel()
	sb, withSandbox := stacktest.Sandbox(t)
	s := stacktest.Start(t, withSandbox)
	tenant, tok := s.NewTenant(t)
	cara := &contact{First: "Cara", Last: "Cole", Email: "cara-" + tenant + "@example.com", Phone: "+14155556001"}
	seed(t, s, tenant, cara)
	ada, other := "ada-"+tenant+"@example.com", "other-"+tenant+"@example.com"
	const shared, caraMobile = "+14155556100", "+14155556200"
	body := emailTextAlert(map[string]any{"contactIds": []int64{cara.ID}, "adHoc": []map[string]any{
		{"firstName": "Ada", "email": ada, "phone": shared},
		{"firstName": "Other", "email": other, "phone": shared},
		{"firstName": "Cara", "email": strings.ToUpper(cara.Email), "phone": caraMobile},
		{"firstName": "Ada again", "email": strings.ToUpper(ada)},
	}})
	pv := previewOf(t, s, tok, body)
	res := send(t, s, tok, body)
	if st := waitDone(t, s, tok, res.AlertID); st.Status != "Sent" {
		t.Fatalf("alert %+v", st)
	}
	const counts = "total=4 adHoc=3 email=3 text=3"
	if got := alertOf(t, s, tok, res.AlertID); pv.Recipients.String() != counts || got.Recipients.String() != counts {
		t.Errorf("counts: preview %s, alert %s, want %s", pv.Recipients, got.Recipients, counts)
	}
	for _, c := range []struct {
		address string
		got     int
	}{
		{cara.Email, mailsTo(sb, cara.Email)}, {ada, mailsTo(sb, ada)}, {other, mailsTo(sb, other)},
		{cara.Phone, textsTo(sb, cara.Phone)}, {shared, textsTo(sb, shared)}, {caraMobile, textsTo(sb, caraMobile)},
	} {
		if c.got != 1 {
			t.Errorf("%s got %d messages, want 1", c.address, c.got)
		}
	}
	// Cara is recipient 1 (people first), then the entries in order.
	want := map[string][]string{
		"email": {"1:" + cara.Email + ":Sent:", "2:" + ada + ":Sent:", "3:" + other + ":Sent:", "4:" + cara.Email + ":Skipped:reached as recipient 1"},
		"text":  {"1:" + cara.Phone + ":Sent:", "2:" + shared + ":Sent:", "3:" + shared + ":Skipped:reached as recipient 2", "4:" + caraMobile + ":Sent:"},
	}
	for _, ch := range []string{"email", "text"} {
		if got := channelResults(t, s, tok, res.AlertID, ch); !slices.Equal(got, want[ch]) {
			t.Errorf("%s results:\n got %q\nwant %q", ch, got, want[ch])
		}
	}
}

// TestAdHocEmailIsAnAddressAlone: an ad-hoc email is an address alone,
// as a directory user's is: a display name or a comment would make one
// mailbox several recipients, each sent the alert, so it is a 400 naming
// the entry's email, for every spelling the schema's email format lets
// through.
func TestAdHocEmailIsAnAddressAlone(t *testing.T) {
	t.Parallel()
	s := stacktest.Start(t)
	_, tok := s.NewTenant(t)
	for _, e := range []string{"Ada <ada@example.com>", "ada@example.com (Ada)", "=?utf-8?q?Ada?= <ada@example.com>"} {
		body := emailTextAlert(map[string]any{"adHoc": []map[string]any{{"email": "ada@example.com"}, {"email": e}}})
		for _, path := range []string{"/v2/alerts/preview", "/v2/alerts"} {
			r := s.Do(t, http.MethodPost, path, tok, body)
			if r.Status != http.StatusBadRequest {
				t.Fatalf("%s with %q: %d %s", path, e, r.Status, r.Body)
			}
			expectFailure(t, problem(t, r).Errors, "body.settings.recipients.adHoc[1].email", "without a display name", r.Body)
		}
	}
	if n := alertCount(t, s, tok); n != 0 {
		t.Errorf("%d alerts stored", n)
	}
}

// TestFaxAndAppCountsAreRecipientsWithThoseAddresses: the fax, push and
// app channels count the recipients who have a fax number or a device of
// the app, in the preview and in the alert.
func TestFaxAndAppCountsAreRecipientsWithThoseAddresses(t *testing.T) {
	t.Parallel()
	_, withSandbox := stacktest.Sandbox(t)
	s := stacktest.Start(t, withSandbox)
	tenant, tok := s.NewTenant(t)
	ada := &apiPerson{First: "Ada", Phone: "+12025550101", Email: "ada-" + tenant + "@example.com"}
	alan := &apiPerson{First: "Alan", Phone: "+12025550102", Email: "alan-" + tenant + "@example.com"}
	directoryUser(t, s, tenant, tok, ada, nil, func(base string) {
		if r := s.Do(t, http.MethodPost, base+"/contact/phones", tok, map[string]any{"number": "+14155552691", "type": "Fax"}); r.Status != http.StatusCreated {
			t.Fatalf("add fax number: %d %s", r.Status, r.Body)
		}
		if r := s.Do(t, http.MethodPost, base+"/contact/devices", tok, map[string]any{"platform": "ios", "token": "ada-phone"}); r.Status != http.StatusCreated {
			t.Fatalf("register device: %d %s", r.Status, r.Body)
		}
	})
	directoryUser(t, s, tenant, tok, alan, nil)
	body := map[string]any{"settings": map[string]any{
		"message": map[string]any{"subject": "Notice", "body": "Office closed."},
		"channels": map[string]any{"email": map[string]any{"enabled": true}, "fax": map[string]any{"enabled": true},
			"push": map[string]any{"enabled": true}, "myAlertsApp": map[string]any{"enabled": true}},
		"recipients": map[string]any{"contactIds": []int64{ada.ID, alan.ID}},
	}}
	const want = "total=2 adHoc=0 email=2 push=1 myAlertsApp=0 fax=1"
	if pv := previewOf(t, s, tok, body); pv.Recipients.String() != want || pv.messageCounts() != "email=2 push=1 myAlertsApp=0 fax=1" {
		t.Errorf("preview: %s, messages %s", pv.Recipients, pv.messageCounts())
	}
	res := send(t, s, tok, body)
	waitDone(t, s, tok, res.AlertID)
	if got := alertOf(t, s, tok, res.AlertID); got.Recipients.String() != want {
		t.Errorf("alert: %s", got.Recipients)
	}
	var faxed []string
	for _, d := range deliveries(t, s, tenant, res.AlertID) {
		if d.Channel == "fax" && d.Address != "" {
			faxed = append(faxed, d.Address)
		}
	}
	if fmt.Sprint(faxed) != "[+14155552691]" {
		t.Errorf("fax deliveries to %v", faxed)
	}
}

// TestDirectoryUserIDsAreWrittenAsIDsAre: directory user ids in an alert's
// recipients follow the one rule for ids in strings (no sign, spaces or
// leading zeros); each wrong one is a 400 naming it.
func TestDirectoryUserIDsAreWrittenAsIDsAre(t *testing.T) {
	t.Parallel()
	s := stacktest.StartAPI(t)
	tenant, tok := s.NewTenant(t)
	u := &contact{First: "Dir", Last: "User", Email: "dir-" + tenant + "@example.com"}
	seed(t, s, tenant, u)
	id := fmt.Sprint(u.ID)
	for _, path := range []string{"/v2/alerts", "/v2/alerts/preview"} {
		r := s.Do(t, http.MethodPost, path, tok, emailTextAlert(map[string]any{
			"directory": map[string]any{"directoryId": "staff", "userIds": []string{id, "0" + id, "+" + id, "0005"}}}))
		if r.Status != http.StatusBadRequest {
			t.Fatalf("%s: %d %s", path, r.Status, r.Body)
		}
		var fields []string
		for _, f := range problem(t, r).Errors {
			fields = append(fields, f.Location)
		}
		want := "[body.settings.recipients.directory.userIds[1] body.settings.recipients.directory.userIds[2] body.settings.recipients.directory.userIds[3]]"
		if fmt.Sprint(fields) != want {
			t.Errorf("%s: failures at %v, want %s", path, fields, want)
		}
	}
	if r := s.Do(t, http.MethodPost, "/v2/alerts/preview", tok, emailTextAlert(map[string]any{
		"directory": map[string]any{"directoryId": "staff", "userIds": []string{id}}})); r.Status != http.StatusOK {
		t.Fatalf("the id as it is written: %d %s", r.Status, r.Body)
	}
}
