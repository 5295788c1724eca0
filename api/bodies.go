package api

import (
	"bytes"
	"errors"
	"io"
	"math"
	"mime"
	"mime/multipart"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humafiber"
	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/tocsin/tocsin/api/rest"
	"github.com/tocsin/tocsin/internal/config"
)

// routeLimits holds each operation's request body limit, decided from the
// method and path before any of the body is read.
type routeLimits struct {
	once   sync.Once
	doc    *huma.OpenAPI
	cfg    config.Config
	routes []routeLimit
	// fallback applies to requests that match no operation (they end in a
	// 404 or 405).
	fallback int
	// discard is how much of a refused body is read and dropped after the
	// refusal is sent; see closeAfterBody.
	discard int
	// lingering holds a slot for each connection closeAfterBody is reading.
	lingering chan struct{}
}

type routeLimit struct {
	method   string
	path     string   // the operation's path template, in fiber's spelling
	segments []string // "" matches any one segment (a path parameter)
	limit    int      // 0: the operation takes no body
	streamed bool     // the operation reads its body itself
}

// collect names the document whose operations get limits. It is read on
// the first request, once every operation is registered.
func (l *routeLimits) collect(doc *huma.OpenAPI, cfg config.Config) {
	l.doc, l.cfg = doc, cfg
}

// build reads every operation of the document: an operation without a
// request body takes none; a streamed one (rest.StreamBody) takes its
// MaxBodyBytes when it gives one, else the import limit when marked
// rest.ImportBody, else the file limit; a multipart one the file limit; any
// other its MaxBodyBytes (1 MiB unless it says).
func (l *routeLimits) build() {
	doc, cfg := l.doc, l.cfg
	fileLimit := int(cfg.FileSizeLimit) + 1<<20
	importLimit := int(cfg.ImportSizeLimit)
	if importLimit <= 0 {
		importLimit = fileLimit
	}
	// A refusal costs at most as much again as the largest upload.
	l.discard = 2 * fileLimit
	l.lingering = make(chan struct{}, maxLingering)
	l.fallback = cfg.BodyLimit
	if l.fallback <= 0 {
		l.fallback = 1 << 20
	}
	for path, item := range doc.Paths {
		for method, op := range map[string]*huma.Operation{
			http.MethodGet: item.Get, http.MethodHead: item.Head, http.MethodDelete: item.Delete, http.MethodOptions: item.Options,
			http.MethodPost: item.Post, http.MethodPut: item.Put, http.MethodPatch: item.Patch,
		} {
			if op == nil {
				continue
			}
			r := routeLimit{method: method, path: fiberPath(path), segments: templateSegments(path)}
			switch {
			case op.RequestBody == nil:
			case op.Metadata[rest.StreamBody] == true:
				r.streamed = true
				r.limit = fileLimit
				if op.Metadata[rest.ImportBody] == true {
					r.limit = importLimit
				}
				if op.MaxBodyBytes > 0 {
					r.limit = int(op.MaxBodyBytes)
				}
			case op.RequestBody.Content["multipart/form-data"] != nil:
				r.limit = fileLimit
			default:
				r.limit = int(op.MaxBodyBytes)
				if r.limit <= 0 {
					r.limit = l.fallback
				}
			}
			l.routes = append(l.routes, r)
		}
	}
}

// fiberPath is an OpenAPI path template as the router spells it, the route
// label of metrics and logs: /v2/alerts/{id} is /v2/alerts/:id.
func fiberPath(path string) string {
	return strings.NewReplacer("{", ":", "}", "").Replace(path)
}

func templateSegments(path string) []string {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	for i, s := range segs {
		if strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") {
			segs[i] = ""
		}
	}
	return segs
}

// match returns the operation serving method and the raw path, if any.
func (l *routeLimits) match(method, path string) (routeLimit, bool) {
	l.once.Do(l.build)
	if i := strings.IndexAny(path, "?#"); i >= 0 {
		path = path[:i]
	}
	path = strings.Trim(path, "/")
	n := strings.Count(path, "/") + 1
outer:
	for _, r := range l.routes {
		if r.method != method || len(r.segments) != n {
			continue
		}
		rest := path
		for _, want := range r.segments {
			seg, after, _ := strings.Cut(rest, "/")
			rest = after
			if seg == "" || (want != "" && !strings.EqualFold(seg, want)) {
				continue outer
			}
		}
		return r, true
	}
	return routeLimit{}, false
}

// limit is the body limit of a request to method and path.
func (l *routeLimits) limit(method, path string) int {
	l.once.Do(l.build)
	if r, ok := l.match(method, path); ok {
		return r.limit
	}
	return l.fallback
}

