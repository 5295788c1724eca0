package directory

import (
	"context"
	"errors"
	"net/http"
	"net/mail"
	"net/url"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/nyaruka/phonenumbers"

	"github.com/tocsin/tocsin/api/directory/directoryservice"
	"github.com/tocsin/tocsin/api/model"
	"github.com/tocsin/tocsin/api/rest"
	store "github.com/tocsin/tocsin/storage/directory"
)

func nowUTC() time.Time { return time.Now().UTC().Truncate(time.Second) }

// normalizeEmail checks that s is an RFC 5322 addr-spec (no display name) and
// returns it in lower case.
func normalizeEmail(s string) (string, error) {
	s = strings.TrimSpace(s)
	a, err := mail.ParseAddress(s)
	if err != nil {
		return "", errors.New("not an RFC 5322 email address")
	}
	if a.Name != "" || strings.ContainsAny(s, "<>,") {
		return "", errors.New("give the address alone, without a display name or angle brackets")
	}
	at := strings.LastIndexByte(a.Address, '@')
	if at < 1 || at == len(a.Address)-1 || len(a.Address) > 254 {
		return "", errors.New("not an RFC 5322 email address")
	}
	return strings.ToLower(a.Address), nil
}

// normalizePhone parses a number (E.164, or national with region) with
// libphonenumber's metadata and returns it in E.164.
func normalizePhone(s, region string) (string, error) {
	if region == "" {
		region = "ZZ"
	}
	n, err := phonenumbers.Parse(strings.TrimSpace(s), strings.ToUpper(region))
	if err != nil {
		return "", errors.New("not a phone number: give it in E.164 form (+ and country code), or with its country")
	}
	if !phonenumbers.IsValidNumber(n) {
		return "", errors.New("not a valid phone number for its country")
	}
	return phonenumbers.Format(n, phonenumbers.E164), nil
}

// EmailPath adds an email address to the user path.
type EmailPath struct {
	UserPath
	EmailAddress string `path:"emailAddress" maxLength:"800" doc:"The email address, URL-encoded (%40 for @); matched case-insensitively." example:"ada%40example.com"`
}

func (p EmailPath) address() (string, error) {
	raw, err := url.PathUnescape(p.EmailAddress)
	if err != nil {
		return "", rest.Invalid("path", "emailAddress", "not a valid path segment", p.EmailAddress)
	}
	a, err := normalizeEmail(raw)
	if err != nil {
		return "", rest.Invalid("path", "emailAddress", err.Error(), raw)
	}
	return a, nil
}

// PhonePath adds a phone number to the user path.
type PhonePath struct {
	UserPath
	PhoneNumber string `path:"phoneNumber" maxLength:"100" doc:"The number in E.164, URL-encoded (%2B for +)." example:"%2B12025550123"`
}

func (p PhonePath) address() (string, error) {
	raw, err := url.PathUnescape(p.PhoneNumber)
	if err != nil {
		return "", rest.Invalid("path", "phoneNumber", "not a valid path segment", p.PhoneNumber)
	}
	n, err := normalizePhone(raw, "")
	if err != nil {
		return "", rest.Invalid("path", "phoneNumber", err.Error(), raw)
	}
	return n, nil
}

// Kinds of the address paths.
func (EmailPath) kind() store.Kind { return store.KindEmail }
func (PhonePath) kind() store.Kind { return store.KindPhone }

// addressPath is the path of one of a user's email addresses or phone
// numbers.
type addressPath interface {
	userRef
	kind() store.Kind
	address() (string, error)
}

// what names what an address of kind is.
func what(kind store.Kind) string {
	if kind == store.KindPhone {
		return "phone number"
	}
	return "email address"
}

// addressOf parses the address of the path, then the user.
func addressOf(ctx context.Context, p addressPath) (directoryservice.User, string, error) {
	addr, err := p.address()
	if err != nil {
		return directoryservice.User{}, "", err
	}
	u, err := p.user(ctx)
	return u, addr, err
}

// removeAddress removes the address of the path with its verification
// state and pending code.
func (h *handlers) removeAddress(ctx context.Context, p addressPath) (*struct{}, error) {
	u, addr, err := addressOf(ctx, p)
	if err != nil {
		return nil, err
	}
	return nil, h.fail(ctx, h.users.RemoveAddress(ctx, u, p.kind(), addr), what(p.kind()))
}

