package alerting

import (
	"encoding/json"
	"fmt"

	"github.com/tocsin/tocsin/alert"
	"github.com/tocsin/tocsin/api/model"
)

// settingsOf maps the settings an alert is sent with (the API's form) to
// the settings the alert stores and is delivered by. The two have the same
// JSON form, field for field (TestSettingsMatchTheModel), so the mapping
// goes through it: what was stored before alert.Settings existed decodes
// the same way.
func settingsOf(m model.AlertSettings) (alert.Settings, error) {
	var s alert.Settings
	err := mapSettings(m, &s)
	return s, err
}

// settingsModel maps an alert's settings back to the API's form.
func settingsModel(s *alert.Settings) (model.AlertSettings, error) {
	var m model.AlertSettings
	err := mapSettings(s, &m)
	return m, err
}

// mapSettings copies from into to through their shared JSON form.
func mapSettings(from, to any) error {
	b, err := json.Marshal(from)
	if err == nil {
		err = json.Unmarshal(b, to)
	}
	if err != nil {
		return fmt.Errorf("map settings: %w", err)
	}
	return nil
}