// declaredHeader carries, from headerReceived to the handlers, a declared
// body length over the route's limit. Clients cannot set it: it is removed
// from every request first.
const declaredHeader = "X-Tocsin-Declared-Length"

// readAfterHeader marks, from headerReceived to bufferBodies, a refused body
// to be read after the answer (see closeAfterBody). Clients cannot set it
// either.
const readAfterHeader = "X-Tocsin-Read-After"

// headerReceived runs as soon as a request's header is read, before fasthttp
// reads any of the body (with streamed bodies it would otherwise wait for
// the first byte). It gives the body bodyTimeout to arrive, the server's
// read timeout having covered the head only. A declared length over the
// route's limit is noted, so that bufferBodies answers 413 at once and
// closes the connection, and the body dropped, to be read after the answer
// unless the client waits for 100 Continue (it then sends none) or the body
// is longer than closeAfterBody reads.
func (l *routeLimits) headerReceived(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
	h.Del(declaredHeader)
	h.Del(readAfterHeader)
	conf := fasthttp.RequestConfig{ReadTimeout: bodyTimeout}
	cl := h.ContentLength()
	if cl <= 0 {
		return conf
	}
	uri := h.RequestURI()
	if i := bytes.Index(uri, []byte("://")); i >= 0 {
		// Absolute form: skip the scheme and authority.
		uri = uri[i+3:]
		if j := bytes.IndexByte(uri, '/'); j >= 0 {
			uri = uri[j:]
		} else {
			uri = []byte("/")
		}
	}
	if cl > l.limit(string(h.Method()), string(uri)) {
		h.Set(declaredHeader, strconv.Itoa(cl))
		if cl <= l.discard && len(h.Peek(fiber.HeaderExpect)) == 0 {
			h.Set(readAfterHeader, "1")
		}
		h.SetContentLength(0)
		h.Del(fiber.HeaderExpect)
	}
	return conf
}

// drainLimit is how much of a body a streamed operation left unread is
// drained before the answer so the connection can serve the next request;
// past it the answer is sent and the connection closed by closeAfterBody.
const drainLimit = 1 << 20

// lingerTime bounds how long closeAfterBody reads a refused body, and
// maxLingering how many connections it reads at once; past that, refused
// connections are closed once their answer is written, within answerTime.
const (
	lingerTime   = 10 * time.Second
	answerTime   = 2 * time.Second
	maxLingering = 64
)

// closeAfterBody sends the answer at once and closes the connection once
// the rest of the body is read and dropped, at most max bytes and for at
// most lingerTime.
//
// Closing a socket with unread data makes the kernel reset the connection,
// and a client still sending its body (as HTTP/1.1 clients do unless they
// asked for 100 Continue) may then see the reset instead of the answer. So
// the connection is taken from fasthttp (which would close it at once), the
// answer written, and the body read to its end before the close. Nothing of
// it is kept; max (twice the upload limit) bounds the bytes a refusal costs.
// A longer or slower body is cut off, and its client may see a reset.
// (Reading the body before answering would avoid the reset as well, but
// would keep a 413 from a client that sends the header and waits.)
//
// At most maxLingering connections are read this way at once, so refusals
// cannot hold an unbounded number of connections and goroutines; the others
// are closed as soon as their answer is written. A slot is taken only once
// fasthttp has handed the connection over (it may give up on it before),
// and given back when the reading ends.
//
// body gives the rest of the body from the connection: the request's body
// stream, or the connection itself when headerReceived dropped the body.
func (l *routeLimits) closeAfterBody(c *fiber.Ctx, body func(conn net.Conn) io.Reader, max int) {
	ctx := c.Context()
	ctx.SetConnectionClose()
	ctx.HijackSetNoResponse(true)
	ctx.Hijack(func(conn net.Conn) {
		if err := conn.SetDeadline(time.Now().Add(answerTime)); err != nil {
			return
		}
		if _, err := ctx.Response.WriteTo(conn); err != nil {
			return
		}
		select {
		case l.lingering <- struct{}{}:
			defer func() { <-l.lingering }()
		default:
			return
		}
		if err := conn.SetDeadline(time.Now().Add(lingerTime)); err != nil {
			return
		}
		_, _ = io.CopyN(io.Discard, body(conn), int64(max))
	})
}

// bodyLocal holds a body bufferBodies read, checked by checkInput once the
// caller is authenticated and the operation (whose schema the check
// follows) is known.
const bodyLocal = "tocsin.body"

