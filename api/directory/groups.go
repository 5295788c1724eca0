package directory

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/tocsin/tocsin/api/model"
	"github.com/tocsin/tocsin/api/rest"
	"github.com/tocsin/tocsin/internal/names"
	"github.com/tocsin/tocsin/storage"
	store "github.com/tocsin/tocsin/storage/directory"
)

// groupID parses an optional group id of a body field.
func groupID(field, s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id <= 0 {
		return 0, rest.Invalid("body", field, "not a group id", s)
	}
	return id, nil
}

func (h *handlers) registerGroups(api huma.API) {
	const groups = "/{tenantId}/directory/{directoryId}/groups"
	rest.Register(api, op("groupsCreateGroup", http.MethodPost, groups, http.StatusCreated, "Create a group",
		"Creates a group of the tenant's group tree, at the root or under a parent (a 404 when the parent does not exist). "+
			"The tree is the tenant's, shared by its directories and by the alerting interface's group tree. A sibling with the same name is a 409. "+
			fmt.Sprintf("The tree is at most %d levels deep (root groups are depth 0) and a group's path, its ancestors' names and its own joined by ' / ', at most %d characters: a group beyond either is a 400 naming parentId.", store.MaxGroupDepth, store.MaxGroupPathLength),
		http.StatusConflict),
		func(ctx context.Context, in *struct {
			DirPath
			Body model.CreateGroupCommand
		}) (*struct {
			Location string `header:"Location" doc:"The new group's members operation."`
			Body     model.GroupSummary
		}, error) {
			name, err := rest.Name("body", "name", in.Body.Name, "must not be blank")
			if err != nil {
				return nil, err
			}
			parent, err := groupID("parentId", in.Body.ParentID)
			if err != nil {
				return nil, err
			}
			var tooLong *store.GroupPathTooLongError
			g, err := h.users.CreateGroup(ctx, rest.Tenant(ctx), name, strings.TrimSpace(in.Body.Description), parent, in.Body.IsPublic)
			switch {
			case errors.Is(err, store.ErrParentNotFound):
				return nil, rest.NotFound("parent group")
			case errors.Is(err, storage.ErrConflict):
				return nil, rest.Conflict("the parent already has a group with this name")
			case errors.Is(err, store.ErrGroupTooDeep):
				return nil, rest.Invalid("body", "parentId", fmt.Sprintf("the parent is at the deepest level of the group tree: the tree is at most %d levels deep", store.MaxGroupDepth), in.Body.ParentID)
			case errors.As(err, &tooLong):
				return nil, rest.Invalid("body", "parentId", fmt.Sprintf("under this parent the group's path (its ancestors' names and its own, joined by ' / ') would be %d characters, more than %d: choose a shorter name or a parent higher up the tree", tooLong.Length, store.MaxGroupPathLength), in.Body.ParentID)
			case err != nil:
				return nil, h.fail(ctx, err, "group")
			}
			out := &struct {
				Location string `header:"Location" doc:"The new group's members operation."`
				Body     model.GroupSummary
			}{Body: groupOut(g)}
			out.Location = fmt.Sprintf("/%s/directory/%s/groups/%d/members", in.TenantID, in.DirectoryID, g.ID)
			return out, nil
		})

	rest.Register(api, op("groupsDiscoverAvailableGroups", http.MethodGet, groups+"/discover", 0, "Discover groups to join",
		"Lists the tenant's public groups, nested (ordered by their path in the tree), that a user with a profile in the tenant can join. "+
			"With userId, only groups that user can join: not those they are already in, and none when their self-service settings forbid joining (404 for an unknown user). "+
			"Sortable by path (default), name, depth, id and createdAt."),
		func(ctx context.Context, in *struct {
			DirPath
			rest.PageParams
			UserID string `query:"userId" maxLength:"20" doc:"Only groups this user can join." example:"1042"`
		}) (*rest.Output[model.GroupReferencePagedApiResponse], error) {
			dir, err := in.dir()
			if err != nil {
				return nil, err
			}
			order, err := rest.OrderBy(in.Sort, store.GroupSorts, "names", "g.id")
			if err != nil {
				return nil, err
			}
			tenant := rest.Tenant(ctx)
			public := true
			f := store.GroupFilter{IsPublic: &public}
			if in.UserID != "" {
				id, err := store.ParseID(in.UserID)
				if err != nil {
					return nil, rest.NotFound("user")
				}
				u, err := store.GetUser(ctx, h.d.DB, tenant, dir, id)
				if err != nil {
					return nil, h.fail(ctx, err, "user")
				}
				if !h.users.SelfService(u).CanJoinGroups {
					return rest.Answer(model.GroupReferencePagedApiResponse{Paging: rest.NewPaging(in.PageParams, storage.ExactTotal(0)), Items: []model.GroupReference{}}), nil
				}
				f.NotMemberOf = id
			}
			items, total, err := store.FindGroups(ctx, h.d.DB, tenant, f, order, in.Limit(), in.Offset())
			if err != nil {
				return nil, h.fail(ctx, err, "group")
			}
			return rest.Answer(model.GroupReferencePagedApiResponse{Paging: rest.NewPaging(in.PageParams, total), Items: groupRefsOut(items)}), nil
		})

	rest.Register(api, op("groupsFindGroups", http.MethodPost, groups+"/find", 0, "Find groups",
		"Answers a page of the tenant's groups matching every condition of the query. Sortable by path, name (default), depth, id and createdAt."),
		func(ctx context.Context, in *struct {
			DirPath
			rest.PageParams
			Body *model.FindGroupQuery
		}) (*rest.Output[model.GroupSummaryPagedApiResponse], error) {
			if _, err := in.dir(); err != nil {
				return nil, err
			}
			order, err := rest.OrderBy(in.Sort, store.GroupSorts, "lower(g.name)", "g.id")
			if err != nil {
				return nil, err
			}
			var f store.GroupFilter
			if q := in.Body; q != nil {
				f = store.GroupFilter{Name: names.Normal(strings.TrimSpace(q.Name)), RootsOnly: q.RootsOnly, IsPublic: q.IsPublic}
				if f.ParentID, err = groupID("parentId", q.ParentID); err != nil {
					return nil, err
				}
				if f.AncestorID, err = groupID("ancestorId", q.AncestorID); err != nil {
					return nil, err
				}
				if q.MemberUserID != "" {
					if f.MemberUserID, err = store.ParseID(q.MemberUserID); err != nil {
						return nil, rest.Invalid("body", "memberUserId", "not a user id", q.MemberUserID)
					}
				}
			}
			items, total, err := store.FindGroups(ctx, h.d.DB, rest.Tenant(ctx), f, order, in.Limit(), in.Offset())
			if err != nil {
				return nil, h.fail(ctx, err, "group")
			}
			return rest.Answer(model.GroupSummaryPagedApiResponse{Paging: rest.NewPaging(in.PageParams, total), Items: rest.Items(items, groupOut)}), nil
		})

	rest.Register(api, op("groupsGetGroupMembership", http.MethodPost, groups+"/{groupId}/members", 0, "List a group's members",
		"Answers a page of the group's direct members that are users of the directory and listed in group directories (their self-service settings). "+
			"Sortable like usersFindUsersByQuery."),
		func(ctx context.Context, in *struct {
			DirPath
			rest.PageParams
			GroupID string `path:"groupId" maxLength:"20" pattern:"^(0|[1-9][0-9]*)$" doc:"The group's id." example:"42"`
		}) (*rest.Output[model.UserProfileSummaryPagedApiResponse], error) {
			dir, err := in.dir()
			if err != nil {
				return nil, err
			}
			gid, err := store.ParseID(in.GroupID)
			if err != nil {
				return nil, rest.NotFound("group")
			}
			order, err := userOrder(in.Sort)
			if err != nil {
				return nil, err
			}
			tenant := rest.Tenant(ctx)
			if _, err := store.GetGroup(ctx, h.d.DB, tenant, gid); err != nil {
				return nil, h.fail(ctx, err, "group")
			}
			items, total, err := store.GroupMembers(ctx, h.d.DB, tenant, dir, gid, order, in.Limit(), in.Offset())
			if err != nil {
				return nil, h.fail(ctx, err, "group")
			}
			return rest.Answer(model.UserProfileSummaryPagedApiResponse{Paging: rest.NewPaging(in.PageParams, total), Items: userSummariesOut(items)}), nil
		})
}

