package directory

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/nyaruka/phonenumbers"

	"github.com/tocsin/tocsin/api/directory/directoryservice"
	"github.com/tocsin/tocsin/api/model"
	"github.com/tocsin/tocsin/api/rest"
	"github.com/tocsin/tocsin/internal/emailaddr"
	"github.com/tocsin/tocsin/storage"
	store "github.com/tocsin/tocsin/storage/directory"
)

func nowUTC() time.Time { return time.Now().UTC().Truncate(time.Second) }

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
	return pathAddress(p.param(), p.EmailAddress, emailaddr.Normalize)
}

// PhonePath adds a phone number to the user path.
type PhonePath struct {
	UserPath
	PhoneNumber string `path:"phoneNumber" maxLength:"100" doc:"The number in E.164, URL-encoded (%2B for +)." example:"%2B12025550123"`
}

func (p PhonePath) address() (string, error) {
	return pathAddress(p.param(), p.PhoneNumber, func(s string) (string, error) { return normalizePhone(s, "") })
}

// pathAddress unescapes segment, the path parameter param, and normalizes
// it; either failing is a 400 naming the parameter.
func pathAddress(param, segment string, normalize func(string) (string, error)) (string, error) {
	raw, err := url.PathUnescape(segment)
	if err != nil {
		return "", rest.Invalid("path", param, "not a valid path segment", segment)
	}
	a, err := normalize(raw)
	if err != nil {
		return "", rest.Invalid("path", param, err.Error(), raw)
	}
	return a, nil
}

// Kinds of the address paths.
func (EmailPath) kind() store.Kind { return store.KindEmail }
func (PhonePath) kind() store.Kind { return store.KindPhone }

// Names of the address parameters of the paths.
func (EmailPath) param() string { return "emailAddress" }
func (PhonePath) param() string { return "phoneNumber" }

// addressPath is the path of one of a user's email addresses or phone
// numbers.
type addressPath interface {
	userRef
	kind() store.Kind
	param() string
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

// registerAddress adds the operations on a user's addresses of the kind of
// the path P, collected at path: create, whose body check answers the
// function that adds the address to a user, and get (with read) and remove
// on one address. Operation ids name the kind ("Email"), descriptions
// call an address word.
func registerAddress[P addressPath, B, M any](api huma.API, h *handlers, path, kind, word, createDoc string,
	check func(ctx context.Context, body B) (func(u directoryservice.User) (M, error), error),
	read func(ctx context.Context, u directoryservice.User, address string) (M, error)) {
	var zero P
	name := what(zero.kind())
	rest.Register(api, op("usersCreateNew"+kind, http.MethodPost, path, http.StatusCreated, "Add "+an(name), createDoc, http.StatusConflict),
		func(ctx context.Context, in *userWith[B]) (*rest.Output[M], error) {
			add, err := check(ctx, in.Body)
			if err != nil {
				return nil, err
			}
			return addToUser(ctx, h, in.UserPath, "the user already has this "+name, add)
		})

	one := path + "/{" + zero.param() + "}"
	rest.Register(api, op("usersGet"+kind, http.MethodGet, one, 0, "Read "+an(name), "Answers the "+word+" with its verification status."),
		func(ctx context.Context, in *P) (*rest.Output[M], error) {
			p := *in
			var addr string
			return readOfUser(ctx, h, p, func() (err error) { addr, err = p.address(); return err }, name,
				func(u directoryservice.User) (M, error) { return read(ctx, u, addr) })
		})
	rest.Register(api, op("usersRemove"+kind, http.MethodDelete, one, http.StatusNoContent, "Remove "+an(name),
		"Removes the "+word+" with its verification state and pending code."),
		func(ctx context.Context, in *P) (*struct{}, error) { return h.removeAddress(ctx, *in) })
}

func (h *handlers) registerContact(api huma.API) {
	registerAddress[EmailPath](api, h, "/{tenantId}/directory/{directoryId}/users/{userId}/contact/emails", "Email", "address",
		"Adds an address (RFC 5322, stored in lower case) to the user, Unverified. An address the user already has is a 409."+
			limitDoc(storage.MaxEmailsPerPerson, "email addresses"),
		func(ctx context.Context, body model.CreateEmailCommand) (func(directoryservice.User) (model.EmailAddress, error), error) {
			addr, err := emailaddr.Normalize(body.Address)
			if err != nil {
				return nil, rest.Invalid("body", "address", err.Error(), body.Address)
			}
			label := body.Label
			if label == "" {
				label = "work"
			}
			return func(u directoryservice.User) (model.EmailAddress, error) {
				e, err := h.users.AddEmail(ctx, u, addr, label)
				return emailOut(e), overLimit(err, "address")
			}, nil
		},
		func(ctx context.Context, u directoryservice.User, addr string) (model.EmailAddress, error) {
			e, err := store.GetEmail(ctx, h.d.DB, u.Tenant, u.ID, addr)
			return emailOut(e), err
		})

	registerAddress[PhonePath](api, h, "/{tenantId}/directory/{directoryId}/users/{userId}/contact/phones", "Phone", "number",
		"Adds a number to the user, stored in E.164, Unverified. A number of type Fax is reached by the fax channel only (canText and canCall false). "+
			"A number that cannot be parsed is a 400 naming the field; one the user already has is a 409."+
			limitDoc(storage.MaxPhonesPerPerson, "phone numbers"),
		func(ctx context.Context, body model.CreatePhoneCommand) (func(directoryservice.User) (model.PhoneNumber, error), error) {
			p, err := newPhone(body)
			if err != nil {
				return nil, err
			}
			return func(u directoryservice.User) (model.PhoneNumber, error) {
				added, err := h.users.AddPhone(ctx, u, phoneIn(p))
				return phoneOut(added), overLimit(err, "number")
			}, nil
		},
		func(ctx context.Context, u directoryservice.User, num string) (model.PhoneNumber, error) {
			p, err := store.GetPhone(ctx, h.d.DB, u.Tenant, u.ID, num)
			return phoneOut(p), err
		})
}

// newPhone checks the body of a new phone number: the number parses, and a
// Fax line takes neither text messages nor calls.
func newPhone(body model.CreatePhoneCommand) (model.PhoneNumber, error) {
	num, err := normalizePhone(body.Number, string(body.Country))
	if err != nil {
		return model.PhoneNumber{}, rest.Invalid("body", "number", err.Error(), body.Number)
	}
	p := model.PhoneNumber{Number: num, Type: body.Type, CanText: true, CanCall: true}
	if p.Type == "" {
		p.Type = "Mobile"
	}
	if p.Type == "Fax" {
		// A fax line takes faxes only.
		p.CanText, p.CanCall = false, false
		if body.CanText != nil && *body.CanText {
			return model.PhoneNumber{}, rest.Invalid("body", "canText", "a Fax number cannot take text messages", true)
		}
		if body.CanCall != nil && *body.CanCall {
			return model.PhoneNumber{}, rest.Invalid("body", "canCall", "a Fax number cannot take voice calls", true)
		}
	}
	if body.CanText != nil {
		p.CanText = *body.CanText
	}
	if body.CanCall != nil {
		p.CanCall = *body.CanCall
	}
	return p, nil
}
