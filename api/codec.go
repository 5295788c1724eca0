package api

import (
	"errors"
	"html"
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/cors"
	"go.temporal.io/sdk/converter"

	"github.com/tocsin/tocsin/api/rest"
	"github.com/tocsin/tocsin/internal/auth"
)

// CodecPath is where the payload codec endpoint is served: the Temporal UI's
// codec endpoint is the public URL followed by CodecPath, and the UI posts
// payloads to CodecPath/decode and CodecPath/encode.
const CodecPath = "/codec"

// codecCookie carries an operator's token for browsers (the Temporal UI),
// which cannot send an Authorization header of their own.
const codecCookie = "tocsin_codec"

// registerCodec mounts the payload codec endpoint the Temporal UI uses to
// show decrypted payloads, and the page where an operator signs in to it.
// Only tokens with the operator scope decode: a 401 without a token, a 403
// with one that lacks the scope.
func registerCodec(app *fiber.App, d rest.Deps, v *auth.Verifier) {
	g := app.Group(CodecPath)
	if len(d.Config.CodecAllowOrigins) > 0 {
		g.Use(cors.New(cors.Config{
			AllowOrigins:     strings.Join(d.Config.CodecAllowOrigins, ","),
			AllowMethods:     http.MethodPost,
			AllowHeaders:     "Content-Type, X-Namespace, Authorization, Authorization-Extras",
			AllowCredentials: true,
			MaxAge:           600,
		}))
	}
	g.Get("/session", func(c *fiber.Ctx) error { return sessionPage(c, "") })
	g.Post("/session", func(c *fiber.Ctx) error {
		secure := strings.HasPrefix(d.Config.PublicURL, "https://")
		if c.FormValue("signout") != "" {
			c.Cookie(&fiber.Cookie{Name: codecCookie, Value: "", Path: CodecPath, HTTPOnly: true, SameSite: fiber.CookieSameSiteStrictMode, Secure: secure, MaxAge: -1})
			return sessionPage(c, "Signed out.")
		}
		token := strings.TrimSpace(c.FormValue("token"))
		if t, ok := auth.BearerToken(token); ok {
			token = t
		}
		p, err := v.Verify(token)
		if err != nil {
			c.Status(http.StatusUnauthorized)
			return sessionPage(c, "The token was refused: "+err.Error())
		}
		if !p.HasScope(auth.ScopeOperator) {
			c.Status(http.StatusForbidden)
			return sessionPage(c, "The token lacks the scope "+auth.ScopeOperator+".")
		}
		c.Cookie(&fiber.Cookie{Name: codecCookie, Value: token, Path: CodecPath, HTTPOnly: true, SameSite: fiber.CookieSameSiteStrictMode, Secure: secure})
		return sessionPage(c, "Signed in as "+p.Subject+". This browser's Temporal UI now shows decoded payloads until the token expires or the browser closes.")
	})
	handler := adapt(converter.NewPayloadCodecHTTPHandler(d.Codec))
	for _, path := range []string{"/decode", "/encode"} {
		g.Post(path, func(c *fiber.Ctx) error {
			if err := authorizeOperator(c, v); err != nil {
				return err
			}
			if err := handler(c); err != nil {
				return err
			}
			return codecRefusal(c)
		})
	}
}

// codecRefusal turns the plain-text error the SDK's codec handler writes
// (payloads that are not JSON, or that its codec cannot open: a key id not
// in the ring, altered ciphertext) into a problem naming body.payloads,
// bounded as every problem is: the handler quotes what it was sent, a key
// id of 700 KB among it. It is nil when the handler answered 2xx.
func codecRefusal(c *fiber.Ctx) error {
	status := c.Response().StatusCode()
	if status < http.StatusBadRequest {
		return nil
	}
	msg := strings.TrimSpace(string(c.Response().Body()))
	c.Response().ResetBody()
	if status == http.StatusBadRequest {
		return rest.Invalid("body", "payloads", msg, nil)
	}
	return rest.Problem(status, msg)
}

// authorizeOperator accepts a bearer token, or else the token of the sign-in
// cookie, that carries the operator scope.
func authorizeOperator(c *fiber.Ctx, v *auth.Verifier) error {
	var tokens []string
	if raw, ok := auth.BearerToken(c.Get(fiber.HeaderAuthorization)); ok {
		tokens = append(tokens, raw)
	}
	if ck := c.Cookies(codecCookie); ck != "" {
		tokens = append(tokens, ck)
	}
	if len(tokens) == 0 {
		c.Set(fiber.HeaderWWWAuthenticate, `Bearer realm="tocsin"`)
		return rest.Problem(http.StatusUnauthorized, "an operator token is required: an Authorization: Bearer header, or sign in at "+CodecPath+"/session")
	}
	var lastErr error
	for _, tok := range tokens {
		p, err := v.Verify(tok)
		if err != nil {
			lastErr = err
			continue
		}
		if !p.HasScope(auth.ScopeOperator) {
			lastErr = errors.New("the token lacks the scope " + auth.ScopeOperator)
			continue
		}
		return nil
	}
	if errors.Is(lastErr, auth.ErrInvalidToken) {
		c.Set(fiber.HeaderWWWAuthenticate, `Bearer realm="tocsin", error="invalid_token"`)
		return rest.Problem(http.StatusUnauthorized, lastErr.Error())
	}
	return rest.Problem(http.StatusForbidden, lastErr.Error())
}

// OperatorTokenCommand mints a development token with the operator scope,
// as `make run` prints it: the tenant is any tenant id (every token names
// one; the codec ignores it).
const OperatorTokenCommand = "bin/tocsin token --tenant 1 --sub operator --scope operator"

// sessionPage is the sign-in form of the codec endpoint, with a note.
func sessionPage(c *fiber.Ctx, note string) error {
	c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
	c.Set(fiber.HeaderContentSecurityPolicy, "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'")
	c.Set(fiber.HeaderCacheControl, "no-store")
	msg := ""
	if note != "" {
		msg = "<p><strong>" + html.EscapeString(note) + "</strong></p>"
	}
	return c.SendString(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>tocsin payload codec</title>
<style>body{font-family:sans-serif;max-width:42rem;margin:2rem auto}textarea{width:100%}</style></head>
<body><h1>Read Temporal payloads</h1>` + msg + `
<p>tocsin encrypts every Temporal payload. To read them in the Temporal UI, paste a token with the <code>operator</code> scope
(<code>` + OperatorTokenCommand + `</code>). It is kept in a cookie that only this endpoint reads.</p>
<form method="post"><textarea name="token" rows="6" autocomplete="off" required></textarea>
<p><button type="submit">Sign in</button></p></form>
<form method="post"><input type="hidden" name="signout" value="1"><button type="submit">Sign out</button></form>
</body></html>`)
}
