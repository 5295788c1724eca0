// Package directoryservice carries out the changes to the user directory
// apart from HTTP: each use case runs in one transaction of its own, and
// every change to a user holds the user's row locked, so the changes to
// one user happen one after another. The SQL is storage/directory's; the
// handlers (api/directory) parse requests, call one method per use case
// and map the errors (this package's and storage's) to problems.
package directoryservice

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jmoiron/sqlx"
	"go.temporal.io/sdk/client"

	"github.com/tocsin/tocsin/internal/secrets"
	"github.com/tocsin/tocsin/storage"
	store "github.com/tocsin/tocsin/storage/directory"
	"github.com/tocsin/tocsin/workflows"
)

// Service changes the directory.
type Service struct {
	DB       *storage.DB
	Temporal client.Client
	// SecretsKey derives the keys that hash an address into the id of its
	// verification workflow and a code into what is stored of it.
	SecretsKey string
	// CodeTTL is how long a verification code lives.
	CodeTTL time.Duration
	// DefaultSelfService is what a user may do when their stored settings
	// leave it out.
	DefaultSelfService store.SelfService
	// WakeStarts wakes the workflow starter of this process after a start
	// is enqueued.
	WakeStarts func()
	Logger     *slog.Logger
}

// User names a user of a tenant's directory.
type User struct {
	Tenant, Directory string
	ID                int64
}

// Refusals of the directory's changes; storage.ErrNotFound and
// storage.ErrConflict say that what a change names is missing or there
// already.
var (
	// ErrUserNotFound means that the directory has no such user.
	ErrUserNotFound = errors.New("user not found")
	// ErrGroupNotFound means that the tenant has no such group.
	ErrGroupNotFound = errors.New("group not found")
	// ErrGroupNotPublic means that users cannot join the group themselves.
	ErrGroupNotPublic = errors.New("the group is not public")
	// ErrJoinNotAllowed means that the user's self-service settings do not
	// allow joining groups.
	ErrJoinNotAllowed = errors.New("joining groups is not allowed")
	// ErrAlreadyMember means that the user is a direct member already.
	ErrAlreadyMember = errors.New("already a member")
	// ErrAppDevice means that the device belongs to the alerts app, whose
	// devices come from the user's mobile apps.
	ErrAppDevice = errors.New("a device of the alerts app")
	// ErrNoWeather means that none of the weather subscriptions named exists.
	ErrNoWeather = errors.New("no such weather subscription")
)

// SelfService is what the user u may do on their own: the stored settings
// over the defaults.
func (s *Service) SelfService(u store.User) store.SelfService {
	ss := s.DefaultSelfService
	_ = json.Unmarshal(u.SelfService, &ss)
	return ss
}

// change runs fn in a transaction with the user's row locked.
func change[T any](ctx context.Context, s *Service, u User, fn func(tx *sqlx.Tx, cur store.User) (T, error)) (T, error) {
	var v T
	err := s.DB.InTx(ctx, func(tx *sqlx.Tx) error {
		cur, err := store.LockUser(ctx, tx, u.Tenant, u.Directory, u.ID)
		if errors.Is(err, storage.ErrNotFound) {
			return ErrUserNotFound
		}
		if err != nil {
			return err
		}
		v, err = fn(tx, cur)
		return err
	})
	return v, err
}

// changeOnly is change for changes that answer nothing but an error.
func changeOnly(ctx context.Context, s *Service, u User, fn func(tx *sqlx.Tx) error) error {
	_, err := change(ctx, s, u, func(tx *sqlx.Tx, _ store.User) (struct{}, error) { return struct{}{}, fn(tx) })
	return err
}

// inTx runs fn in a transaction of its own.
func inTx[T any](ctx context.Context, s *Service, fn func(tx *sqlx.Tx) (T, error)) (T, error) {
	var v T
	err := s.DB.InTx(ctx, func(tx *sqlx.Tx) (err error) {
		v, err = fn(tx)
		return err
	})
	return v, err
}

