package recipients

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/tocsin/tocsin/api/model"
	"github.com/tocsin/tocsin/api/rest"
	"github.com/tocsin/tocsin/internal/alertmsg"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/shorturls"
)

const shortenDescription = `Returns a short link ({public URL}/s/{code}) that redirects to the target
URL. Codes are 8 random base62 characters from a cryptographic source, unique
across all tenants. Only absolute http and https URLs are accepted. When the
tenant already shortened the same target with the same expiry, that code is
returned again (reused: true). The optional expiresAt must be in the future;
after it the link answers 410 Gone.`

type createShortInput struct {
	Body model.CreateShortenedUrlRequest
}

func (h *handlers) shortURL(s shorturls.ShortURL) model.ShortenedUrl {
	return model.ShortenedUrl{
		Code: s.Code, ShortURL: alertmsg.ShortLink(h.d.Config.PublicURL, s.Code),
		TargetURL: s.TargetURL, ExpiresAt: s.ExpiresAt, Clicks: s.Clicks, CreatedAt: s.CreatedAt,
	}
}

func (h *handlers) createShortenedURL(ctx context.Context, in *createShortInput) (*rest.Output[model.ShortenedUrlResponse], error) {
	target := strings.TrimSpace(in.Body.URL)
	if err := shorturls.CheckTarget(target); err != nil {
		return nil, rest.Invalid("body", "url", err.Error(), in.Body.URL)
	}
	if e := in.Body.ExpiresAt; e != nil && !e.After(time.Now()) {
		return nil, rest.Invalid("body", "expiresAt", "must be in the future", e.Format(time.RFC3339))
	}
	urls, err := shorturls.Create(ctx, h.d.DB, rest.Tenant(ctx), []string{target}, in.Body.ExpiresAt)
	if err != nil {
		return nil, h.failure(ctx, err)
	}
	return rest.Answer(model.ShortenedUrlResponse{ShortenedUrl: h.shortURL(urls[0]), Reused: urls[0].Reused}), nil
}

type followInput struct {
	Code string `path:"code" maxLength:"64" doc:"The code of the short link." example:"aZ3kP9qL"`
}

type followOutput struct {
	Status       int
	Location     string `header:"Location" doc:"The target URL."`
	CacheControl string `header:"Cache-Control" doc:"no-store, so that every click reaches the server and is counted."`
}

func (h *handlers) followShortenedURL(ctx context.Context, in *followInput) (*followOutput, error) {
	code, err := url.PathUnescape(in.Code)
	if err != nil {
		return nil, rest.NotFound("short link")
	}
	target, err := shorturls.Follow(ctx, h.d.DB, code)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return nil, rest.NotFound("short link")
	case errors.Is(err, shorturls.ErrExpired):
		return nil, rest.Problem(http.StatusGone, "the short link has expired")
	case err != nil:
		return nil, h.failure(ctx, err)
	}
	return &followOutput{Status: http.StatusFound, Location: target, CacheControl: "no-store"}, nil
}
