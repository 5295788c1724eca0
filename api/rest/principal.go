package rest

import (
	"context"

	"github.com/tocsin/tocsin/internal/auth"
)

type principalKey struct{}

// WithPrincipal stores the verified caller in ctx.
func WithPrincipal(ctx context.Context, p auth.Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// Caller returns the verified caller of the request. Operations that need a
// token always have one; public operations get the zero Principal.
func Caller(ctx context.Context) auth.Principal {
	p, _ := ctx.Value(principalKey{}).(auth.Principal)
	return p
}

// Tenant returns the tenant of the verified caller.
func Tenant(ctx context.Context) string { return Caller(ctx).Tenant }

type requestIDKey struct{}

// WithRequestID stores the request id in ctx.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// RequestID returns the id of the request, as sent in X-Request-ID.
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}
