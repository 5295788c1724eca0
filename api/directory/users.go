package directory

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/tocsin/tocsin/api/directory/directoryservice"
	"github.com/tocsin/tocsin/api/model"
	"github.com/tocsin/tocsin/api/rest"
	"github.com/tocsin/tocsin/internal/locale"
	"github.com/tocsin/tocsin/internal/names"
	"github.com/tocsin/tocsin/storage"
	store "github.com/tocsin/tocsin/storage/directory"
)

type profileOutput struct {
	Location string `header:"Location" doc:"The user's address."`
	Body     model.UserProfile
}

func (h *handlers) registerUsers(api huma.API) {
	const users = "/{tenantId}/directory/{directoryId}/users"
	rest.Register(api, op("usersCreate", http.MethodPost, users, http.StatusCreated, "Create a user",
		"Creates a user profile in the directory. A duplicate external id within the directory is a 409.", http.StatusConflict),
		func(ctx context.Context, in *struct {
			DirPath
			Body model.CreateUserProfileCommand
		}) (*profileOutput, error) {
			dir, err := in.newDir()
			if err != nil {
				return nil, err
			}
			u, err := newUser(in.Body.Name, in.Body.PreferredLanguage, in.Body.TimeZone, in.Body.MobileApps, nil)
			if err != nil {
				return nil, err
			}
			if ext := in.Body.ExternalID; ext != nil {
				if u.ExternalID, err = rest.Name("body", "externalId", *ext, "must not be blank: leave it out for none"); err != nil {
					return nil, err
				}
			}
			u.SelfService = store.SelfService(model.DefaultSelfService)
			if in.Body.SelfService != nil {
				u.SelfService = store.SelfService(*in.Body.SelfService)
			}
			tenant := rest.Tenant(ctx)
			id, err := h.users.CreateUser(ctx, tenant, dir, u)
			if err != nil {
				return nil, h.fail(ctx, overLimit(conflict(err, "another user of the directory has this external id, or a push token is registered to another user"), "mobileApps"), "user")
			}
			p, err := h.profile(ctx, tenant, dir, id)
			if err != nil {
				return nil, h.fail(ctx, err, "user")
			}
			return &profileOutput{Location: fmt.Sprintf("/%s/directory/%s/users/%d", tenant, in.DirectoryID, id), Body: p}, nil
		})

	const user = users + "/{userId}"
	rest.Register(api, op("usersGetById", http.MethodGet, user, 0, "Read a user",
		"Answers the user's profile with its contact information and notification preferences in brief."),
		func(ctx context.Context, in *UserPath) (*profileOutput, error) {
			dir, id, err := in.ids()
			if err != nil {
				return nil, err
			}
			p, err := h.profile(ctx, rest.Tenant(ctx), dir, id)
			if err != nil {
				return nil, h.fail(ctx, err, "user")
			}
			return &profileOutput{Body: p}, nil
		})

	rest.Register(api, op("usersUpdate", http.MethodPut, user, http.StatusNoContent, "Update a user's base information",
		"Replaces the name, preferred language and time zone; the self-service settings and mobile apps when given. "+
			"The language and time zone follow usersCreate's rule, except that a value sent back as the user has it is kept as it is, "+
			"so a profile read and written back unchanged is taken even when a contacts import stored a value before the rule. "+
			fmt.Sprintf("A user has at most %d devices, push devices and the mobileApps' push tokens together: mobile apps that would go past it are a 409 naming body.mobileApps, and nothing is changed.", storage.MaxDevicesPerPerson), http.StatusConflict),
		func(ctx context.Context, in *userWith[model.UpdateUserProfileCommand]) (*struct{}, error) {
			user, err := in.user(ctx)
			if err != nil {
				return nil, err
			}
			cur, err := store.GetUser(ctx, h.d.DB, user.Tenant, user.Directory, user.ID)
			if err != nil {
				return nil, h.fail(ctx, err, "user")
			}
			u, err := newUser(in.Body.Name, in.Body.PreferredLanguage, in.Body.TimeZone, in.Body.MobileApps, &cur.Profile)
			if err != nil {
				return nil, err
			}
			if in.Body.SelfService != nil {
				u.SelfService = store.SelfService(*in.Body.SelfService)
			}
			err = h.users.UpdateUser(ctx, user, u, in.Body.SelfService != nil, in.Body.MobileApps != nil)
			return nil, h.fail(ctx, overLimit(conflict(err, "a push token of the mobile apps is registered to another user"), "mobileApps"), "user")
		})

	rest.Register(api, op("usersDelete", http.MethodDelete, user, http.StatusNoContent, "Delete a user",
		"Deletes the user with its emails, phones, devices, memberships, locations, weather subscriptions and pending verifications; later alerts no longer reach it."),
		func(ctx context.Context, in *UserPath) (*struct{}, error) {
			dir, id, err := in.ids()
			if err != nil {
				return nil, err
			}
			return nil, h.fail(ctx, store.DeleteUser(ctx, h.d.DB, rest.Tenant(ctx), dir, id), "user")
		})

	rest.Register(api, op("usersFindUsersByQuery", http.MethodPost, users+"/query", 0, "Find users",
		"Answers a page of the directory's users matching every condition given. Sortable by id, lastName, firstName, externalId, createdAt and updatedAt (default lastName, firstName)."),
		func(ctx context.Context, in *struct {
			DirPath
			rest.PageParams
			Body *model.FindUserQuery
		}) (*rest.Output[model.UserProfileSummaryPagedApiResponse], error) {
			dir, err := in.dir()
			if err != nil {
				return nil, err
			}
			order, err := userOrder(in.Sort)
			if err != nil {
				return nil, err
			}
			var f store.UserFilter
			if q := in.Body; q != nil {
				f = store.UserFilter{Name: names.Normal(strings.TrimSpace(q.Name)), ExternalID: names.Normal(q.ExternalID)}
				if q.Email != "" {
					f.Email = strings.ToLower(strings.TrimSpace(q.Email))
				}
				if q.Phone != "" {
					if f.Phone, err = normalizePhone(q.Phone, ""); err != nil {
						return nil, rest.Invalid("body", "phone", err.Error(), q.Phone)
					}
				}
				if f.GroupID, err = groupID("groupId", q.GroupID); err != nil {
					return nil, err
				}
			}
			items, total, err := store.FindUsers(ctx, h.d.DB, rest.Tenant(ctx), dir, f, order, in.Limit(), in.Offset())
			if err != nil {
				return nil, h.fail(ctx, err, "user")
			}
			return rest.Answer(model.UserProfileSummaryPagedApiResponse{Paging: rest.NewPaging(in.PageParams, total), Items: userSummariesOut(items)}), nil
		})

	rest.Register(api, op("usersCreateExternalId", http.MethodPost, user+"/externalId", http.StatusNoContent, "Associate an external id",
		"Sets the id the tenant's own systems use for the user, replacing any earlier one. Another user of the directory with it is a 409.", http.StatusConflict),
		func(ctx context.Context, in *userWith[model.CreateExternalIdCommand]) (*struct{}, error) {
			dir, id, err := in.ids()
			if err != nil {
				return nil, err
			}
			ext, err := rest.Name("body", "externalId", in.Body.ExternalID, "must not be blank")
			if err != nil {
				return nil, err
			}
			err = store.SetExternalID(ctx, h.d.DB, rest.Tenant(ctx), dir, id, ext)
			return nil, h.fail(ctx, conflict(err, "another user of the directory has this external id"), "user")
		})

	rest.Register(api, op("usersGetContactInformationById", http.MethodGet, user+"/contact", 0, "Read a user's contact information",
		"Answers the user's emails and phones with their verification status, and their devices."),
		func(ctx context.Context, in *UserPath) (*rest.Output[model.ContactInformation], error) {
			return readOfUser(ctx, h, *in, nil, "user", func(u directoryservice.User) (model.ContactInformation, error) {
				ci, err := store.ContactInformation(ctx, h.d.DB, u.Tenant, u.ID)
				return contactsOut(ci), err
			})
		})
}