// CreateUser creates a user in the tenant's directory dir and answers its
// id; storage.ErrConflict when the external id or a push token of its
// mobile apps is another user's.
func (s *Service) CreateUser(ctx context.Context, tenant, dir string, nu store.NewUser) (int64, error) {
	return inTx(ctx, s, func(tx *sqlx.Tx) (int64, error) { return store.CreateUser(ctx, tx, tenant, dir, nu) })
}

// UpdateUser replaces the user's base information with nu: its
// self-service settings only when setSelfService (else the stored ones
// stay, over the defaults) and its mobile apps only when setApps.
func (s *Service) UpdateUser(ctx context.Context, u User, nu store.NewUser, setSelfService, setApps bool) error {
	_, err := change(ctx, s, u, func(tx *sqlx.Tx, cur store.User) (struct{}, error) {
		if !setSelfService {
			nu.SelfService = s.SelfService(cur)
		}
		return struct{}{}, store.UpdateUser(ctx, tx, u.Tenant, u.ID, nu, nu.MobileApps, setApps)
	})
	return err
}

// AddEmail adds an address to the user, unverified; storage.ErrConflict
// when the user has it.
func (s *Service) AddEmail(ctx context.Context, u User, address, label string) (storage.Email, error) {
	return change(ctx, s, u, func(tx *sqlx.Tx, _ store.User) (storage.Email, error) {
		return store.AddEmail(ctx, tx, u.Tenant, u.ID, address, label)
	})
}

// AddPhone adds a number to the user, unverified; storage.ErrConflict when
// the user has it.
func (s *Service) AddPhone(ctx context.Context, u User, p storage.Phone) (storage.Phone, error) {
	return change(ctx, s, u, func(tx *sqlx.Tx, _ store.User) (storage.Phone, error) {
		return store.AddPhone(ctx, tx, u.Tenant, u.ID, p)
	})
}

// RemoveAddress removes the user's email address or phone number, by kind,
// with its verification state; storage.ErrNotFound when the user has none.
func (s *Service) RemoveAddress(ctx context.Context, u User, kind store.Kind, address string) error {
	return changeOnly(ctx, s, u, func(tx *sqlx.Tx) error {
		if kind == store.KindPhone {
			return store.RemovePhone(ctx, tx, u.Tenant, u.ID, address)
		}
		return store.RemoveEmail(ctx, tx, u.Tenant, u.ID, address)
	})
}

// AddPushDevice registers a device token of the push channel to the user;
// storage.ErrConflict when the token is registered already.
func (s *Service) AddPushDevice(ctx context.Context, u User, platform, token string) (storage.Device, error) {
	return change(ctx, s, u, func(tx *sqlx.Tx, _ store.User) (storage.Device, error) {
		return store.AddPushDevice(ctx, tx, u.Tenant, u.ID, platform, token)
	})
}

// RemovePushDevice removes one of the user's push devices; ErrAppDevice
// for a device of the alerts app, storage.ErrNotFound when the user has no
// such device.
func (s *Service) RemovePushDevice(ctx context.Context, u User, device int64) error {
	return changeOnly(ctx, s, u, func(tx *sqlx.Tx) error {
		d, err := store.GetDevice(ctx, tx, u.Tenant, u.ID, device)
		if err != nil {
			return err
		}
		if d.App != store.AppPush {
			return ErrAppDevice
		}
		return store.RemovePushDevice(ctx, tx, u.Tenant, u.ID, device)
	})
}

// CreateGroup creates a group of the tenant's group tree, under parent
// when it is not 0: store.ErrParentNotFound when the parent does not
// exist, storage.ErrConflict when a sibling has the name.
func (s *Service) CreateGroup(ctx context.Context, tenant, name, description string, parent int64, public bool) (store.Group, error) {
	return inTx(ctx, s, func(tx *sqlx.Tx) (store.Group, error) {
		return store.CreateGroup(ctx, tx, tenant, name, description, parent, public)
	})
}

