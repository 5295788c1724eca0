package directory

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"

	"github.com/danielgtaylor/huma/v2"

	"github.com/tocsin/tocsin/api/model"
	"github.com/tocsin/tocsin/api/rest"
	"github.com/tocsin/tocsin/storage"
	store "github.com/tocsin/tocsin/storage/directory"
)

func (h *handlers) registerVerification(api huma.API) {
	nonceDoc := fmt.Sprintf("Reserves a client-generated nonce that one resend of the verification code then spends (within %s). "+
		"At most %d nonces per address (across the tenant's users) within %s; more are a 429 with Retry-After. "+
		"A nonce already reserved for the address, or an address already verified, is a 409.",
		store.NonceTTL, store.NonceLimit, store.NonceWindow)
	resendDoc := "Spends a nonce and has the address's verification workflow (verify-<tenant>-<user>-<keyed hash of the address>) generate a new code and send it %s. " +
		"The new code replaces any earlier one. Answers 202 at once; the code arrives shortly. An unknown, spent or expired nonce is a 400; an address already verified a 409."
	verifyDoc := "Compares the code with the most recently sent one. A match verifies the address (200). A wrong code is a 400 telling the attempts left; " +
		"the %dth wrong code kills the code. An expired or dead code is a 410 (resend to get a new one); no code sent, or an address already verified, is a 409."

	const email = "/{tenantId}/directory/{directoryId}/users/{userId}/contact/emails/{emailAddress}/verification"
	rest.Register(api, op("usersCreateEmailVerificationNonce", http.MethodPost, email+"/nonce", http.StatusCreated,
		"Reserve a nonce for an email verification", nonceDoc, http.StatusConflict, http.StatusTooManyRequests),
		func(ctx context.Context, in *struct {
			EmailPath
			Body model.CreateVerificationNonceCommand
		}) (*rest.Output[model.ResendVerificationToken], error) {
			return h.nonce(ctx, in.EmailPath, in.Body.Nonce)
		})
	rest.Register(api, op("usersResendEmailVerification", http.MethodPost, email+"/resend", http.StatusAccepted,
		"Send a new email verification code", fmt.Sprintf(resendDoc, "by email"), http.StatusConflict),
		func(ctx context.Context, in *struct {
			EmailPath
			Body model.SendVerificationCommand
		}) (*struct{}, error) {
			return nil, h.resend(ctx, in.EmailPath, in.Body.Nonce)
		})
	rest.Register(api, op("usersVerifyEmail", http.MethodPost, email+"/verify", 0,
		"Verify an email address", fmt.Sprintf(verifyDoc, store.MaxAttempts), http.StatusConflict, http.StatusGone),
		func(ctx context.Context, in *struct {
			EmailPath
			Body model.VerifyEmailCommand
		}) (*rest.Output[model.VerificationResponse], error) {
			return h.verify(ctx, in.EmailPath, in.Body.Code)
		})

	const phone = "/{tenantId}/directory/{directoryId}/users/{userId}/contact/phones/{phoneNumber}/verification"
	rest.Register(api, op("usersCreatePhoneVerificationNonce", http.MethodPost, phone+"/nonce", http.StatusCreated,
		"Reserve a nonce for a phone verification", nonceDoc, http.StatusConflict, http.StatusTooManyRequests),
		func(ctx context.Context, in *struct {
			PhonePath
			Body model.CreateVerificationNonceCommand
		}) (*rest.Output[model.ResendVerificationToken], error) {
			return h.nonce(ctx, in.PhonePath, in.Body.Nonce)
		})
	rest.Register(api, op("usersResendPhoneVerification", http.MethodPost, phone+"/resend", http.StatusAccepted,
		"Send a new phone verification code", fmt.Sprintf(resendDoc, "by text message"), http.StatusConflict),
		func(ctx context.Context, in *struct {
			PhonePath
			Body model.SendVerificationCommand
		}) (*struct{}, error) {
			return nil, h.resend(ctx, in.PhonePath, in.Body.Nonce)
		})
	rest.Register(api, op("usersVerifyPhone", http.MethodPost, phone+"/verify", 0,
		"Verify a phone number", fmt.Sprintf(verifyDoc, store.MaxAttempts), http.StatusConflict, http.StatusGone),
		func(ctx context.Context, in *struct {
			PhonePath
			Body model.VerifyPhoneCommand
		}) (*rest.Output[model.VerificationResponse], error) {
			return h.verify(ctx, in.PhonePath, in.Body.Code)
		})

	rest.Register(api, op("testGetPendingEmailVerifications", http.MethodGet, "/{tenantId}/testing/verifications/email", 0,
		"List pending email verifications (testing)", testingDoc),
		func(ctx context.Context, in *struct {
			TenantID string `path:"tenantId" maxLength:"20" example:"1001"`
		}) (*rest.Output[[]model.PendingVerificationAttempt], error) {
			return h.pending(ctx, store.KindEmail)
		})
	rest.Register(api, op("testGetPendingPhoneVerifications", http.MethodGet, "/{tenantId}/testing/verifications/phone", 0,
		"List pending phone verifications (testing)", testingDoc),
		func(ctx context.Context, in *struct {
			TenantID string `path:"tenantId" maxLength:"20" example:"1001"`
		}) (*rest.Output[[]model.PendingVerificationAttempt], error) {
			return h.pending(ctx, store.KindPhone)
		})
}