// bufferBodies enforces each route's body limit. A declared length over it
// is answered 413 naming the Content-Length header before any of the body
// is read (see closeAfterBody for the rest of it); an operation that takes
// no body refuses one. Bodies of streamed operations are left to the operation;
// every other body is read into memory here, as fasthttp does without
// streaming, to be checked by checkInput (see checkBody).
func bufferBodies(limits *routeLimits) fiber.Handler {
	return func(c *fiber.Ctx) error {
		req := c.Request()
		route, matched := limits.match(c.Method(), c.Path())
		limit := limits.fallback // read after match, which builds the table
		if matched {
			limit = route.limit
			c.Locals(routeLocal, route.path)
		}
		if v := req.Header.Peek(declaredHeader); len(v) > 0 || req.Header.ContentLength() > limit {
			declared := req.Header.ContentLength()
			if len(v) > 0 {
				declared, _ = strconv.Atoi(string(v))
			}
			if len(v) > 0 && len(req.Header.Peek(readAfterHeader)) > 0 {
				// headerReceived dropped the body: it follows on the connection.
				limits.closeAfterBody(c, func(conn net.Conn) io.Reader { return conn }, declared)
			} else {
				c.Context().SetConnectionClose()
			}
			why := "is larger than this operation's limit of " + strconv.Itoa(limit) + " bytes"
			if limit == 0 {
				why = "must be 0: this operation takes no request body"
			}
			return tooLarge(limit, rest.Failure("header", fiber.HeaderContentLength, why, declared))
		}
		stream := req.BodyStream()
		if stream == nil {
			return c.Next()
		}
		if route.streamed {
			err := c.Next()
			// What the operation left unread would be taken for the next request.
			if n, _ := io.CopyN(io.Discard, stream, drainLimit); n == drainLimit {
				limits.closeAfterBody(c, func(net.Conn) io.Reader { return stream }, limits.discard)
			}
			return err
		}
		body, err := io.ReadAll(io.LimitReader(stream, int64(limit)+1))
		if err != nil {
			c.Context().SetConnectionClose()
			return rest.Invalid("body", "", "the request body could not be read", nil)
		}
		if len(body) > limit {
			limits.closeAfterBody(c, func(net.Conn) io.Reader { return stream }, limits.discard)
			return tooLarge(limit)
		}
		req.SetBodyStream(bytes.NewReader(body), len(body))
		c.Locals(bodyLocal, body)
		return c.Next()
	}
}

func tooLarge(limit int, failures ...rest.ValidationFailure) *rest.ProblemDetails {
	if limit == 0 {
		return rest.Problem(http.StatusRequestEntityTooLarge, "this operation takes no request body", failures...)
	}
	return rest.Problem(http.StatusRequestEntityTooLarge, "the request body is larger than this operation's limit of "+strconv.Itoa(limit)+" bytes", failures...)
}

// checkBody finds a NUL character or invalid UTF-8 in a JSON or text body
// of op, or a JSON property given twice (see badJSON), naming the JSON
// field it is in. Other bodies (multipart forms) are checked part by part
// by checkForm.
func checkBody(reg huma.Registry, op *huma.Operation, contentType string, body []byte) *rest.ProblemDetails {
	mt, _, _ := mime.ParseMediaType(contentType)
	switch {
	case strings.Contains(mt, "json"), readAsJSON(contentType):
		return checkJSONBody(reg, jsonBodySchema(op, mt), body)
	case strings.HasPrefix(mt, "text/"), mt == "application/x-www-form-urlencoded":
		if msg := badText(string(body)); msg != "" {
			return rest.Invalid("body", "", msg, nil)
		}
	}
	return nil
}

// checkJSONBody refuses what badJSON finds in a JSON body of the given
// schema, naming the field.
func checkJSONBody(reg huma.Registry, schema *huma.Schema, body []byte) *rest.ProblemDetails {
	if field, msg := badJSON(body, reg, schema); msg != "" {
		return rest.Invalid("body", field, msg, nil)
	}
	return nil
}

// jsonBodySchema is the schema op declares for a JSON body of media type
// mt (huma declares the same one for each JSON media type it reads), or nil.
func jsonBodySchema(op *huma.Operation, mt string) *huma.Schema {
	if op == nil || op.RequestBody == nil {
		return nil
	}
	c := op.RequestBody.Content[mt]
	if c == nil {
		c = op.RequestBody.Content["application/json"]
	}
	if c == nil {
		return nil
	}
	return c.Schema
}

// readAsJSON reports whether huma decodes a body of this content type as
// JSON although its media type does not say so: huma reads the part
// between a "+" and a ";" and takes JSON when that is empty, as for a body
// without Content-Type or with "; charset=utf-8" alone.
func readAsJSON(contentType string) bool {
	start := strings.IndexByte(contentType, '+') + 1
	end := strings.IndexByte(contentType, ';')
	if end < 0 {
		end = len(contentType)
	}
	return start <= end && (contentType[start:end] == "" || strings.Contains(contentType[start:end], "json"))
}