// JoinGroup makes the user a direct member of a group. A user joining by
// self-service (administrator false) may join only a public group, and only
// when the user's self-service settings allow it; an administrator adds the
// user to any group of the tenant. It fails with ErrGroupNotFound,
// ErrGroupNotPublic, ErrJoinNotAllowed or ErrAlreadyMember.
func (s *Service) JoinGroup(ctx context.Context, u User, group int64, administrator bool) error {
	_, err := change(ctx, s, u, func(tx *sqlx.Tx, cur store.User) (struct{}, error) {
		public, err := store.GroupIsPublic(ctx, tx, u.Tenant, group)
		if errors.Is(err, storage.ErrNotFound) {
			return struct{}{}, ErrGroupNotFound
		}
		if err != nil {
			return struct{}{}, err
		}
		if !administrator && !public {
			return struct{}{}, ErrGroupNotPublic
		}
		if !administrator && !s.SelfService(cur).CanJoinGroups {
			return struct{}{}, ErrJoinNotAllowed
		}
		added, err := store.AddMembership(ctx, tx, u.Tenant, group, u.ID)
		if err == nil && !added {
			return struct{}{}, ErrAlreadyMember
		}
		return struct{}{}, err
	})
	return err
}

// LeaveGroup ends the user's direct membership of a group;
// storage.ErrNotFound when the user is not a member.
func (s *Service) LeaveGroup(ctx context.Context, u User, group int64) error {
	return changeOnly(ctx, s, u, func(tx *sqlx.Tx) error { return store.RemoveMembership(ctx, tx, u.Tenant, group, u.ID) })
}

// AddLocation adds a place the user wants notifications for and answers
// its id.
func (s *Service) AddLocation(ctx context.Context, u User, l store.NewLocation) (int64, error) {
	return change(ctx, s, u, func(tx *sqlx.Tx, _ store.User) (int64, error) {
		return store.AddLocation(ctx, tx, u.Tenant, u.ID, l)
	})
}

// RemoveLocation removes one of the user's locations with its weather
// subscriptions; storage.ErrNotFound when the user has no such location.
func (s *Service) RemoveLocation(ctx context.Context, u User, location int64) error {
	return changeOnly(ctx, s, u, func(tx *sqlx.Tx) error { return store.RemoveLocation(ctx, tx, u.Tenant, u.ID, location) })
}

// LocationOf answers the row id of the user's location id (as a path or a
// body gives it); storage.ErrNotFound when the user has no such location.
type LocationOf func(id string) (int64, error)

// WeatherChanges builds the changes of a weather request, looking the
// user's locations up with locationOf.
type WeatherChanges func(locationOf LocationOf) ([]store.WeatherChange, error)

// AddWeather merges the channels of the changes into the user's weather
// subscriptions.
func (s *Service) AddWeather(ctx context.Context, u User, changes WeatherChanges) error {
	return changeOnly(ctx, s, u, func(tx *sqlx.Tx) error {
		cs, err := changes(s.locationOf(ctx, tx, u))
		if err != nil {
			return err
		}
		return store.AddWeather(ctx, tx, u.Tenant, u.ID, cs)
	})
}

// RemoveWeather removes the channels of the changes from the user's
// weather subscriptions; ErrNoWeather when none of them exists.
func (s *Service) RemoveWeather(ctx context.Context, u User, changes WeatherChanges) error {
	return changeOnly(ctx, s, u, func(tx *sqlx.Tx) error {
		cs, err := changes(s.locationOf(ctx, tx, u))
		if err != nil {
			return err
		}
		n, err := store.RemoveWeather(ctx, tx, u.Tenant, u.ID, cs)
		if err == nil && n == 0 {
			return ErrNoWeather
		}
		return err
	})
}

func (s *Service) locationOf(ctx context.Context, tx *sqlx.Tx, u User) LocationOf {
	return func(id string) (int64, error) {
		lid, err := store.ParseID(id)
		if err == nil {
			_, err = store.GetLocation(ctx, tx, u.Tenant, u.ID, lid)
		}
		return lid, err
	}
}