// userOrder is the ORDER BY of a page of users (usersFindUsersByQuery and a
// group's members): by name unless sort says otherwise.
func userOrder(sort string) (string, error) {
	return rest.OrderBy(sort, store.UserSorts, "lower(p.last_name), lower(p.first_name)", "p.id")
}

// newUser checks the base information shared by create and update. The
// names go through internal/names and the language and time zone through
// internal/locale, the rules the contacts import shares. cur is the stored
// profile on update (nil on create): a name, language or time zone the
// rules refuse is kept when sent back exactly as stored (it was stored
// before the rule), so that reading a user and writing it back never fails
// on a field the client did not change.
func newUser(name model.PersonName, lang, zone string, apps []model.MobileApp, cur *store.Profile) (store.NewUser, error) {
	if cur == nil {
		cur = &store.Profile{}
	}
	for _, n := range []struct {
		field  string
		v      *string
		stored string
	}{{"name.first", &name.First, cur.FirstName}, {"name.middle", &name.Middle, cur.MiddleName}, {"name.last", &name.Last, cur.LastName}} {
		v, err := unlessStored(strings.TrimSpace(*n.v), *n.v == n.stored, names.Check)
		if err != nil {
			return store.NewUser{}, rest.Invalid("body", n.field, err.Error(), *n.v)
		}
		*n.v = v
	}
	if name.First == "" && name.Last == "" {
		return store.NewUser{}, rest.Invalid("body", "name", "a first or last name is required", nil)
	}
	if lang == "" {
		lang = "en"
	}
	lang, err := unlessStored(lang, lang == cur.Language, locale.Language)
	if err != nil {
		return store.NewUser{}, rest.Invalid("body", "preferredLanguage", err.Error(), lang)
	}
	if zone == "" {
		zone = "UTC"
	}
	zone, err = unlessStored(zone, zone == cur.TimeZone, locale.TimeZone)
	if err != nil {
		return store.NewUser{}, rest.Invalid("body", "timeZone", err.Error(), zone)
	}
	seen, tokens := map[string]bool{}, map[string]int{}
	for i := range apps {
		if seen[apps[i].InstallationID] {
			return store.NewUser{}, rest.Invalid("body", fmt.Sprintf("mobileApps[%d].installationId", i), "duplicate installation id", apps[i].InstallationID)
		}
		seen[apps[i].InstallationID] = true
		if t := apps[i].PushToken; t != "" {
			if j, twice := tokens[t]; twice {
				return store.NewUser{}, rest.Invalid("body", fmt.Sprintf("mobileApps[%d].pushToken", i),
					fmt.Sprintf("push token given twice: mobileApps[%d] has it already (a token belongs to one installation)", j), nil)
			}
			tokens[t] = i
		}
		if apps[i].RegisteredAt.IsZero() {
			apps[i].RegisteredAt = nowUTC()
		}
	}
	return store.NewUser{Profile: store.Profile{FirstName: name.First, MiddleName: name.Middle, LastName: name.Last,
		Language: lang, TimeZone: zone}, MobileApps: mobileAppsIn(apps)}, nil
}

