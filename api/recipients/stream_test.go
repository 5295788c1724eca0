package recipients_test

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humafiber"
	"github.com/gofiber/fiber/v2"

	"github.com/tocsin/tocsin/api/model"
	"github.com/tocsin/tocsin/api/recipients"
	"github.com/tocsin/tocsin/api/rest"
	"github.com/tocsin/tocsin/internal/auth"
	"github.com/tocsin/tocsin/internal/config"
	"github.com/tocsin/tocsin/internal/stacktest"
)

// TestCreateFromFileStreamsWhenFiberStreams shows that createFromFile reads
// the upload as a stream: on a Fiber app that streams request bodies
// (StreamRequestBody, DisablePreParseMultipartForm), a file many times the
// server's in-memory body limit imports fine.
func TestCreateFromFileStreamsWhenFiberStreams(t *testing.T) {
	t.Parallel()
	db := stacktest.DB(t)
	tenant := stacktest.NewTenant()
	app := fiber.New(fiber.Config{
		StreamRequestBody:            true,
		DisablePreParseMultipartForm: true,
		BodyLimit:                    64 << 10,
		DisableStartupMessage:        true,
	})
	api := humafiber.New(app, huma.DefaultConfig("stream test", "1"))
	api.UseMiddleware(func(ctx huma.Context, next func(huma.Context)) {
		p := auth.Principal{Subject: "t", Tenant: tenant, Scopes: auth.AllScopes}
		next(huma.WithContext(ctx, rest.WithPrincipal(ctx.Context(), p)))
	})
	recipients.Register(api, rest.Deps{
		Config: config.Config{FileSizeLimit: 64 << 20, PublicURL: "http://x"},
		DB:     db, Logger: slog.New(slog.DiscardHandler),
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = app.Listener(ln) }()
	t.Cleanup(func() { _ = app.ShutdownWithTimeout(5 * time.Second) })

	const n = 20_000
	var csv strings.Builder
	csv.WriteString("externalId,firstName,lastName,emails\n")
	for i := range n {
		fmt.Fprintf(&csv, "S%05d,Stream%d,Person%d,s%d@example.com\n", i, i, i, i)
	}
	if csv.Len() < 10*(64<<10) {
		t.Fatalf("the file (%d bytes) should dwarf the body limit", csv.Len())
	}
	body, ct := form(t, "name", "streamed", "file", csv.String())
	req, err := http.NewRequest(http.MethodPost, fmt.Sprintf("http://%s/v4/%s/distributionLists/createFromFile", ln.Addr(), tenant), body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", ct)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("status %d: %s", res.StatusCode, b)
	}
	var out model.CreateDistributionListFromFileResponse
	if err := json.Unmarshal(b, &out); err != nil || out.Created != n || out.DistributionList.MemberCount != n {
		t.Fatalf("%s %v", b, err)
	}
}
