package etn

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/lib/pq"

	"github.com/tocsin/tocsin/storage"
)

// LatLng is a point in WGS 84 degrees.
type LatLng struct {
	Lat float64 `json:"lat"`
	Lng float64 `json:"lng"`
}

// Area is where an ETN alert calls: a polygon (three or more points) or a
// circle (centre and radius in metres).
type Area struct {
	Polygon      []LatLng `json:"polygon,omitempty"`
	Center       *LatLng  `json:"center,omitempty"`
	RadiusMeters float64  `json:"radiusMeters,omitempty"`
}

// Validate checks the area.
func (a Area) Validate() error {
	switch {
	case len(a.Polygon) > 0 && a.Center != nil:
		return fmt.Errorf("an area is a polygon or a circle, not both")
	case len(a.Polygon) > 0:
		if len(a.Polygon) < 3 {
			return fmt.Errorf("a polygon needs at least three points")
		}
		for _, p := range a.Polygon {
			if err := p.valid(); err != nil {
				return err
			}
		}
	case a.Center != nil:
		if err := a.Center.valid(); err != nil {
			return err
		}
		if a.RadiusMeters <= 0 || a.RadiusMeters > 500_000 {
			return fmt.Errorf("radiusMeters must be in (0, 500000]")
		}
	default:
		return fmt.Errorf("an area needs a polygon or a circle")
	}
	return nil
}

func (p LatLng) valid() error {
	if p.Lat < -90 || p.Lat > 90 || p.Lng < -180 || p.Lng > 180 {
		return fmt.Errorf("point (%g, %g) is outside latitude -90..90, longitude -180..180", p.Lat, p.Lng)
	}
	return nil
}

// Condition returns an SQL condition that is true for rows whose latCol and
// lngCol lie inside the area; its one parameter is $n with value arg. A
// polygon uses PostgreSQL's built-in polygon containment on (lng, lat); a
// circle the haversine distance after a bounding-box test the
// (tenant_id, latitude, longitude) indexes serve.
func (a Area) Condition(latCol, lngCol string, n int) (string, any) {
	if len(a.Polygon) > 0 {
		var b strings.Builder
		b.WriteString("(")
		for i, p := range a.Polygon {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, "(%s,%s)", strconv.FormatFloat(p.Lng, 'f', -1, 64), strconv.FormatFloat(p.Lat, 'f', -1, 64))
		}
		b.WriteString(")")
		return fmt.Sprintf("$%d::polygon @> point(%s, %s)", n, lngCol, latCol), b.String()
	}
	arr := fmt.Sprintf("{%s,%s,%s}", strconv.FormatFloat(a.Center.Lat, 'f', -1, 64), strconv.FormatFloat(a.Center.Lng, 'f', -1, 64), strconv.FormatFloat(a.RadiusMeters, 'f', -1, 64))
	p := fmt.Sprintf("($%d::float8[])", n)
	// Degrees of latitude per metre: 1/111320; longitude shrinks with cos(lat).
	cond := fmt.Sprintf(`(%[1]s BETWEEN %[3]s[1] - %[3]s[3] / 111320.0 AND %[3]s[1] + %[3]s[3] / 111320.0
		AND %[2]s BETWEEN %[3]s[2] - %[3]s[3] / (111320.0 * greatest(cos(radians(%[3]s[1])), 0.01))
			AND %[3]s[2] + %[3]s[3] / (111320.0 * greatest(cos(radians(%[3]s[1])), 0.01))
		AND 2 * 6371008.8 * asin(sqrt(power(sin(radians(%[1]s - %[3]s[1]) / 2), 2)
			+ cos(radians(%[3]s[1])) * cos(radians(%[1]s)) * power(sin(radians(%[2]s - %[3]s[2]) / 2), 2))) <= %[3]s[3])`,
		latCol, lngCol, p)
	return cond, arr
}

// Target is a phone number inside an area.
type Target struct {
	Phone string `db:"phone"`
	// Source is "contact" or "addressPoint".
	Source    string  `db:"source"`
	PersonID  *int64  `db:"person_id"`
	Name      string  `db:"name"`
	Latitude  float64 `db:"latitude"`
	Longitude float64 `db:"longitude"`
}

// TargetsSQL returns a query of the distinct phone numbers of tenant ($1)
// inside the area ($2): contacts' callable phones at their locations and the
// points of the named address-point lists ($3, text[]). Its columns are
// those of Target; callers page it or INSERT ... SELECT from it.
func TargetsSQL(a Area) (query string, areaArg any) {
	cl, arg := a.Condition("l.latitude", "l.longitude", 2)
	cp, _ := a.Condition("ap.latitude", "ap.longitude", 2)
	return `SELECT DISTINCT ON (phone) phone, source, person_id, name, latitude, longitude FROM (
		SELECT p.number AS phone, 'contact' AS source, pe.id AS person_id,
			trim(pe.first_name || ' ' || pe.last_name) AS name, l.latitude, l.longitude, 0 AS pref
		FROM person_locations l
		JOIN people pe ON pe.id = l.person_id AND pe.tenant_id = $1
		JOIN person_phones p ON p.person_id = l.person_id AND p.tenant_id = $1 AND p.can_call
		WHERE l.tenant_id = $1 AND ` + cl + `
		UNION ALL
		SELECT ap.phone, 'addressPoint', NULL, ap.name, ap.latitude, ap.longitude, 1
		FROM etn_address_points ap
		WHERE ap.tenant_id = $1 AND ap.list_name = ANY($3::text[]) AND ` + cp + `
	) t ORDER BY phone, pref`, arg
}

// Targets returns up to limit targets of the area whose phone sorts after
// after, for paging through large areas.
func Targets(ctx context.Context, db *storage.DB, tenant string, a Area, lists []string, after string, limit int) ([]Target, error) {
	if err := a.Validate(); err != nil {
		return nil, err
	}
	q, arg := TargetsSQL(a)
	var out []Target
	err := db.SelectContext(ctx, &out, `SELECT * FROM (`+q+`) x WHERE phone > $4 ORDER BY phone LIMIT $5`,
		tenant, arg, pq.Array(lists), after, limit)
	if err != nil {
		return nil, fmt.Errorf("select etn targets: %w", err)
	}
	return out, nil
}
