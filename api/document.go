package api

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tocsin/tocsin/api/rest"
	"github.com/tocsin/tocsin/internal/auth"
	"github.com/tocsin/tocsin/internal/config"
)

// Document returns the OpenAPI document of the API as indented JSON, built
// from the operations' Go types with the default configuration. The file
// openapi.json at the top of the repository is this output.
func Document() ([]byte, error) {
	cfg := config.Config{PublicURL: "http://127.0.0.1:8080", FileSizeLimit: 1}
	v, err := auth.NewVerifier(context.Background(), auth.VerifierConfig{Secret: "unused"})
	if err != nil {
		return nil, err
	}
	s := New(rest.Deps{Config: cfg, Logger: discardLogger()}, v, prometheus.NewRegistry())
	b, err := json.MarshalIndent(s.API.OpenAPI(), "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode openapi: %w", err)
	}
	return append(b, '\n'), nil
}
