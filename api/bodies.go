package api

import (
	"bytes"
	"io"
	"net/http"
	"regexp"
	"strings"

	"github.com/danielgtaylor/huma/v2"
	"github.com/gofiber/fiber/v2"

	"github.com/tocsin/tocsin/api/rest"
)

// streamedRoutes are the operations marked rest.StreamBody, as method and
// path patterns.
type streamedRoutes struct {
	routes []streamedRoute
}

type streamedRoute struct {
	method string
	path   *regexp.Regexp
	// limit is the operation's own body limit (huma's MaxBodyBytes); 0
	// means the server's.
	limit int64
}

var pathParam = regexp.MustCompile(`\\\{[^}]+\\\}`)

// collect finds the marked operations of the document.
func (s *streamedRoutes) collect(doc *huma.OpenAPI) {
	for path, item := range doc.Paths {
		for method, op := range map[string]*huma.Operation{
			http.MethodPost: item.Post, http.MethodPut: item.Put, http.MethodPatch: item.Patch,
		} {
			if op == nil || op.Metadata[rest.StreamBody] != true {
				continue
			}
			re := pathParam.ReplaceAllString(regexp.QuoteMeta(path), `[^/]+`)
			s.routes = append(s.routes, streamedRoute{method: method, path: regexp.MustCompile("^" + re + "/?$"), limit: op.MaxBodyBytes})
		}
	}
}

// match reports whether method and path are a streamed operation, with the
// operation's own body limit (0 for the server's).
func (s *streamedRoutes) match(method, path string) (bool, int64) {
	for _, r := range s.routes {
		if r.method == method && r.path.MatchString(path) {
			return true, r.limit
		}
	}
	return false, 0
}

// drainLimit is how much of a body a streamed operation left unread is
// drained so the connection can serve the next request; past it the
// connection is closed.
const drainLimit = 1 << 20

// bufferBodies enforces limit on every request body (a streamed operation's
// own MaxBodyBytes instead, when it has one). Bodies of streamed operations
// are left to the operation; every other body is read into
// memory here, as fasthttp does without streaming. A declared length over
// the limit is answered 413 before any of the body is read.
func bufferBodies(limit int, streamed *streamedRoutes) fiber.Handler {
	return func(c *fiber.Ctx) error {
		req := c.Request()
		isStreamed, own := streamed.match(c.Method(), strings.TrimRight(c.Path(), "/"))
		if !isStreamed {
			isStreamed, own = streamed.match(c.Method(), c.Path())
		}
		lim := int64(limit)
		if isStreamed && own > 0 {
			lim = own
		}
		if cl := req.Header.ContentLength(); int64(cl) > lim {
			c.Context().SetConnectionClose()
			return fiber.ErrRequestEntityTooLarge
		}
		stream := req.BodyStream()
		if stream == nil {
			return c.Next()
		}
		if isStreamed {
			err := c.Next()
			// What the operation left unread would be taken for the next request.
			if n, _ := io.CopyN(io.Discard, stream, drainLimit); n == drainLimit {
				c.Context().SetConnectionClose()
			}
			return err
		}
		body, err := io.ReadAll(io.LimitReader(stream, int64(limit)+1))
		if err != nil {
			c.Context().SetConnectionClose()
			return fiber.NewError(http.StatusBadRequest, "the request body could not be read")
		}
		if len(body) > limit {
			c.Context().SetConnectionClose()
			return fiber.ErrRequestEntityTooLarge
		}
		req.SetBodyStream(bytes.NewReader(body), len(body))
		return c.Next()
	}
}