// registerAddress adds the operations get and remove on one of a user's
// addresses, of the kind of the path P; get answers what read finds.
func registerAddress[P addressPath, M any](api huma.API, h *handlers, get, remove rest.Op,
	read func(ctx context.Context, u directoryservice.User, address string) (M, error)) {
	rest.Register(api, get, func(ctx context.Context, in *P) (*rest.Output[M], error) {
		p := *in
		var addr string
		return readOfUser(ctx, h, p, func() (err error) { addr, err = p.address(); return err }, what(p.kind()),
			func(u directoryservice.User) (M, error) { return read(ctx, u, addr) })
	})
	rest.Register(api, remove, func(ctx context.Context, in *P) (*struct{}, error) { return h.removeAddress(ctx, *in) })
}

func (h *handlers) registerContact(api huma.API) {
	const emails = "/{tenantId}/directory/{directoryId}/users/{userId}/contact/emails"
	rest.Register(api, op("usersCreateNewEmail", http.MethodPost, emails, http.StatusCreated, "Add an email address",
		"Adds an address (RFC 5322, stored in lower case) to the user, Unverified. An address the user already has is a 409.", http.StatusConflict),
		func(ctx context.Context, in *struct {
			UserPath
			Body model.CreateEmailCommand
		}) (*rest.Output[model.EmailAddress], error) {
			addr, err := normalizeEmail(in.Body.Address)
			if err != nil {
				return nil, rest.Invalid("body", "address", err.Error(), in.Body.Address)
			}
			label := in.Body.Label
			if label == "" {
				label = "work"
			}
			return addToUser(ctx, h, in.UserPath, "the user already has this email address",
				func(u directoryservice.User) (model.EmailAddress, error) {
					e, err := h.users.AddEmail(ctx, u, addr, label)
					return emailOut(e), err
				})
		})

	const email = emails + "/{emailAddress}"
	registerAddress[EmailPath](api, h,
		op("usersGetEmail", http.MethodGet, email, 0, "Read an email address", "Answers the address with its verification status."),
		op("usersRemoveEmail", http.MethodDelete, email, http.StatusNoContent, "Remove an email address",
			"Removes the address with its verification state and pending code."),
		func(ctx context.Context, u directoryservice.User, addr string) (model.EmailAddress, error) {
			e, err := store.GetEmail(ctx, h.d.DB, u.Tenant, u.ID, addr)
			return emailOut(e), err
		})

	const phones = "/{tenantId}/directory/{directoryId}/users/{userId}/contact/phones"
	rest.Register(api, op("usersCreateNewPhone", http.MethodPost, phones, http.StatusCreated, "Add a phone number",
		"Adds a number to the user, stored in E.164, Unverified. A number of type Fax is reached by the fax channel only (canText and canCall false). "+
			"A number that cannot be parsed is a 400 naming the field; one the user already has is a 409.", http.StatusConflict),
		func(ctx context.Context, in *struct {
			UserPath
			Body model.CreatePhoneCommand
		}) (*rest.Output[model.PhoneNumber], error) {
			num, err := normalizePhone(in.Body.Number, in.Body.Country)
			if err != nil {
				return nil, rest.Invalid("body", "number", err.Error(), in.Body.Number)
			}
			p := model.PhoneNumber{Number: num, Type: in.Body.Type, CanText: true, CanCall: true}
			if p.Type == "" {
				p.Type = "Mobile"
			}
			if p.Type == "Fax" {
				// A fax line takes faxes only.
				p.CanText, p.CanCall = false, false
				if in.Body.CanText != nil && *in.Body.CanText {
					return nil, rest.Invalid("body", "canText", "a Fax number cannot take text messages", true)
				}
				if in.Body.CanCall != nil && *in.Body.CanCall {
					return nil, rest.Invalid("body", "canCall", "a Fax number cannot take voice calls", true)
				}
			}
			if in.Body.CanText != nil {
				p.CanText = *in.Body.CanText
			}
			if in.Body.CanCall != nil {
				p.CanCall = *in.Body.CanCall
			}
			return addToUser(ctx, h, in.UserPath, "the user already has this phone number",
				func(u directoryservice.User) (model.PhoneNumber, error) {
					added, err := h.users.AddPhone(ctx, u, phoneIn(p))
					return phoneOut(added), err
				})
		})

	const phone = phones + "/{phoneNumber}"
	registerAddress[PhonePath](api, h,
		op("usersGetPhone", http.MethodGet, phone, 0, "Read a phone number", "Answers the number with its verification status."),
		op("usersRemovePhone", http.MethodDelete, phone, http.StatusNoContent, "Remove a phone number",
			"Removes the number with its verification state and pending code."),
		func(ctx context.Context, u directoryservice.User, num string) (model.PhoneNumber, error) {
			p, err := store.GetPhone(ctx, h.d.DB, u.Tenant, u.ID, num)
			return phoneOut(p), err
		})
}