// TenantPath is the path parameter of the tenant-wide operations.
type TenantPath struct {
	TenantID string `path:"tenantId" maxLength:"20" pattern:"^(0|[1-9][0-9]*)$" doc:"The tenant; must be the token's." example:"1001"`
}

func (h *handlers) registerMeta(api huma.API) {
	rest.Register(api, op("metaGetLanguages", http.MethodGet, "/{tenantId}/directory/meta/languages", 0, "List languages",
		"Languages for written and spoken translation, as BCP 47 codes with names. A user's preferred language may be any BCP 47 language (see usersCreate); these are the ones messages are translated into."),
		func(ctx context.Context, in *TenantPath) (*rest.Output[model.AvailableLanguagesResponse], error) {
			return rest.Answer(model.AvailableLanguagesResponse{Languages: languages}), nil
		})
	rest.Register(api, op("metaGetTimeZones", http.MethodGet, "/{tenantId}/directory/meta/timezones", 0, "List time zones",
		"The IANA time zones zone.tab names (one per region of the time zone database), plus UTC, with their UTC offsets now, from the time zone data built into tocsin. A user's time zone may also be any other name of that data: a zone zone.tab does not name, such as Etc/GMT+5, or a link, such as US/Eastern (see usersCreate)."),
		func(ctx context.Context, in *TenantPath) (*rest.Output[model.AvailableTimeZonesResponse], error) {
			now := time.Now().UTC().Truncate(time.Second)
			return rest.Answer(model.AvailableTimeZonesResponse{TimeZones: timeZones(now), AsOf: now}), nil
		})
	rest.Register(api, op("metaGetWeatherCategories", http.MethodGet, "/{tenantId}/directory/meta/weather/categories", 0, "List weather categories",
		"The weather categories users subscribe to, each grouping alert events of national weather services."),
		func(ctx context.Context, in *TenantPath) (*rest.Output[model.WeatherCategoriesResponse], error) {
			return rest.Answer(model.WeatherCategoriesResponse{Categories: weatherCategories}), nil
		})
}
