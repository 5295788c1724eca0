package directory

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/tocsin/tocsin/api/directory/directoryservice"
	"github.com/tocsin/tocsin/api/model"
	"github.com/tocsin/tocsin/api/rest"
	"github.com/tocsin/tocsin/storage"
	store "github.com/tocsin/tocsin/storage/directory"
)

// DevicePath adds a device to the user path.
type DevicePath struct {
	UserPath
	DeviceID string `path:"deviceId" maxLength:"20" pattern:"^(0|[1-9][0-9]*)$" doc:"The device's id (ContactInformationDevice.id)." example:"7"`
}

// registerDevices adds the operations that register push devices: the push
// channel reaches every device of app push a user has. MyAlertsApp devices
// come from the user's mobileApps instead.
func (h *handlers) registerDevices(api huma.API) {
	const devices = "/{tenantId}/directory/{directoryId}/users/{userId}/contact/devices"
	rest.Register(api, op("usersCreateNewDevice", http.MethodPost, devices, http.StatusCreated, "Register a push device",
		"Registers a device token for the push channel (app push): alerts on push then notify it. "+
			"The token is unique among the tenant's push devices: one registered already (to this user or another) is a 409. "+
			"Devices of the alerts app (app myalerts) are registered through the user's mobileApps instead."+
			limitDoc(storage.MaxDevicesPerPerson, "devices (push devices and the mobileApps' push tokens together)"), http.StatusConflict),
		func(ctx context.Context, in *userWith[model.CreateDeviceCommand]) (*rest.Output[model.ContactInformationDevice], error) {
			token := strings.TrimSpace(in.Body.Token)
			if token != in.Body.Token || strings.ContainsAny(token, "\r\n\t ") {
				return nil, rest.Invalid("body", "token", "a push token has no spaces or line breaks", in.Body.Token)
			}
			return addToUser(ctx, h, in.UserPath, "the push token is registered already",
				func(u directoryservice.User) (model.ContactInformationDevice, error) {
					d, err := h.users.AddPushDevice(ctx, u, in.Body.Platform, token)
					return deviceOf(d), overLimit(err, "token")
				})
		})

	const device = devices + "/{deviceId}"
	rest.Register(api, op("usersGetDevice", http.MethodGet, device, 0, "Read a device",
		"Answers one of the user's devices, of app push or myalerts."),
		func(ctx context.Context, in *DevicePath) (*rest.Output[model.ContactInformationDevice], error) {
			return readChild(ctx, h, in.UserPath, in.DeviceID, "device", func(u directoryservice.User, dev int64) (model.ContactInformationDevice, error) {
				d, err := store.GetDevice(ctx, h.d.DB, u.Tenant, u.ID, dev)
				return deviceOf(d), err
			})
		})

	rest.Register(api, op("usersRemoveDevice", http.MethodDelete, device, http.StatusNoContent, "Remove a push device",
		"Removes one of the user's push devices; alerts on push no longer notify it. "+
			"A device of the alerts app is a 409: remove it from the user's mobileApps.", http.StatusConflict),
		func(ctx context.Context, in *DevicePath) (*struct{}, error) {
			return h.removeOfUser(ctx, in.UserPath, in.DeviceID, "device", func(u directoryservice.User, dev int64) error {
				err := h.users.RemovePushDevice(ctx, u, dev)
				if errors.Is(err, directoryservice.ErrAppDevice) {
					return rest.Conflict("the device belongs to the alerts app: remove it from the user's mobileApps")
				}
				return err
			})
		})
}