// ReserveNonce reserves a nonce for one resend of the verification code of
// the user's address: *store.RateLimitedError past the limit,
// storage.ErrConflict for a nonce reserved already and
// store.ErrAlreadyVerified for an address verified already.
func (s *Service) ReserveNonce(ctx context.Context, u User, kind store.Kind, address, nonce string) (store.NonceReservation, error) {
	key, err := secrets.Derive(s.SecretsKey, "nonce window")
	if err != nil {
		return store.NonceReservation{}, fmt.Errorf("nonce window key: %w", err)
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(u.Tenant + "\x00" + string(kind) + "\x00" + address))
	return change(ctx, s, u, func(tx *sqlx.Tx, _ store.User) (store.NonceReservation, error) {
		return store.ReserveNonce(ctx, tx, u.Tenant, u.ID, kind, address, nonce, m.Sum(nil))
	})
}

// Resend spends a nonce and has the address's verification workflow send
// a new code: the resend and the request to signal-with-start the workflow
// commit together, and the starter carries the request out right after
// (see dispatch.Starter), so a spent nonce always gets its code.
// store.ErrNonceInvalid for an unknown, spent or expired nonce,
// store.ErrAlreadyVerified for an address verified already.
func (s *Service) Resend(ctx context.Context, u User, kind store.Kind, address, nonce string) error {
	err := changeOnly(ctx, s, u, func(tx *sqlx.Tx) error {
		wfID, err := s.verificationID(ctx, tx, u, kind, address)
		if err != nil {
			return err
		}
		seq, err := store.BeginResend(ctx, tx, u.Tenant, u.ID, kind, address, nonce, wfID)
		if err != nil {
			return err
		}
		return storage.EnqueueStart(ctx, tx, storage.StartRequest{
			TenantID: u.Tenant, WorkflowID: wfID, Workflow: "Verification",
			// The input asks for code seq too, so a start alone sends it.
			Input:  workflows.VerificationInput{Tenant: u.Tenant, Person: u.ID, Kind: kind, Address: address, TTL: s.CodeTTL, PendingSeq: seq},
			Signal: workflows.SignalVerificationResend, SignalInput: workflows.VerificationResend{Seq: seq},
			// A person is waiting for the code.
			Priority: storage.PriorityUrgent,
		})
	})
	if err == nil && s.WakeStarts != nil {
		s.WakeStarts()
	}
	return err
}

// Verify compares code with the code most recently sent to the user's
// address and answers the outcome. A code that ended (verified, out of
// attempts or expired) lets its workflow finish now rather than at expiry.
func (s *Service) Verify(ctx context.Context, u User, kind store.Kind, address, code string) (store.CheckResult, error) {
	key, err := store.CodeKey(s.SecretsKey)
	if err != nil {
		return store.CheckResult{}, err
	}
	res, err := change(ctx, s, u, func(tx *sqlx.Tx, _ store.User) (store.CheckResult, error) {
		return store.CheckCode(ctx, tx, key, u.Tenant, u.ID, kind, address, code)
	})
	if err != nil {
		return res, err
	}
	switch res.Outcome {
	case store.CheckVerified, store.CheckExhausted, store.CheckExpired:
		wfID, err := s.verificationID(ctx, s.DB, u, kind, address)
		if err == nil {
			err = s.Temporal.SignalWorkflow(ctx, wfID, "", workflows.SignalVerificationSettled,
				workflows.VerificationSettled{Seq: res.Seq, Status: string(res.Attempt.Status)})
		}
		if err != nil {
			s.Logger.DebugContext(ctx, "verification workflow not signalled", "err", err)
		}
	}
	return res, nil
}

// verificationID is the id of the verification workflow of an address; its
// hash key derives from the secrets key, so the id holds no address. An
// address that is gone is store.ErrNotFound.
func (s *Service) verificationID(ctx context.Context, q store.Querier, u User, kind store.Kind, address string) (string, error) {
	key, err := secrets.Derive(s.SecretsKey, "workflow ids")
	if err != nil {
		return "", fmt.Errorf("verification workflow id: %w", err)
	}
	id, err := store.AddressID(ctx, q, u.Tenant, u.ID, kind, address)
	if err != nil {
		return "", err
	}
	return workflows.VerificationWorkflowID(key, u.Tenant, u.ID, address, id), nil
}
