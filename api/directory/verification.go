package directory

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/tocsin/tocsin/api/model"
	"github.com/tocsin/tocsin/api/rest"
	"github.com/tocsin/tocsin/storage"
	store "github.com/tocsin/tocsin/storage/directory"
)

func (h *handlers) registerVerification(api huma.API) {
	registerVerification[emailWith[model.CreateVerificationNonceCommand], emailWith[model.SendVerificationCommand], emailWith[model.VerifyEmailCommand]](api, h,
		"/{tenantId}/directory/{directoryId}/users/{userId}/contact/emails/{emailAddress}/verification", "Email", "by email")
	registerVerification[phoneWith[model.CreateVerificationNonceCommand], phoneWith[model.SendVerificationCommand], phoneWith[model.VerifyPhoneCommand]](api, h,
		"/{tenantId}/directory/{directoryId}/users/{userId}/contact/phones/{phoneNumber}/verification", "Phone", "by text message")
}

// emailWith and phoneWith are the inputs of an operation on one of a user's
// email addresses or phone numbers with a body B.
type (
	emailWith[B any] struct {
		EmailPath
		Body B
	}
	phoneWith[B any] struct {
		PhonePath
		Body B
	}
)

func (in emailWith[B]) body() B { return in.Body }
func (in phoneWith[B]) body() B { return in.Body }

// addressIn is the input of an operation on an address with a body B.
type addressIn[B any] interface {
	addressPath
	body() B
}

// verifyCommand is the body of a verify operation: the code, documented
// for the kind of address.
type verifyCommand interface {
	model.VerifyEmailCommand | model.VerifyPhoneCommand
}

// registerVerification adds the nonce, resend and verify operations below
// path on the addresses of one kind, which kind names in operation ids
// ("Email"), and the testing operation that lists their pending codes; by
// tells how the code is sent.
func registerVerification[N addressIn[model.CreateVerificationNonceCommand], R addressIn[model.SendVerificationCommand], V addressIn[C], C verifyCommand](
	api huma.API, h *handlers, path, kind, by string) {
	nonceDoc := fmt.Sprintf("Reserves a client-generated nonce that one resend of the verification code then spends (within %s). "+
		"At most %d nonces per address (across the tenant's users) within %s; more are a 429 with Retry-After. "+
		"A nonce already reserved for the address, an address already verified, or a phone number that cannot take texts (a Fax, or canText false: codes are sent by text only) is a 409.",
		store.NonceTTL, store.NonceLimit, store.NonceWindow)
	resendDoc := "Spends a nonce and has the address's verification workflow (verify-<tenant>-<user>-<keyed hash of the address>) generate a new code and send it %s. " +
		"The new code replaces any earlier one. Answers 202 at once; the code arrives shortly. An unknown, spent or expired nonce is a 400; an address already verified, or a phone number that cannot take texts, a 409 (the nonce is not spent)."
	verifyDoc := "Compares the code with the most recently sent one. A match verifies the address (200). A wrong code is a 400 telling the attempts left; " +
		"the %dth wrong code kills the code. An expired or dead code is a 410 (resend to get a new one); no code sent, or an address already verified, is a 409."

	noun := strings.ToLower(kind)
	var zero V
	rest.Register(api, op("usersCreate"+kind+"VerificationNonce", http.MethodPost, path+"/nonce", http.StatusCreated,
		"Reserve a nonce for "+an(noun)+" verification", nonceDoc, http.StatusConflict, http.StatusTooManyRequests),
		func(ctx context.Context, in *N) (*rest.Output[model.ResendVerificationToken], error) {
			return h.nonce(ctx, *in, (*in).body().Nonce)
		})
	rest.Register(api, op("usersResend"+kind+"Verification", http.MethodPost, path+"/resend", http.StatusAccepted,
		"Send a new "+noun+" verification code", fmt.Sprintf(resendDoc, by), http.StatusConflict),
		func(ctx context.Context, in *R) (*struct{}, error) {
			return nil, h.resend(ctx, *in, (*in).body().Nonce)
		})
	rest.Register(api, op("usersVerify"+kind, http.MethodPost, path+"/verify", 0,
		"Verify "+an(what(zero.kind())), fmt.Sprintf(verifyDoc, store.MaxAttempts), http.StatusConflict, http.StatusGone),
		func(ctx context.Context, in *V) (*rest.Output[model.VerificationResponse], error) {
			return h.verify(ctx, *in, struct{ Code string }((*in).body()).Code)
		})
	rest.Register(api, op("testGetPending"+kind+"Verifications", http.MethodGet, "/{tenantId}/testing/verifications/"+noun, 0,
		"List pending "+noun+" verifications (testing)", testingDoc),
		func(ctx context.Context, in *struct {
			TenantID string `path:"tenantId" maxLength:"20" pattern:"^(0|[1-9][0-9]*)$" example:"1001"`
		}) (*rest.Output[[]model.PendingVerificationAttempt], error) {
			return h.pending(ctx, zero.kind())
		})
}

// an puts the indefinite article before s.
func an(s string) string {
	if strings.ContainsRune("aeiou", rune(s[0])) {
		return "an " + s
	}
	return "a " + s
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
	case errors.Is(err, store.ErrCannotText):
		return nil, cannotText()
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
	case errors.Is(err, store.ErrCannotText):
		return cannotText()
	}
	return h.fail(ctx, err, what(kind))
}

// cannotText is the answer for a phone number no code can be texted to.
func cannotText() error {
	return rest.Conflict("the phone number cannot take texts (it is a Fax number, or was added with canText false) and verification codes are sent by text only: " +
		"no nonce was reserved or spent. To verify it, remove the number and add it again with canText true")
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
		left := fmt.Sprintf("%d attempts left", res.Remaining)
		if res.Remaining == 1 {
			left = "1 attempt left"
		}
		return nil, rest.Invalid("body", "code", "the code does not match; "+left, nil)
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
