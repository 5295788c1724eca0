package directory

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/danielgtaylor/huma/v2"

	"github.com/tocsin/tocsin/api/directory/directoryservice"
	"github.com/tocsin/tocsin/api/model"
	"github.com/tocsin/tocsin/api/rest"
	"github.com/tocsin/tocsin/internal/auth"
	"github.com/tocsin/tocsin/storage"
	store "github.com/tocsin/tocsin/storage/directory"
)

// preferences reads the user's memberships, locations and weather subscriptions.
func (h *handlers) preferences(ctx context.Context, tenant string, id int64) (model.NotificationPreferencesSummary, error) {
	s := model.NotificationPreferencesSummary{UserID: strconv.FormatInt(id, 10)}
	groups, total, err := store.Memberships(ctx, h.d.DB, tenant, id)
	if err != nil {
		return s, err
	}
	locs, err := store.ListLocations(ctx, h.d.DB, tenant, id)
	if err != nil {
		return s, err
	}
	weather, err := store.ListWeather(ctx, h.d.DB, tenant, id)
	if err != nil {
		return s, err
	}
	s.Memberships = model.GroupMemberships{Items: groupRefsOut(groups), Count: int(total)}
	s.Locations = model.LocationCollection{Items: rest.Items(locs, locationOut), Count: len(locs)}
	s.WeatherNotifications = model.WeatherNotificationCollection{Items: weatherOut(weather), Count: len(weather)}
	return s, nil
}

// LocationPath adds a location of the user.
type LocationPath struct {
	UserPath
	LocationID string `path:"locationId" maxLength:"20" pattern:"^(0|[1-9][0-9]*)$" doc:"The location's id." example:"311"`
}

