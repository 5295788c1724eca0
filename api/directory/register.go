// Package directory serves the user directory: profiles, contact information with verification, notification preferences, groups and metadata.
package directory

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"reflect"

	"github.com/danielgtaylor/huma/v2"

	"github.com/tocsin/tocsin/api/directory/directoryservice"
	"github.com/tocsin/tocsin/api/model"
	"github.com/tocsin/tocsin/api/rest"
	"github.com/tocsin/tocsin/internal/names"
	"github.com/tocsin/tocsin/storage"
	store "github.com/tocsin/tocsin/storage/directory"
)

// DirPath are the path parameters of every directory operation.
type DirPath struct {
	TenantID    string `path:"tenantId" maxLength:"20" pattern:"^(0|[1-9][0-9]*)$" doc:"The tenant; must be the token's." example:"1001"`
	DirectoryID string `path:"directoryId" minLength:"1" maxLength:"64" doc:"The directory within the tenant, in NFC: two spellings of one id (é as one character, or e and a combining accent) name the same directory. usersCreate holds it to the rule of names: a control character, a bidirectional control or an invisible character is a 400 naming path.directoryId." example:"staff"`
}

// UserPath adds the user.
type UserPath struct {
	DirPath
	UserID string `path:"userId" maxLength:"20" pattern:"^(0|[1-9][0-9]*)$" doc:"The user's id." example:"1042"`
}

// userWith is the input of an operation on a user with a body B.
type userWith[B any] struct {
	UserPath
	Body B
}

type handlers struct {
	d     rest.Deps
	users *directoryservice.Service
}

// Register adds the directory operations to api.
func Register(api huma.API, d rest.Deps) {
	h := &handlers{d: d, users: &directoryservice.Service{
		DB: d.DB, Temporal: d.Temporal, SecretsKey: d.Config.SecretsKey, CodeTTL: d.Config.VerificationCodeTTL,
		DefaultSelfService: store.SelfService(model.DefaultSelfService), WakeStarts: d.WakeStarts, Logger: d.Logger,
	}}
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
var op = rest.Area{Scope: "directory:public", Tags: []string{"Directory"}}.Op

// dir returns the unescaped directory id in NFC (names.Normal), the form
// directory ids are stored and looked up in, so that two spellings of
// one id name one directory.
func (p DirPath) dir() (string, error) {
	s, err := url.PathUnescape(p.DirectoryID)
	if err != nil || s == "" {
		return "", rest.Invalid("path", "directoryId", "not a valid path segment", p.DirectoryID)
	}
	return names.Normal(s), nil
}

// newDir returns the directory id of a user to be created: what dir
// gives, held to the rule of names. Only a new user brings a directory
// into being, so the other operations take, as dir gives it, the id of a
// directory whose users were created before the rule.
func (p DirPath) newDir() (string, error) {
	s, err := p.dir()
	if err != nil {
		return "", err
	}
	if _, err := names.Check(s); err != nil {
		return "", rest.Invalid("path", "directoryId", err.Error(), s)
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

// userRef is a path that names a user.
type userRef interface {
	user(ctx context.Context) (directoryservice.User, error)
}

// user names the user of the path in the caller's tenant; an id that
// cannot be a user is a 404.
func (p UserPath) user(ctx context.Context) (directoryservice.User, error) {
	dir, id, err := p.ids()
	if err != nil {
		return directoryservice.User{}, err
	}
	return directoryservice.User{Tenant: rest.Tenant(ctx), Directory: dir, ID: id}, nil
}

// readChild parses the id of something the user of the path has (an id
// that cannot be one is a 404 naming what), checks that the user exists and
// answers what read finds of it.
func readChild[T any](ctx context.Context, h *handlers, p UserPath, id, what string,
	read func(u directoryservice.User, child int64) (T, error)) (*rest.Output[T], error) {
	var child int64
	parse := func() (err error) {
		if child, err = store.ParseID(id); err != nil {
			return rest.NotFound(what)
		}
		return nil
	}
	return readOfUser(ctx, h, p, parse, what, func(u directoryservice.User) (T, error) { return read(u, child) })
}

// readOfUser parses the user path, then the rest of the path with parse
// (nil when there is none), checks that the user exists and answers what
// read finds of them; a failed read is mapped by fail, naming what.
func readOfUser[T any](ctx context.Context, h *handlers, p userRef, parse func() error, what string,
	read func(u directoryservice.User) (T, error)) (*rest.Output[T], error) {
	u, err := p.user(ctx)
	if err != nil {
		return nil, err
	}
	if parse != nil {
		if err := parse(); err != nil {
			return nil, err
		}
	}
	if _, err := store.GetUser(ctx, h.d.DB, u.Tenant, u.Directory, u.ID); err != nil {
		return nil, h.fail(ctx, err, "user")
	}
	v, err := read(u)
	if err != nil {
		return nil, h.fail(ctx, err, what)
	}
	return rest.Answer(v), nil
}

// addToUser answers what add adds to the user of the path; a conflict is a
// 409 telling conflictDetail.
func addToUser[T any](ctx context.Context, h *handlers, p UserPath, conflictDetail string,
	add func(u directoryservice.User) (T, error)) (*rest.Output[T], error) {
	u, err := p.user(ctx)
	if err != nil {
		return nil, err
	}
	v, err := add(u)
	if err != nil {
		return nil, h.fail(ctx, conflict(err, conflictDetail), "user")
	}
	return rest.Answer(v), nil
}

// removeOfUser parses the id of something the user has (named what in a
// 404) and has remove remove it from the user of the path.
func (h *handlers) removeOfUser(ctx context.Context, p UserPath, childID, what string,
	remove func(u directoryservice.User, child int64) error) (*struct{}, error) {
	child, err := store.ParseID(childID)
	if err != nil {
		return nil, rest.NotFound(what)
	}
	u, err := p.user(ctx)
	if err != nil {
		return nil, err
	}
	return nil, h.fail(ctx, remove(u, child), what)
}

// conflict makes storage.ErrConflict the 409 telling detail and leaves
// other errors as they are.
func conflict(err error, detail string) error {
	if errors.Is(err, storage.ErrConflict) {
		return rest.Conflict(detail)
	}
	return err
}

// limitDoc tells, in an operation's description, the most of what (a
// storage.Max…PerPerson) a user has and how one more is answered.
func limitDoc(max int, what string) string {
	return fmt.Sprintf(" A user has at most %d %s: one more is a 409 naming the field, and nothing is added.", max, what)
}

// overLimit makes a *storage.LimitError the 409 naming field of the body
// (the body itself when field is empty) and leaves other errors as they
// are.
func overLimit(err error, field string) error {
	var limit *storage.LimitError
	if !errors.As(err, &limit) {
		return err
	}
	msg := fmt.Sprintf("a user has at most %d %s: remove one before adding another", limit.Limit, limit.What)
	return rest.Problem(http.StatusConflict, msg, rest.Failure("body", field, msg, nil))
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
	case errors.Is(err, directoryservice.ErrUserNotFound):
		return rest.NotFound("user")
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
