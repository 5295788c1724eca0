// Package directory serves the user directory: profiles, contact information with verification, notification preferences, groups and metadata.
package directory

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"reflect"

	"github.com/danielgtaylor/huma/v2"

	"github.com/tocsin/tocsin/api/model"
	"github.com/tocsin/tocsin/api/rest"
	"github.com/tocsin/tocsin/storage"
	store "github.com/tocsin/tocsin/storage/directory"
)

const scope = "directory:public"

var tags = []string{"Directory"}

// DirPath are the path parameters of every directory operation.
type DirPath struct {
	TenantID    string `path:"tenantId" maxLength:"20" doc:"The tenant; must be the token's." example:"1001"`
	DirectoryID string `path:"directoryId" minLength:"1" maxLength:"64" doc:"The directory within the tenant." example:"staff"`
}

// UserPath adds the user.
type UserPath struct {
	DirPath
	UserID string `path:"userId" maxLength:"20" doc:"The user's id." example:"1042"`
}

type handlers struct {
	d rest.Deps
}

// Register adds the directory operations to api.
func Register(api huma.API, d rest.Deps) {
	h := &handlers{d: d}
	h.registerUsers(api)
	h.registerContact(api)
	h.registerDevices(api)
	h.registerVerification(api)
	h.registerNotifications(api)
	h.registerGroups(api)
	h.registerMeta(api)

	// Models of the directory that no operation carries.
	for _, t := range []any{
		model.EmailCollection{}, model.PhoneCollection{}, model.LocationPagedApiResponse{},
	} {
		api.OpenAPI().Components.Schemas.Schema(reflect.TypeOf(t), true, "")
	}
}

// op declares a directory operation.
func op(id, method, path string, status int, summary, description string, errs ...int) rest.Op {
	return rest.Op{ID: id, Method: method, Path: path, Scope: scope, Tags: tags, Status: status,
		Summary: summary, Description: description, Errors: errs}
}

// dir returns the unescaped directory id.
func (p DirPath) dir() (string, error) {
	s, err := url.PathUnescape(p.DirectoryID)
	if err != nil || s == "" {
		return "", rest.Invalid("path", "directoryId", "not a valid path segment", p.DirectoryID)
	}
	return s, nil
}

// ids returns the directory and the user's row id; an id that cannot be a
// user is a 404.
func (p UserPath) ids() (string, int64, error) {
	dir, err := p.dir()
	if err != nil {
		return "", 0, err
	}
	id, err := store.ParseID(p.UserID)
	if err != nil {
		return "", 0, rest.NotFound("user")
	}
	return dir, id, nil
}

// existingUser parses the user path and an id of something the user has
// (named what in a 404), and checks that the user exists in the tenant's
// directory: it answers the tenant, the user's id and the parsed child id.
func (h *handlers) existingUser(ctx context.Context, p UserPath, childID, what string) (tenant string, person, child int64, err error) {
	dir, person, err := p.ids()
	if err != nil {
		return "", 0, 0, err
	}
	if child, err = store.ParseID(childID); err != nil {
		return "", 0, 0, rest.NotFound(what)
	}
	tenant = rest.Tenant(ctx)
	if _, err := store.GetUser(ctx, h.d.DB, tenant, dir, person); err != nil {
		return "", 0, 0, h.fail(ctx, err, "user")
	}
	return tenant, person, child, nil
}

// fail maps storage errors to problems: not found is a 404 naming what,
// conflicts a 409, anything unexpected a logged 500.
func (h *handlers) fail(ctx context.Context, err error, what string) error {
	var pd *rest.ProblemDetails
	switch {
	case err == nil:
		return nil
	case errors.As(err, &pd):
		return pd
	case errors.Is(err, storage.ErrNotFound):
		return rest.NotFound(what)
	case errors.Is(err, storage.ErrConflict):
		return rest.Conflict(what + " already exists")
	case errors.Is(err, context.Canceled):
		return rest.Problem(http.StatusRequestTimeout, "the request was cancelled")
	}
	h.d.Logger.ErrorContext(ctx, "directory operation failed", "tenant", rest.Tenant(ctx), "err", err)
	return rest.Problem(http.StatusInternalServerError, "internal error")
}
