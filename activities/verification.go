package activities

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/tocsin/tocsin/channels"
	dirstore "github.com/tocsin/tocsin/storage/directory"
)

// Error types of verification activities that a retry cannot fix.
const (
	ErrTypeUndeliverable = "Undeliverable"
	ErrTypeNoProvider    = "NoProvider"
)

// VerificationCode identifies one resend of a verification code.
type VerificationCode struct {
	Tenant  string
	Person  int64
	Kind    dirstore.Kind
	Address string
	// Seq is the resend's number; only the newest resend stores its code.
	Seq        int
	WorkflowID string
	TTL        time.Duration
}

// CodeSent says what SendVerificationCode did.
type CodeSent struct {
	// Sent is false when a newer resend superseded this one or the address
	// is gone; nothing was sent.
	Sent              bool
	ExpiresAt         time.Time
	ProviderMessageID string
}

// SendVerificationCode generates a fresh random code, stores its hash as the
// address's live code and sends it by email or text message under an
// idempotency key of its own. A retried attempt generates, stores and sends
// a new code, so the code that arrives last is always the one that verifies. The plain code is kept (for the testing
// operations) only when TOCSIN_TESTING_ENDPOINTS is on.
func (a *Activities) SendVerificationCode(ctx context.Context, in VerificationCode) (CodeSent, error) {
	code, err := dirstore.NewCode()
	if err != nil {
		return CodeSent{}, err
	}
	salt, err := dirstore.NewSalt()
	if err != nil {
		return CodeSent{}, err
	}
	key, err := dirstore.CodeKey(a.Config.SecretsKey)
	if err != nil {
		return CodeSent{}, err
	}
	c := dirstore.Code{Tenant: in.Tenant, Person: in.Person, Kind: in.Kind, Address: in.Address, Seq: in.Seq,
		Salt: salt, Hash: dirstore.HashCode(key, salt, code), TTL: in.TTL}
	if a.Config.TestingEndpoints {
		c.TestingCode = code
	}
	stored, err := dirstore.StoreCode(ctx, a.DB, c)
	if err != nil {
		return CodeSent{}, err
	}
	if !stored.Stored {
		return CodeSent{}, nil
	}
	ch := channels.Email
	if in.Kind == dirstore.KindPhone {
		ch = channels.Text
	}
	sender, err := a.Senders.For(ch)
	if err != nil {
		return CodeSent{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf("%s: %v", ch, err), ErrTypeNoProvider, err)
	}
	minutes := int(in.TTL.Round(time.Minute) / time.Minute)
	msg := channels.Message{
		// Each code is a new message: a key of its own, also when a
		// retried workflow task runs this local activity again from its
		// first attempt.
		Key:     fmt.Sprintf("%s-%d-%s", in.WorkflowID, in.Seq, rand.Text()),
		Tenant:  in.Tenant,
		Channel: ch,
		To:      in.Address,
		Subject: "Your verification code",
		Text:    fmt.Sprintf("Your verification code is %s. It expires in %d minutes. If you did not ask for it, ignore this message.", code, minutes),
	}
	if ch == channels.Text {
		msg.Text = fmt.Sprintf("Your verification code is %s (valid %d min).", code, minutes)
	}
	res, err := sender.Send(ctx, []channels.Message{msg})
	if err != nil {
		return CodeSent{}, fmt.Errorf("send verification code: %w", err)
	}
	if len(res) != 1 {
		return CodeSent{}, errors.New("send verification code: the provider gave no result")
	}
	switch r := res[0]; {
	case r.Outcome == channels.Sent || r.Outcome == channels.Delivered:
		return CodeSent{Sent: true, ExpiresAt: stored.ExpiresAt, ProviderMessageID: r.ProviderMessageID}, nil
	case r.Permanent:
		return CodeSent{}, temporal.NewNonRetryableApplicationError("the provider refused the message: "+r.Error, ErrTypeUndeliverable, nil)
	default:
		return CodeSent{}, fmt.Errorf("send verification code: %s", r.Error)
	}
}

// VerificationEnd identifies a resend whose verification ends.
type VerificationEnd struct {
	Tenant  string
	Person  int64
	Kind    dirstore.Kind
	Address string
	Seq     int
	// Reason of a failure.
	Reason string
}

// ExpireVerification marks the resend's code Expired if it is still pending
// and past its expiry, and returns the verification's status ("" when the
// address or user is gone).
func (a *Activities) ExpireVerification(ctx context.Context, in VerificationEnd) (string, error) {
	st, err := dirstore.ExpireCode(ctx, a.DB, in.Tenant, in.Person, in.Kind, in.Address, in.Seq)
	return string(st), err
}

// FailVerification marks the resend's verification Failed because its code
// could not be delivered.
func (a *Activities) FailVerification(ctx context.Context, in VerificationEnd) error {
	return dirstore.FailCode(ctx, a.DB, in.Tenant, in.Person, in.Kind, in.Address, in.Seq, in.Reason)
}

// PruneNonces deletes up to batch reserved nonces and up to batch nonce
// counts of every tenant older than dirstore.NonceRetention.
func (a *Activities) PruneNonces(ctx context.Context, batch int) (dirstore.PrunedNonces, error) {
	return dirstore.PruneNonces(ctx, a.DB, batch)
}
