package directory

import (
	"fmt"
	"time"
	_ "time/tzdata" // the time-zone list must not depend on the host's zoneinfo

	"golang.org/x/text/language"
	"golang.org/x/text/language/display"

	"github.com/tocsin/tocsin/api/model"
	"github.com/tocsin/tocsin/internal/locale"
)

// languages lists the languages tocsin translates into: written for email,
// text and app messages, spoken for voice calls.
var languages = func() []model.LanguageCode {
	spec := []struct {
		code            string
		written, spoken bool
	}{
		{"am", true, false}, {"ar", true, true}, {"bn", true, true}, {"de", true, true}, {"el", true, true},
		{"en", true, true}, {"es", true, true}, {"fa", true, true}, {"fr", true, true}, {"he", true, true},
		{"hi", true, true}, {"ht", true, false}, {"it", true, true}, {"ja", true, true}, {"ko", true, true},
		{"nl", true, true}, {"pa", true, false}, {"pl", true, true}, {"pt", true, true}, {"ru", true, true},
		{"so", true, false}, {"sw", true, false}, {"th", true, true}, {"tl", true, true}, {"tr", true, true},
		{"uk", true, true}, {"ur", true, true}, {"vi", true, true}, {"zh-Hans", true, true}, {"zh-Hant", true, true},
	}
	// Names the display tables lack.
	native := map[string]string{"ht": "Kreyòl ayisyen"}
	out := make([]model.LanguageCode, 0, len(spec))
	for _, s := range spec {
		tag := language.MustParse(s.code)
		l := model.LanguageCode{
			Code: s.code, Name: display.English.Tags().Name(tag), NativeName: display.Self.Name(tag),
			Written: s.written, Spoken: s.spoken,
		}
		if l.NativeName == "" {
			l.NativeName = native[s.code]
		}
		if l.NativeName == "" {
			l.NativeName = l.Name
		}
		out = append(out, l)
	}
	return out
}()

// zoneNames are the zones metaGetTimeZones lists: the canonical ones.
var zoneNames = locale.CanonicalZones()

// timeZones returns the listed zones with their offsets at now.
func timeZones(now time.Time) []model.TimeZoneSummary {
	out := make([]model.TimeZoneSummary, 0, len(zoneNames))
	for _, name := range zoneNames {
		loc, err := time.LoadLocation(name)
		if err != nil {
			continue
		}
		t := now.In(loc)
		abbr, off := t.Zone()
		sign := '+'
		if off < 0 {
			sign = '-'
		}
		m := off / 60
		if m < 0 {
			m = -m
		}
		out = append(out, model.TimeZoneSummary{
			ID: name, Abbreviation: abbr, UTCOffset: fmt.Sprintf("%c%02d:%02d", sign, m/60, m%60),
			OffsetMinutes: off / 60, IsDST: t.IsDST(),
		})
	}
	return out
}

// weatherCategories are the weather categories users subscribe to. They
// group the alert events of national weather services (the US National
// Weather Service's event names are given as examples; Meteoalarm and other
// CAP feeds map onto the same groups).
var weatherCategories = []model.WeatherCategoryInformation{
	{ID: "Tornado", Name: "Tornado", Description: "Tornadoes and waterspouts.", Events: []string{"Tornado Warning", "Tornado Watch", "Extreme Wind Warning"}},
	{ID: "SevereThunderstorm", Name: "Severe thunderstorm", Description: "Severe thunderstorms with damaging wind or large hail.", Events: []string{"Severe Thunderstorm Warning", "Severe Thunderstorm Watch", "Special Weather Statement"}},
	{ID: "Flood", Name: "Flood", Description: "River and areal flooding, and flash floods.", Events: []string{"Flash Flood Warning", "Flood Warning", "Flood Watch", "Flood Advisory"}},
	{ID: "CoastalFlood", Name: "Coastal flood and storm surge", Description: "Coastal and lakeshore flooding, storm surge, high surf.", Events: []string{"Coastal Flood Warning", "Storm Surge Warning", "High Surf Warning", "Lakeshore Flood Warning"}},
	{ID: "TropicalCyclone", Name: "Hurricane and tropical storm", Description: "Hurricanes, typhoons and tropical storms.", Events: []string{"Hurricane Warning", "Hurricane Watch", "Tropical Storm Warning", "Typhoon Warning"}},
	{ID: "WinterStorm", Name: "Winter storm", Description: "Snow, blizzards, ice and freezing rain.", Events: []string{"Winter Storm Warning", "Blizzard Warning", "Ice Storm Warning", "Winter Weather Advisory", "Lake Effect Snow Warning"}},
	{ID: "ExtremeCold", Name: "Extreme cold", Description: "Dangerous cold and wind chill, freezes.", Events: []string{"Extreme Cold Warning", "Cold Weather Advisory", "Freeze Warning", "Hard Freeze Warning"}},
	{ID: "ExtremeHeat", Name: "Extreme heat", Description: "Dangerous heat.", Events: []string{"Extreme Heat Warning", "Heat Advisory", "Excessive Heat Warning"}},
	{ID: "HighWind", Name: "High wind", Description: "Damaging winds not tied to thunderstorms.", Events: []string{"High Wind Warning", "Wind Advisory", "Gale Warning"}},
	{ID: "FireWeather", Name: "Fire weather", Description: "Weather that favours wildfires.", Events: []string{"Red Flag Warning", "Fire Weather Watch", "Fire Warning"}},
	{ID: "DenseFog", Name: "Dense fog and smoke", Description: "Visibility hazards.", Events: []string{"Dense Fog Advisory", "Dense Smoke Advisory"}},
	{ID: "DustStorm", Name: "Dust storm", Description: "Blowing dust and dust storms.", Events: []string{"Dust Storm Warning", "Blowing Dust Advisory"}},
	{ID: "AirQuality", Name: "Air quality", Description: "Unhealthy air.", Events: []string{"Air Quality Alert", "Air Stagnation Advisory"}},
	{ID: "Tsunami", Name: "Tsunami", Description: "Tsunamis.", Events: []string{"Tsunami Warning", "Tsunami Watch", "Tsunami Advisory"}},
	{ID: "Avalanche", Name: "Avalanche", Description: "Avalanche danger.", Events: []string{"Avalanche Warning", "Avalanche Watch"}},
}

// weatherCategoryName returns a category's display name ("" when unknown).
func weatherCategoryName(id string) string {
	for _, c := range weatherCategories {
		if c.ID == id {
			return c.Name
		}
	}
	return ""
}
