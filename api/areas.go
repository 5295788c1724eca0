package api

import (
	"github.com/danielgtaylor/huma/v2"

	"github.com/tocsin/tocsin/api/alerting"
	"github.com/tocsin/tocsin/api/delivery"
	"github.com/tocsin/tocsin/api/directory"
	"github.com/tocsin/tocsin/api/files"
	"github.com/tocsin/tocsin/api/recipients"
	"github.com/tocsin/tocsin/api/rest"
	"github.com/tocsin/tocsin/api/subscriptions"
)

// registerAreas adds the operations of every interface area.
func registerAreas(api huma.API, d rest.Deps) {
	alerting.Register(api, d)
	recipients.Register(api, d)
	files.Register(api, d)
	subscriptions.Register(api, d)
	directory.Register(api, d)
	delivery.Register(api, d)
}
