package activities

import "testing"

// The orphan sweep empties only the prefix of one upload of the claim's
// tenant: a file's or the attachment of one alert, never a prefix that
// holds other objects.
func TestIsUploadPrefix(t *testing.T) {
	t.Parallel()
	for prefix, want := range map[string]bool{
		"tenants/7/files/3f2a/":                  true,
		"tenants/7/alerts/12/":                   true,
		"tenants/7/alerts/12-k3x7q2ab/":          true,
		"tenants/7/alerts/12-k3x7q2a/":           false,
		"tenants/7/alerts/12-K3X7Q2AB/":          false,
		"tenants/7/alerts/12-/":                  false,
		"tenants/7/alerts/12-k3x7q2ab-k3x7q2ab/": false,
		"tenants/7/alerts/12-k3x7q2ab/x/":        false,
		"tenants/7/alerts/-k3x7q2ab/":            false,
		"tenants/7/alerts/12":                    false, // also alerts/120/…
		"tenants/7/alerts/":                      false,
		"tenants/7/alerts/+12/":                  false,
		"tenants/7/alerts/012/":                  false,
		"tenants/7/alerts/12/x/":                 false,
		"tenants/7/alerts/x/":                    false,
		"tenants/7/files/":                       false,
		"tenants/7/files/../":                    false,
		"tenants/7/files/a/b/":                   false,
		"tenants/8/alerts/12/":                   false,
		"tenants/7/other/12/":                    false,
		"tenants/7/alerts/12/../13/":             false,
	} {
		if got := isUploadPrefix("7", prefix); got != want {
			t.Errorf("isUploadPrefix(7, %q) = %v, want %v", prefix, got, want)
		}
	}
}