// unlessStored returns v as rule gives it; a v the rule refuses is kept
// as it is when stored says that v is the value stored.
func unlessStored(v string, stored bool, rule func(string) (string, error)) (string, error) {
	out, err := rule(v)
	switch {
	case err == nil:
		return out, nil
	case stored:
		return v, nil
	}
	return v, err
}

// profile reads the whole profile of a user.
func (h *handlers) profile(ctx context.Context, tenant, dir string, id int64) (model.UserProfile, error) {
	u, err := store.GetUser(ctx, h.d.DB, tenant, dir, id)
	if err != nil {
		return model.UserProfile{}, err
	}
	p := model.UserProfile{
		ID: strconv.FormatInt(u.ID, 10), DirectoryID: u.DirectoryID, ExternalID: u.ExternalID.String,
		Name:              model.PersonName{First: u.FirstName, Middle: u.MiddleName, Last: u.LastName},
		PreferredLanguage: u.Language, TimeZone: u.TimeZone, SelfService: model.SelfServiceSettings(h.users.SelfService(u)),
		MobileApps: []model.MobileApp{}, CreatedAt: u.CreatedAt, UpdatedAt: u.UpdatedAt,
	}
	_ = json.Unmarshal(u.MobileApps, &p.MobileApps)
	if p.MobileApps == nil {
		p.MobileApps = []model.MobileApp{}
	}
	ci, err := store.ContactInformation(ctx, h.d.DB, tenant, id)
	if err != nil {
		return p, err
	}
	p.ContactInformation = contactsOut(ci)
	sum, err := h.preferences(ctx, tenant, id)
	if err != nil {
		return p, err
	}
	np := model.NotificationPreferences{GroupIDs: []string{}, LocationIDs: []string{}, WeatherCategories: []string{}}
	for _, g := range sum.Memberships.Items {
		np.GroupIDs = append(np.GroupIDs, g.ID)
	}
	for _, l := range sum.Locations.Items {
		np.LocationIDs = append(np.LocationIDs, l.ID)
	}
	for _, w := range sum.WeatherNotifications.Items {
		if !slices.Contains(np.WeatherCategories, w.Category) {
			np.WeatherCategories = append(np.WeatherCategories, w.Category)
		}
	}
	p.NotificationPreferences = np
	return p, nil
}