// securityHeaders keeps browsers from sniffing any response as another
// content type.
func securityHeaders(c *fiber.Ctx) error {
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	return c.Next()
}

// checkForm reads the parts of a buffered multipart form (the operation's
// body was read by bufferBodies) as the operation will, and refuses what
// it would drop or take for something else: a part rest.PartName refuses
// (no name, a disposition other than form-data, parts of its own), a part
// given more than once, a part the form does not have or of the wrong kind
// (see checkPart), a text part holding a NUL character or invalid UTF-8,
// and, in a part holding a JSON document, what badJSON finds, following
// the schema the operation gives the part in its rest.JSONParts metadata.
// File parts' contents are the operation's to check.
func checkForm(ctx huma.Context, reg huma.Registry, op *huma.Operation) *rest.ProblemDetails {
	if op.RequestBody == nil || op.RequestBody.Content["multipart/form-data"] == nil || op.Metadata[rest.StreamBody] == true {
		return nil
	}
	c := humafiber.Unwrap(ctx)
	body, _ := c.Locals(bodyLocal).([]byte)
	mt, params, err := mime.ParseMediaType(string(c.Request().Header.ContentType()))
	if body == nil || err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return nil
	}
	parts := op.RequestBody.Content["multipart/form-data"].Schema.Properties
	jsonParts, _ := op.Metadata[rest.JSONParts].(map[string]*huma.Schema)
	given := map[string]bool{}
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	for {
		part, err := mr.NextPart()
		if err != nil {
			// The end, or a malformed form, which the operation answers.
			return nil
		}
		name, err := rest.PartName(part)
		if msg := badText(name); msg != "" {
			return rest.Invalid("body", "", "a part name "+msg, nil)
		}
		var p *rest.ProblemDetails
		if errors.As(err, &p) {
			return p
		}
		if given[name] {
			return rest.Invalid("body", name, "given more than once", nil)
		}
		given[name] = true
		file := part.FileName() != ""
		if p := checkPart(parts, name, file); p != nil {
			return p
		}
		if file {
			continue
		}
		v, err := io.ReadAll(part)
		if err != nil {
			return nil
		}
		if msg := badText(string(v)); msg != "" {
			return rest.Invalid("body", name, msg, nil)
		}
		if p := checkFormValue(parts[name], name, string(v)); p != nil {
			return p
		}
		if field, msg := badJSON(v, reg, jsonParts[name]); msg != "" && bytes.HasPrefix(bytes.TrimSpace(v), []byte("{")) {
			return rest.Invalid("body", joinField(name, field), msg, nil)
		}
	}
}

// checkFormValue reads v, the text part name of a form, as a boolean or an
// integer when its schema says it is one (rest.FormBoolean,
// rest.FormInteger within the schema's bounds), and answers the problem
// when it is not: huma would take 1, t, +1 or 01 and refuse the rest as
// "invalid boolean" or "invalid integer" with an array as the value.
func checkFormValue(schema *huma.Schema, name, v string) *rest.ProblemDetails {
	if schema == nil {
		return nil
	}
	var err error
	switch schema.Type {
	case huma.TypeBoolean:
		_, err = rest.FormBoolean(name, v)
	case huma.TypeInteger:
		low, high := int64(0), int64(math.MaxInt64)
		if schema.Minimum != nil && *schema.Minimum > 0 {
			low = int64(*schema.Minimum)
		}
		if schema.Maximum != nil && *schema.Maximum < float64(math.MaxInt64) {
			high = int64(*schema.Maximum)
		}
		_, err = rest.FormInteger(name, v, low, high)
	}
	var p *rest.ProblemDetails
	if errors.As(err, &p) {
		return p
	}
	return nil
}

// checkPart refuses a part the form does not have, and a part sent as a
// file where the form takes text or as text where it takes a file (a
// file part without a filename arrives as text, and would be dropped).
func checkPart(parts map[string]*huma.Schema, name string, file bool) *rest.ProblemDetails {
	if parts == nil {
		return nil
	}
	prop, ok := parts[name]
	switch {
	case !ok:
		known := make([]string, 0, len(parts))
		for k := range parts {
			known = append(known, k)
		}
		sort.Strings(known)
		return rest.Invalid("body", name, "not a part of this form; its parts are "+strings.Join(known, ", "), nil)
	case prop.ContentEncoding == "binary" && !file:
		return rest.Invalid("body", name, "must be a file part: give its Content-Disposition a filename", nil)
	case prop.ContentEncoding != "binary" && file:
		return rest.Invalid("body", name, "must be a text part, not a file", nil)
	}
	return nil
}

func joinField(a, b string) string {
	if b == "" {
		return a
	}
	return a + "." + b
}