func (h *handlers) registerNotifications(api huma.API) {
	const base = "/{tenantId}/directory/{directoryId}/users/{userId}/notifications"
	rest.Register(api, op("usersGetNotificationPreferencesById", http.MethodGet, base, 0, "Read a user's notification preferences",
		"Answers the user's group memberships, locations and weather subscriptions together. "+
			fmt.Sprintf("Each is whole: a user has at most %d direct group memberships, %d locations and %d weather subscriptions. ", storage.MaxGroupsPerPerson, storage.MaxLocationsPerPerson, storage.MaxWeatherPerPerson)+
			"memberships.count counts every membership: a user given more groups before that limit existed has the first by path listed, and a count above the items says so."),
		func(ctx context.Context, in *UserPath) (*rest.Output[model.NotificationPreferencesSummary], error) {
			return readOfUser(ctx, h, *in, nil, "user", func(u directoryservice.User) (model.NotificationPreferencesSummary, error) {
				return h.preferences(ctx, u.Tenant, u.ID)
			})
		})

	rest.Register(api, op("usersCreateGroupMembership", http.MethodPost, base+"/memberships", http.StatusNoContent, "Join a group",
		"Makes the user a direct member of the group whose id is the body (a JSON string), so the user receives notifications sent to it. "+
			"The group must exist (404). A token with only the directory:public scope joins as the user: the group must be public and the user's self-service settings must allow joins (403 otherwise). "+
			"A token that also has the tamarack scope (an alerting administrator's) adds the user to any group of the tenant, public or not, whatever the user's settings. Already a member is a 409."+
			limitDoc(storage.MaxGroupsPerPerson, "direct group memberships"),
		http.StatusConflict),
		func(ctx context.Context, in *userWith[model.CreateGroupMembership]) (*struct{}, error) {
			// The same id the group's paths take (DELETE …/memberships/{groupId}).
			gid, err := store.ParseID(string(in.Body))
			if err != nil {
				return nil, rest.Invalid("body", "", "not a group id: give the group's id as it is written, without leading zeros", string(in.Body))
			}
			u, err := in.user(ctx)
			if err != nil {
				return nil, err
			}
			err = h.users.JoinGroup(ctx, u, gid, rest.Caller(ctx).HasScope(auth.ScopeTamarack))
			switch {
			case errors.Is(err, directoryservice.ErrGroupNotFound):
				return nil, rest.NotFound("group")
			case errors.Is(err, directoryservice.ErrGroupNotPublic):
				return nil, rest.Problem(http.StatusForbidden, "the group is not public: users cannot join it themselves")
			case errors.Is(err, directoryservice.ErrJoinNotAllowed):
				return nil, rest.Problem(http.StatusForbidden, "the user's self-service settings do not allow joining groups")
			case errors.Is(err, directoryservice.ErrAlreadyMember):
				return nil, rest.Conflict("the user is already a member of the group")
			}
			return nil, h.fail(ctx, overLimit(err, ""), "user")
		})

	rest.Register(api, op("usersRemoveGroupMembership", http.MethodDelete, base+"/memberships/{groupId}", http.StatusNoContent, "Leave a group",
		"Ends the user's direct membership of the group; a 404 when the user is not a member."),
		func(ctx context.Context, in *struct {
			UserPath
			GroupID string `path:"groupId" maxLength:"20" pattern:"^(0|[1-9][0-9]*)$" doc:"The group's id." example:"42"`
		}) (*struct{}, error) {
			return h.removeOfUser(ctx, in.UserPath, in.GroupID, "membership", func(u directoryservice.User, gid int64) error {
				return h.users.LeaveGroup(ctx, u, gid)
			})
		})

	rest.Register(api, op("usersCreateNewLocation", http.MethodPost, base+"/locations", http.StatusCreated, "Add a location",
		"Adds a place the user wants notifications for; geo-targeted alerts match against it. The answer's Location header names the new location "+
			"(and X-Location-Id its id). Coordinates out of range are a 400."+limitDoc(storage.MaxLocationsPerPerson, "locations"), http.StatusConflict),
		func(ctx context.Context, in *userWith[model.CreateLocationCommand]) (*struct {
			Location   string `header:"Location" doc:"The new location's address."`
			LocationID string `header:"X-Location-Id" doc:"The new location's id."`
		}, error) {
			name, err := rest.Name("body", "name", in.Body.Name, "must not be blank")
			if err != nil {
				return nil, err
			}
			in.Body.Name = name
			u, err := in.user(ctx)
			if err != nil {
				return nil, err
			}
			lid, err := h.users.AddLocation(ctx, u, locationIn(in.Body))
			if err != nil {
				return nil, h.fail(ctx, overLimit(err, ""), "user")
			}
			return &struct {
				Location   string `header:"Location" doc:"The new location's address."`
				LocationID string `header:"X-Location-Id" doc:"The new location's id."`
			}{
				Location:   fmt.Sprintf("/%s/directory/%s/users/%s/notifications/locations/%d", in.TenantID, in.DirectoryID, in.UserID, lid),
				LocationID: strconv.FormatInt(lid, 10),
			}, nil
		})

	rest.Register(api, op("usersGetLocation", http.MethodGet, base+"/locations/{locationId}", 0, "Read a location", "Answers one of the user's locations."),
		func(ctx context.Context, in *LocationPath) (*rest.Output[model.Location], error) {
			return readChild(ctx, h, in.UserPath, in.LocationID, "location", func(u directoryservice.User, lid int64) (model.Location, error) {
				l, err := store.GetLocation(ctx, h.d.DB, u.Tenant, u.ID, lid)
				return locationOut(l), err
			})
		})

	rest.Register(api, op("usersRemoveLocation", http.MethodDelete, base+"/locations/{locationId}", http.StatusNoContent, "Remove a location",
		"Removes one of the user's locations with the weather subscriptions for it."),
		func(ctx context.Context, in *LocationPath) (*struct{}, error) {
			return h.removeOfUser(ctx, in.UserPath, in.LocationID, "location", func(u directoryservice.User, lid int64) error {
				return h.users.RemoveLocation(ctx, u, lid)
			})
		})

	rest.Register(api, op("usersAddWeatherNotifications", http.MethodPost, base+"/weather", http.StatusNoContent, "Subscribe to weather notifications",
		"Adds channels for weather categories (ids from metaGetWeatherCategories), for all the user's locations or one of them; channels already there stay."+
			limitDoc(storage.MaxWeatherPerPerson, "weather subscriptions (one per category and location, or all locations)"), http.StatusConflict),
		func(ctx context.Context, in *userWith[model.AddWeatherNotificationsCommand]) (*struct{}, error) {
			return nil, h.changeWeather(ctx, in.UserPath, in.Body.Notifications, true)
		})

	rest.Register(api, op("usersGetWeatherNotifications", http.MethodGet, base+"/weather", 0, "List weather notifications",
		"Answers the user's weather subscriptions."),
		func(ctx context.Context, in *UserPath) (*rest.Output[model.WeatherNotificationCollection], error) {
			return readOfUser(ctx, h, *in, nil, "user", func(u directoryservice.User) (model.WeatherNotificationCollection, error) {
				items, err := store.ListWeather(ctx, h.d.DB, u.Tenant, u.ID)
				return model.WeatherNotificationCollection{Items: weatherOut(items), Count: len(items)}, err
			})
		})

	rest.Register(api, op("usersRemoveWeatherNotifications", http.MethodDelete, base+"/weather", http.StatusNoContent, "Unsubscribe from weather notifications",
		"Removes the channels given for each category (the whole category when no channels are given); a subscription left without channels ends. "+
			"A 404 when none of the subscriptions named exists."),
		func(ctx context.Context, in *userWith[model.RemoveWeatherNotificationsCommand]) (*struct{}, error) {
			return nil, h.changeWeather(ctx, in.UserPath, in.Body.Notifications, false)
		})
}