const testingDoc = "Lists the tenant's live verification codes (address, user, sent, expiry and the code itself) so automated tests can complete verifications. " +
	"Served only when the server runs with TOCSIN_TESTING_ENDPOINTS=true, and a 404 otherwise. Codes are kept in plain form only while the worker runs with that switch too, and are erased when the code ends."

func (h *handlers) nonce(ctx context.Context, p addressPath, nonce string) (*rest.Output[model.ResendVerificationToken], error) {
	u, address, err := addressOf(ctx, p)
	if err != nil {
		return nil, err
	}
	kind := p.kind()
	r, err := h.users.ReserveNonce(ctx, u, kind, address, nonce)
	var rl *store.RateLimitedError
	switch {
	case errors.As(err, &rl):
		secs := int(math.Ceil(rl.RetryAfter.Seconds()))
		return nil, rest.Problem(http.StatusTooManyRequests,
			fmt.Sprintf("at most %d nonces per %s for one address; retry in %d seconds", store.NonceLimit, store.NonceWindow, secs)).
			WithHeader("Retry-After", strconv.Itoa(secs))
	case errors.Is(err, storage.ErrConflict):
		return nil, rest.Conflict("this nonce is already reserved for the " + what(kind))
	case errors.Is(err, store.ErrAlreadyVerified):
		return nil, rest.Conflict("the " + what(kind) + " is already verified")
	case err != nil:
		return nil, h.fail(ctx, err, what(kind))
	}
	return rest.Answer(model.ResendVerificationToken{
		Nonce: nonce, TargetType: model.ContactTargetType(kind.TargetType()), Address: address, ExpiresAt: r.ExpiresAt.UTC(), RemainingInWindow: r.Remaining,
	}), nil
}

func (h *handlers) resend(ctx context.Context, p addressPath, nonce string) error {
	u, address, err := addressOf(ctx, p)
	if err != nil {
		return err
	}
	kind := p.kind()
	err = h.users.Resend(ctx, u, kind, address, nonce)
	switch {
	case errors.Is(err, store.ErrNonceInvalid):
		return rest.Invalid("body", "nonce", "unknown, spent or expired nonce: reserve one with the nonce operation first", nonce)
	case errors.Is(err, store.ErrAlreadyVerified):
		return rest.Conflict("the " + what(kind) + " is already verified")
	}
	return h.fail(ctx, err, what(kind))
}

func (h *handlers) verify(ctx context.Context, p addressPath, code string) (*rest.Output[model.VerificationResponse], error) {
	u, address, err := addressOf(ctx, p)
	if err != nil {
		return nil, err
	}
	kind := p.kind()
	res, err := h.users.Verify(ctx, u, kind, address, code)
	if err != nil {
		return nil, h.fail(ctx, err, what(kind))
	}
	switch res.Outcome {
	case store.CheckVerified:
		return rest.Answer(model.VerificationResponse{
			TargetType: model.ContactTargetType(kind.TargetType()), Address: address, Status: model.VerificationVerified, Verified: true,
			VerifiedAt: res.VerifiedAt, Attempt: attemptOut(res.Attempt),
		}), nil
	case store.CheckWrong:
		return nil, rest.Invalid("body", "code", fmt.Sprintf("the code does not match; %d attempts left", res.Remaining), nil)
	case store.CheckExhausted:
		return nil, rest.Invalid("body", "code", "the code does not match and no attempts are left: the code is dead, resend to get a new one", nil)
	case store.CheckExpired:
		return nil, rest.Problem(http.StatusGone, "the code expired: reserve a nonce and resend to get a new one")
	case store.CheckDead:
		return nil, rest.Problem(http.StatusGone, "the code is dead (too many wrong attempts, or it could not be delivered): reserve a nonce and resend to get a new one")
	case store.CheckAlreadyVerified:
		return nil, rest.Conflict("the " + what(kind) + " is already verified")
	default:
		return nil, rest.Conflict("no code has been sent for this " + what(kind) + ": reserve a nonce and resend first")
	}
}

func (h *handlers) pending(ctx context.Context, kind store.Kind) (*rest.Output[[]model.PendingVerificationAttempt], error) {
	if !h.d.Config.TestingEndpoints {
		return nil, rest.NotFound("testing operation")
	}
	items, err := store.PendingVerifications(ctx, h.d.DB, rest.Tenant(ctx), kind)
	if err != nil {
		return nil, h.fail(ctx, err, "verification")
	}
	return rest.Answer(pendingOut(items)), nil
}
