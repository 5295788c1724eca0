package model

import "time"

// LatLng is a point in WGS 84.
type LatLng struct {
	Lat float64 `json:"lat" minimum:"-90" maximum:"90" doc:"Degrees north." example:"41.8781"`
	Lng float64 `json:"lng" minimum:"-180" maximum:"180" doc:"Degrees east." example:"-87.6298"`
}

// SpatialReference names a coordinate system by its well-known id. tocsin
// accepts WGS 84 only (wkid 4326).
type SpatialReference struct {
	Wkid int `json:"wkid" enum:"4326" doc:"Well-known id of the coordinate system; only 4326 (WGS 84)." example:"4326"`
}

// IcrsObject is a GeoJSON (2008) coordinate reference system member.
type IcrsObject struct {
	Type       string            `json:"type" enum:"name" example:"name"`
	Properties map[string]string `json:"properties" doc:"For type name: {\"name\": \"EPSG:4326\"} or the OGC CRS84 URN."`
}

// IGeometryObject is a GeoJSON geometry. tocsin targets Polygon and
// MultiPolygon geometries; coordinates are [longitude, latitude] positions,
// rings closed (first position equals the last) with at least four positions.
type IGeometryObject struct {
	Type        string      `json:"type" enum:"Polygon,MultiPolygon" example:"Polygon"`
	Coordinates rawJSON     `json:"coordinates" doc:"Polygon: an array of linear rings (the first is the outer ring, the others holes). MultiPolygon: an array of polygons. A ring must not cross the antimeridian (two consecutive positions more than 180° of longitude apart): split it in two at ±180 (RFC 7946 3.1.9)." example:"[[[-87.7,41.8],[-87.6,41.8],[-87.6,41.9],[-87.7,41.9],[-87.7,41.8]]]"`
	Crs         *IcrsObject `json:"crs,omitempty" doc:"Only WGS 84 is accepted."`
}

// Feature is a GeoJSON feature.
type Feature struct {
	Type       string          `json:"type" enum:"Feature" example:"Feature"`
	ID         string          `json:"id,omitempty" maxLength:"100"`
	Geometry   IGeometryObject `json:"geometry"`
	Properties map[string]any  `json:"properties,omitempty"`
}

// FeatureCollection is a GeoJSON feature collection.
type FeatureCollection struct {
	Type     string      `json:"type" enum:"FeatureCollection" example:"FeatureCollection"`
	Features []Feature   `json:"features" minItems:"1" maxItems:"50"`
	Crs      *IcrsObject `json:"crs,omitempty" doc:"Only WGS 84 is accepted."`
}

// SelectedArea is a geographic area of an alert: a GeoJSON feature
// collection of polygons, or a circle (center and radius).
type SelectedArea struct {
	Name             string             `json:"name,omitempty" maxLength:"200" example:"Flood zone A"`
	Geometry         *FeatureCollection `json:"geometry,omitempty" doc:"Polygons; give either geometry or center and radiusMeters. An area holds at most 10000 positions, counted over every ring of every polygon of its features; more is a 400 naming the area."`
	Center           *LatLng            `json:"center,omitempty" doc:"Center of a circle."`
	RadiusMeters     float64            `json:"radiusMeters,omitempty" minimum:"1" maximum:"500000" doc:"Radius of the circle in meters (haversine distance)." example:"1500"`
	SpatialReference *SpatialReference  `json:"spatialReference,omitempty"`
}

// SelectedAreaReference points at a saved area.
type SelectedAreaReference struct {
	ID   string `json:"id" maxLength:"100" example:"area-7"`
	Name string `json:"name,omitempty" maxLength:"200" example:"North campus"`
}

// NamedLocation is a named point.
type NamedLocation struct {
	Name    string  `json:"name" minLength:"1" maxLength:"200" example:"Main library"`
	Point   *LatLng `json:"point,omitempty"`
	Address string  `json:"address,omitempty" maxLength:"500" example:"1 Main St, Springfield"`
}

// Facility is a building or site of the tenant.
type Facility struct {
	ID       string  `json:"id" maxLength:"100" example:"fac-12"`
	Name     string  `json:"name" maxLength:"200" example:"North power plant"`
	Address  string  `json:"address,omitempty" maxLength:"500"`
	Location *LatLng `json:"location,omitempty"`
}

// FacilityReference points at a facility.
type FacilityReference struct {
	ID   string `json:"id,omitempty" maxLength:"100" example:"fac-12"`
	Name string `json:"name" minLength:"1" maxLength:"200" doc:"The facility name (the facilityName filter of the sent-alerts list)." example:"North power plant"`
}

// MunicipalCity is a city of a municipal area.
type MunicipalCity struct {
	Code  string `json:"code,omitempty" maxLength:"20" doc:"FIPS or other code." example:"1714000"`
	Name  string `json:"name" minLength:"1" maxLength:"200" example:"Chicago"`
	State string `json:"state,omitempty" maxLength:"50" example:"IL"`
}

// MunicipalArea is a county or district with its cities.
type MunicipalArea struct {
	Code   string          `json:"code,omitempty" maxLength:"20" doc:"SAME/FIPS code." example:"017031"`
	Name   string          `json:"name" minLength:"1" maxLength:"200" example:"Cook County"`
	Cities []MunicipalCity `json:"cities,omitempty" maxItems:"200"`
}

// IncidentCategory is the CAP category of an incident.
type IncidentCategory struct {
	Code string `json:"code" enum:"Geo,Met,Safety,Security,Rescue,Fire,Health,Env,Transport,Infra,CBRNE,Other" example:"Met"`
	Name string `json:"name,omitempty" maxLength:"100" example:"Weather"`
}

// IncidentType is the kind of incident.
type IncidentType struct {
	Code string `json:"code" minLength:"1" maxLength:"50" example:"winter-storm"`
	Name string `json:"name,omitempty" maxLength:"100" example:"Winter storm"`
}

// IncidentEvent is what happened.
type IncidentEvent struct {
	Code       string     `json:"code,omitempty" maxLength:"50" doc:"Event code, such as an EAS event code." example:"WSW"`
	Name       string     `json:"name" minLength:"1" maxLength:"200" example:"Heavy snowfall"`
	Severity   string     `json:"severity,omitempty" enum:"Extreme,Severe,Moderate,Minor,Unknown" example:"Severe"`
	OccurredAt *time.Time `json:"occurredAt,omitempty"`
}

// PriorityOption describes a priority a tenant may choose.
type PriorityOption struct {
	Priority    PriorityType `json:"priority"`
	Name        string       `json:"name" example:"Emergency"`
	Description string       `json:"description" example:"Life-safety alerts; devices may sound a loud tone."`
	LoudTone    bool         `json:"loudTone" doc:"Whether the loud tone is on by default for this priority."`
}