// changeWeather adds the channels of the commands to the weather
// subscriptions of the user of the path, or removes them; removing none is
// a 404.
func (h *handlers) changeWeather(ctx context.Context, p UserPath, cmds []model.WeatherNotificationCommand, add bool) error {
	u, err := p.user(ctx)
	if err != nil {
		return err
	}
	change := h.users.RemoveWeather
	if add {
		change = h.users.AddWeather
	}
	err = change(ctx, u, weatherChanges(cmds, add))
	if errors.Is(err, directoryservice.ErrNoWeather) {
		return rest.NotFound("weather notification")
	}
	return h.fail(ctx, overLimit(err, "notifications"), "user")
}

// weatherChanges checks the commands (known categories, channels for an
// add, locations of the user) and makes them the changes.
func weatherChanges(cmds []model.WeatherNotificationCommand, adding bool) directoryservice.WeatherChanges {
	return func(locationOf directoryservice.LocationOf) ([]store.WeatherChange, error) {
		out := make([]store.WeatherChange, 0, len(cmds))
		for i, c := range cmds {
			field := fmt.Sprintf("notifications[%d]", i)
			if weatherCategoryName(c.Category) == "" {
				return nil, rest.Invalid("body", field+".category", "not a category of metaGetWeatherCategories", c.Category)
			}
			if adding && len(c.Channels) == 0 {
				return nil, rest.Invalid("body", field+".channels", "at least one channel is required", nil)
			}
			ch := store.WeatherChange{Category: c.Category}
			for _, w := range c.Channels {
				ch.Channels = append(ch.Channels, string(w))
			}
			if c.LocationID != "" {
				lid, err := locationOf(c.LocationID)
				if errors.Is(err, storage.ErrNotFound) {
					return nil, rest.Invalid("body", field+".locationId", "not a location of the user", c.LocationID)
				}
				if err != nil {
					return nil, err
				}
				ch.Location = lid
			}
			out = append(out, ch)
		}
		return out, nil
	}
}
