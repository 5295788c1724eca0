// Package directory serves the user directory: profiles, contact information with verification, notification preferences, groups and metadata.
package directory

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"reflect"

	"github.com/danielgtaylor/huma/v2"
	"github.com/jmoiron/sqlx"

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

// output is an operation's answer that is only a body.
type output[T any] struct {
	Body T
}

// childID is a parse for userOf: it parses the id of something the user
// has into *child, an id that cannot be one being a 404 naming what.
func childID(id, what string, child *int64) func() error {
	return func() (err error) {
		if *child, err = store.ParseID(id); err != nil {
			return rest.NotFound(what)
		}
		return nil
	}
}

// userOf parses the user path, then the rest of the path with parse (nil
// when there is none), and checks that the user exists in the tenant's
// directory: it answers the tenant and the user's id.
func (h *handlers) userOf(ctx context.Context, p UserPath, parse func() error) (tenant string, person int64, err error) {
	dir, person, err := p.ids()
	if err != nil {
		return "", 0, err
	}
	if parse != nil {
		if err := parse(); err != nil {
			return "", 0, err
		}
	}
	tenant = rest.Tenant(ctx)
	if _, err := store.GetUser(ctx, h.d.DB, tenant, dir, person); err != nil {
		return "", 0, h.fail(ctx, err, "user")
	}
	return tenant, person, nil
}

// readOfUser answers what read finds of an existing user (see userOf); a
// failed read is mapped by fail, naming what.
func readOfUser[T any](ctx context.Context, h *handlers, p UserPath, parse func() error, what string,
	read func(tenant string, person int64) (T, error)) (*output[T], error) {
	tenant, person, err := h.userOf(ctx, p, parse)
	if err != nil {
		return nil, err
	}
	v, err := read(tenant, person)
	if err != nil {
		return nil, h.fail(ctx, err, what)
	}
	return &output[T]{v}, nil
}

// addToUser runs add with the user's row locked (see withUser) and answers
// what it added; a conflict is a 409 telling conflict.
func addToUser[T any](ctx context.Context, h *handlers, p UserPath, conflict string,
	add func(tx *sqlx.Tx, tenant string, person int64) (T, error)) (*output[T], error) {
	var v T
	err := h.withUser(ctx, p, func(tx *sqlx.Tx, tenant string, person int64) (err error) {
		v, err = add(tx, tenant, person)
		return err
	})
	if errors.Is(err, storage.ErrConflict) {
		return nil, rest.Conflict(conflict)
	}
	if err != nil {
		return nil, h.fail(ctx, err, "user")
	}
	return &output[T]{v}, nil
}

// removeOfUser parses the id of something the user has (named what in a
// 404) and runs remove with the user's row locked (see withUser).
func (h *handlers) removeOfUser(ctx context.Context, p UserPath, childID, what string,
	remove func(tx *sqlx.Tx, tenant string, person, child int64) error) (*struct{}, error) {
	child, err := store.ParseID(childID)
	if err != nil {
		return nil, rest.NotFound(what)
	}
	err = h.withUser(ctx, p, func(tx *sqlx.Tx, tenant string, person int64) error {
		return remove(tx, tenant, person, child)
	})
	return nil, h.fail(ctx, err, what)
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
