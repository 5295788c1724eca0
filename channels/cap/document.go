// Package cap builds Common Alerting Protocol 1.2 documents (OASIS CAP 1.2,
// namespace urn:oasis:names:tc:emergency:cap:1.2) and delivers them to a CAP
// endpoint for the EAS and mobile-broadcast channels. Updates and cancels of
// a sent alert are new documents whose references name the earlier ones.
package cap

import (
	"encoding/xml"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Namespace is the CAP 1.2 XML namespace.
const Namespace = "urn:oasis:names:tc:emergency:cap:1.2"

// TimeLayout is CAP's date-time form: seconds and a numeric zone, never
// "Z". tocsin writes every time in UTC (+00:00).
const TimeLayout = "2006-01-02T15:04:05-07:00"

// Alert is the <alert> element.
type Alert struct {
	XMLName     xml.Name `xml:"urn:oasis:names:tc:emergency:cap:1.2 alert"`
	Identifier  string   `xml:"identifier"`
	Sender      string   `xml:"sender"`
	Sent        string   `xml:"sent"`
	Status      string   `xml:"status"`
	MsgType     string   `xml:"msgType"`
	Source      string   `xml:"source,omitempty"`
	Scope       string   `xml:"scope"`
	Restriction string   `xml:"restriction,omitempty"`
	Addresses   string   `xml:"addresses,omitempty"`
	Codes       []string `xml:"code,omitempty"`
	Note        string   `xml:"note,omitempty"`
	References  string   `xml:"references,omitempty"`
	Incidents   string   `xml:"incidents,omitempty"`
	Info        []Info   `xml:"info,omitempty"`
}

// Info is an <info> block. Its elements stand in the order of the schema;
// the embedded groups are written in place.
type Info struct {
	Language string `xml:"language,omitempty"`
	Classification
	Audience  string       `xml:"audience,omitempty"`
	EventCode []NamedValue `xml:"eventCode,omitempty"`
	Effective string       `xml:"effective,omitempty"`
	Onset     string       `xml:"onset,omitempty"`
	Expires   string       `xml:"expires,omitempty"`
	Wording
	Contact   string       `xml:"contact,omitempty"`
	Parameter []NamedValue `xml:"parameter,omitempty"`
	Resource  []Resource   `xml:"resource,omitempty"`
	Area      []Area       `xml:"area,omitempty"`
}

// Classification says what kind of alert an <info> block is about; Input
// takes it as Info has it.
type Classification struct {
	Category     []string `xml:"category" json:"category"`
	Event        string   `xml:"event" json:"event"`
	ResponseType []string `xml:"responseType,omitempty" json:"responseType,omitempty"`
	Urgency      string   `xml:"urgency" json:"urgency"`
	Severity     string   `xml:"severity" json:"severity"`
	Certainty    string   `xml:"certainty" json:"certainty"`
}

// Wording is what an <info> block says and who says it; Input takes it as
// Info has it.
type Wording struct {
	SenderName  string `xml:"senderName,omitempty" json:"senderName,omitempty"`
	Headline    string `xml:"headline,omitempty" json:"headline,omitempty"`
	Description string `xml:"description,omitempty" json:"description,omitempty"`
	Instruction string `xml:"instruction,omitempty" json:"instruction,omitempty"`
	Web         string `xml:"web,omitempty" json:"web,omitempty"`
}

// NamedValue is an eventCode, parameter or geocode pair.
type NamedValue struct {
	ValueName string `xml:"valueName"`
	Value     string `xml:"value"`
}

// Resource is a <resource>: a file that goes with the alert, such as the EAS audio.
type Resource struct {
	ResourceDesc string `xml:"resourceDesc"`
	MimeType     string `xml:"mimeType"`
	Size         int64  `xml:"size,omitempty"`
	URI          string `xml:"uri,omitempty"`
	DerefURI     string `xml:"derefUri,omitempty"`
	Digest       string `xml:"digest,omitempty"`
}

// Area is an <area>.
type Area struct {
	AreaDesc string       `xml:"areaDesc"`
	Polygon  []string     `xml:"polygon,omitempty"`
	Circle   []string     `xml:"circle,omitempty"`
	Geocode  []NamedValue `xml:"geocode,omitempty"`
}

// The values CAP allows.
var (
	Statuses     = []string{"Actual", "Exercise", "System", "Test", "Draft"}
	MsgTypes     = []string{"Alert", "Update", "Cancel", "Ack", "Error"}
	Scopes       = []string{"Public", "Restricted", "Private"}
	Categories   = []string{"Geo", "Met", "Safety", "Security", "Rescue", "Fire", "Health", "Env", "Transport", "Infra", "CBRNE", "Other"}
	Urgencies    = []string{"Immediate", "Expected", "Future", "Past", "Unknown"}
	Severities   = []string{"Extreme", "Severe", "Moderate", "Minor", "Unknown"}
	Certainties  = []string{"Observed", "Likely", "Possible", "Unlikely", "Unknown"}
	ResponseType = []string{"Shelter", "Evacuate", "Prepare", "Execute", "Avoid", "Monitor", "Assess", "AllClear", "None"}
)

// Ref names an earlier message in references.
type Ref struct {
	Sender     string    `json:"sender"`
	Identifier string    `json:"identifier"`
	Sent       time.Time `json:"sent"`
}

// String is the "sender,identifier,sent" form.
func (r Ref) String() string {
	return r.Sender + "," + r.Identifier + "," + r.Sent.UTC().Format(TimeLayout)
}

// Point is a WGS 84 point.
type Point struct {
	Lat float64 `json:"lat"`
	Lng float64 `json:"lng"`
}

// AreaInput describes one area of the alert: the union of its polygons,
// its circle and the places its geocodes name.
type AreaInput struct {
	Description string `json:"description"`
	// Polygons are rings of points; Build closes a ring whose last point
	// is not its first.
	Polygons [][]Point `json:"polygons,omitempty"`
	Center   *Point    `json:"center,omitempty"`
	// RadiusKm is the circle's radius.
	RadiusKm float64 `json:"radiusKm,omitempty"`
	// SAME lists 6-digit SAME (FIPS) location codes.
	SAME []string `json:"same,omitempty"`
	// Geocodes are further valueName/value pairs (e.g. UGC zones).
	Geocodes []NamedValue `json:"geocodes,omitempty"`
}

// Input is what Build needs.
type Input struct {
	Identifier string    `json:"identifier"`
	Sender     string    `json:"sender"`
	Sent       time.Time `json:"sent"`
	Status     string    `json:"status"`
	MsgType    string    `json:"msgType"`
	Scope      string    `json:"scope"`
	References []Ref     `json:"references,omitempty"`
	Note       string    `json:"note,omitempty"`
	// Languages are the languages of the info blocks, one block each
	// with the same texts and areas; one en-US block when empty.
	Languages []string `json:"languages,omitempty"`
	Classification
	// EventCode is the three-letter SAME event code (e.g. CEM, EVI, SPW).
	EventCode string    `json:"eventCode,omitempty"`
	Expires   time.Time `json:"expires,omitzero"`
	Wording
	Parameters []NamedValue `json:"parameters,omitempty"`
	Resources  []Resource   `json:"resources,omitempty"`
	Areas      []AreaInput  `json:"areas"`
}

// MaxPoints bounds the coordinate pairs of a document: every polygon's
// pairs and one per circle, in each of its info blocks. It keeps a
// document within what a CAP endpoint takes in one request (some hundred
// kilobytes); Points counts them.
const MaxPoints = 10000

// DefaultLanguage is the language of an info block when the input names none.
const DefaultLanguage = "en-US"

var (
	// identifiers and senders: no spaces, commas or markup characters.
	idPattern   = regexp.MustCompile(`^[^\s,<&]+$`)
	samePattern = regexp.MustCompile(`^[0-9]{6}$`)
	codePattern = regexp.MustCompile(`^[A-Z]{3}$`)
	// what CAP's language (an xs:language) allows
	languagePattern = regexp.MustCompile(`^[a-zA-Z]{1,8}(-[a-zA-Z0-9]{1,8})*$`)
)

// languages are the languages of in's info blocks, each once (tags are
// case-insensitive), in order.
func (in Input) languages() []string {
	var out []string
	for _, l := range in.Languages {
		if !slices.ContainsFunc(out, func(o string) bool { return strings.EqualFold(o, l) }) {
			out = append(out, l)
		}
	}
	if len(out) == 0 {
		out = []string{DefaultLanguage}
	}
	return out
}

// Points is the number of coordinate pairs in's document carries: every
// polygon's, closed, and one per circle, in each info block.
func (in Input) Points() int {
	n := 0
	for _, a := range in.Areas {
		for _, p := range a.Polygons {
			n += len(p)
			if len(p) > 0 && p[0] != p[len(p)-1] {
				n++
			}
		}
		if a.Center != nil {
			n++
		}
	}
	return n * len(in.languages())
}

// Build checks in and returns its CAP document.
func Build(in Input) (*Alert, error) {
	var errs []string
	bad := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	oneOf := func(field, v string, allowed []string) {
		if !slices.Contains(allowed, v) {
			bad("%s %q is not one of %s", field, v, strings.Join(allowed, ", "))
		}
	}
	if !idPattern.MatchString(in.Identifier) {
		bad("identifier %q must be non-empty without spaces, commas, < or &", in.Identifier)
	}
	if !idPattern.MatchString(in.Sender) {
		bad("sender %q must be non-empty without spaces, commas, < or &", in.Sender)
	}
	if in.Sent.IsZero() {
		bad("sent is required")
	}
	oneOf("status", in.Status, Statuses)
	oneOf("msgType", in.MsgType, MsgTypes)
	oneOf("scope", in.Scope, Scopes)
	if (in.MsgType == "Update" || in.MsgType == "Cancel") && len(in.References) == 0 {
		bad("an %s must reference the messages it updates or cancels", in.MsgType)
	}
	if len(in.Category) == 0 {
		bad("at least one category is required")
	}
	for _, c := range in.Category {
		oneOf("category", c, Categories)
	}
	for _, r := range in.ResponseType {
		oneOf("responseType", r, ResponseType)
	}
	if strings.TrimSpace(in.Event) == "" {
		bad("event is required")
	}
	oneOf("urgency", in.Urgency, Urgencies)
	oneOf("severity", in.Severity, Severities)
	oneOf("certainty", in.Certainty, Certainties)
	if in.EventCode != "" && !codePattern.MatchString(in.EventCode) {
		bad("eventCode %q must be a three-letter SAME event code", in.EventCode)
	}
	if !in.Expires.IsZero() && !in.Expires.After(in.Sent) {
		bad("expires must be after sent")
	}
	if len(in.Areas) == 0 {
		bad("at least one area is required")
	}
	if n := in.Points(); n > MaxPoints {
		bad("the areas take %d coordinate pairs, more than %d", n, MaxPoints)
	}
	for _, l := range in.Languages {
		if !languagePattern.MatchString(l) {
			bad("language %q is not a language code (BCP 47)", l)
		}
	}
	a := &Alert{
		Identifier: in.Identifier, Sender: in.Sender, Sent: in.Sent.UTC().Format(TimeLayout),
		Status: in.Status, MsgType: in.MsgType, Scope: in.Scope, Note: in.Note,
	}
	var refs []string
	for _, r := range in.References {
		if !idPattern.MatchString(r.Identifier) || !idPattern.MatchString(r.Sender) || r.Sent.IsZero() {
			bad("reference %+v is incomplete", r)
			continue
		}
		refs = append(refs, r.String())
	}
	a.References = strings.Join(refs, " ")
	info := Info{Classification: in.Classification, Wording: in.Wording,
		Parameter: in.Parameters, Resource: in.Resources}
	if in.EventCode != "" {
		info.EventCode = []NamedValue{{ValueName: "SAME", Value: in.EventCode}}
	}
	if !in.Expires.IsZero() {
		info.Expires = in.Expires.UTC().Format(TimeLayout)
	}
	for i, ar := range in.Areas {
		out := Area{AreaDesc: strings.TrimSpace(ar.Description), Geocode: ar.Geocodes}
		if out.AreaDesc == "" {
			bad("areas[%d].description is required", i)
		}
		for j, ring := range ar.Polygons {
			p, err := polygon(ring)
			if err != nil {
				bad("areas[%d].polygons[%d]: %v", i, j, err)
			}
			out.Polygon = append(out.Polygon, p)
		}
		if ar.Center != nil {
			if !validPoint(*ar.Center) || ar.RadiusKm < 0 {
				bad("areas[%d]: the circle needs a valid centre and a radius of zero or more km", i)
			}
			out.Circle = []string{coord(*ar.Center) + " " + num(ar.RadiusKm)}
		}
		for _, s := range ar.SAME {
			if !samePattern.MatchString(s) {
				bad("areas[%d]: SAME code %q must be six digits", i, s)
			}
			out.Geocode = append(out.Geocode, NamedValue{ValueName: "SAME", Value: s})
		}
		if len(out.Polygon) == 0 && len(out.Circle) == 0 && len(out.Geocode) == 0 {
			bad("areas[%d] needs a polygon, a circle or geocodes", i)
		}
		info.Area = append(info.Area, out)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("invalid CAP alert: %s", strings.Join(errs, "; "))
	}
	for _, l := range in.languages() {
		info.Language = l
		a.Info = append(a.Info, info)
	}
	return a, nil
}

func validPoint(p Point) bool { return p.Lat >= -90 && p.Lat <= 90 && p.Lng >= -180 && p.Lng <= 180 }

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func coord(p Point) string { return num(p.Lat) + "," + num(p.Lng) }

// polygon is CAP's "lat,lng lat,lng ..." with the first point repeated last.
func polygon(pts []Point) (string, error) {
	if len(pts) > 0 && pts[0] != pts[len(pts)-1] {
		pts = append(slices.Clone(pts), pts[0])
	}
	if len(pts) < 4 {
		return "", fmt.Errorf("needs at least three distinct points")
	}
	parts := make([]string, len(pts))
	for i, p := range pts {
		if !validPoint(p) {
			return "", fmt.Errorf("point %d is outside -90..90, -180..180", i)
		}
		parts[i] = coord(p)
	}
	return strings.Join(parts, " "), nil
}

// Marshal returns the document with an XML declaration.
func Marshal(a *Alert) ([]byte, error) {
	b, err := xml.MarshalIndent(a, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode CAP: %w", err)
	}
	return append([]byte(xml.Header), append(b, '\n')...), nil
}

// Parse reads a CAP 1.2 document.
func Parse(b []byte) (*Alert, error) {
	var a Alert
	if err := xml.Unmarshal(b, &a); err != nil {
		return nil, fmt.Errorf("decode CAP: %w", err)
	}
	return &a, nil
}
