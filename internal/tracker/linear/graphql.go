package linear

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/drover-dev/drover/internal/tracker"
)

// Bounds of one agent's GraphQL request (Symphony's linear_graphql tool):
// what the agent may send, what drover hands back, and how long it waits.
const (
	MaxQueryBytes    = 64 << 10
	MaxAnswerBytes   = 256 << 10
	GraphQLTimeout   = 30 * time.Second
	graphQLErrorText = 2 << 10 // of a failed answer's body, in the error
)

// GraphQL sends one GraphQL document of an agent (its query and
// variables, as it wrote them) to cfg's endpoint with cfg's key, and
// returns the answer's JSON text. The key goes in the Authorization
// header only, never into the text or an error. An error is for the
// model to read: the field to fix for a bad request, the HTTP status, or
// GraphQL's own errors (a 200 answer with errors is an error too, its
// body included, as Linear reports a bad query so).
func GraphQL(ctx context.Context, cfg tracker.Config, hc *http.Client, query string, vars json.RawMessage) (string, error) {
	if strings.TrimSpace(query) == "" {
		return "", errors.New("query is empty: pass one GraphQL document, e.g. {\"query\": \"query { viewer { id } }\"}")
	}
	v := bytes.TrimSpace(vars)
	if len(v) == 0 || string(v) == "null" {
		v = []byte("{}")
	} else if v[0] != '{' {
		return "", errors.New("variables must be a JSON object of the query's variables (or absent)")
	}
	body, err := json.Marshal(map[string]any{"query": query, "variables": json.RawMessage(v)})
	if err != nil {
		return "", fmt.Errorf("variables are not valid JSON: %v", err)
	}
	if len(body) > MaxQueryBytes {
		return "", fmt.Errorf("the request is %d bytes, over drover's %d: send a shorter query or fewer variables", len(body), MaxQueryBytes)
	}
	if hc == nil {
		hc = http.DefaultClient
	}
	ep := cfg.Endpoint
	if ep == "" {
		ep = DefaultEndpoint
	}
	ctx, cancel := context.WithTimeout(ctx, GraphQLTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ep, bytes.NewReader(body))
	if err != nil {
		return "", fmt.Errorf("the Linear endpoint is not usable: %v", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", cfg.APIKey)
	req.Header.Set("User-Agent", "drover")
	resp, err := hc.Do(req)
	if err != nil {
		return "", fmt.Errorf("the Linear API did not answer: %v", scrub(err.Error(), cfg.APIKey))
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, MaxAnswerBytes+1))
	if err != nil {
		return "", fmt.Errorf("reading the Linear API's answer: %v", err)
	}
	if len(raw) > MaxAnswerBytes {
		return "", fmt.Errorf("the answer is over drover's %d bytes: ask for fewer fields or a smaller page (first: N)", MaxAnswerBytes)
	}
	var env struct {
		Errors []gqlError `json:"errors"`
	}
	decodeErr := json.Unmarshal(raw, &env)
	text := strings.TrimSpace(scrub(string(raw), cfg.APIKey))
	switch {
	case resp.StatusCode != http.StatusOK:
		return "", fmt.Errorf("the Linear API answered HTTP %d: %s", resp.StatusCode, clip(text))
	case decodeErr != nil:
		return "", fmt.Errorf("the Linear API's answer is not JSON: %s", clip(text))
	case len(env.Errors) > 0:
		return "", fmt.Errorf("the Linear API returned GraphQL errors: %s", clip(text))
	}
	return text, nil
}

func clip(s string) string {
	if len(s) > graphQLErrorText {
		return s[:graphQLErrorText] + "…"
	}
	return s
}

// scrub keeps the key out of what the agent reads, should an answer or
// an error ever echo it.
func scrub(s, key string) string {
	if key == "" {
		return s
	}
	return strings.ReplaceAll(s, key, "[redacted]")
}
