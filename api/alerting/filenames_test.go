package alerting

import (
	"reflect"
	"slices"
	"testing"

	"github.com/tocsin/tocsin/alert"
	"github.com/tocsin/tocsin/channels/catalog"
)

// TestStoredFileNamesCoverTheCatalog: every file a channel block names, as
// catalog.NamedFiles finds it, is among storedFileNames, so its name is
// put in NFC like the attachments'.
func TestStoredFileNamesCoverTheCatalog(t *testing.T) {
	c := &alert.Channels{}
	v := reflect.ValueOf(c).Elem()
	for i := 0; i < v.NumField(); i++ {
		block := reflect.New(v.Field(i).Type().Elem())
		b := block.Elem()
		for j := 0; j < b.NumField(); j++ {
			if b.Field(j).Kind() == reflect.String {
				b.Field(j).SetString(v.Type().Field(i).Name + "." + b.Type().Field(j).Name)
			}
		}
		v.Field(i).Set(block)
	}
	var names []string
	for _, n := range storedFileNames(&alert.Settings{Channels: c}) {
		names = append(names, *n)
	}
	named := catalog.NamedFiles(c)
	if len(named) == 0 {
		t.Fatal("the catalog names no files")
	}
	for _, n := range named {
		if !slices.Contains(names, n.Name) {
			t.Errorf("%s (%s) is not among storedFileNames %v", n.Field, n.Name, names)
		}
	}
}
