package server_test

import (
	"html"
	"strconv"
	"strings"
	"testing"

	"github.com/drover-dev/drover/internal/store/sqlstore"
	"github.com/drover-dev/drover/internal/version"
)

// TestBuildOnStateAndDashboard: /api/v1/state names the build (checked
// against the OpenAPI document by the harness) and every dashboard page
// shows it in its footer.
func TestBuildOnStateAndDashboard(t *testing.T) {
	h := newHarness(t)
	m := h.want(h.do("GET", "/api/v1/state", nil), 200).json(t)
	d, ok := m["drover"].(map[string]any)
	if !ok {
		t.Fatalf("state lacks drover: %v", m)
	}
	in := version.Get()
	if d["version"] != in.Version || d["commit"] != in.Commit || d["go_version"] != in.GoVersion || d["schema"] != float64(sqlstore.SchemaVersion()) {
		t.Fatalf("state drover = %v, want %+v", d, in)
	}
	want := "drover " + in.Version + " · commit <code>" + html.EscapeString(in.ShortCommit()) + "</code>"
	for _, path := range []string{"/", "/cards/" + h.w.Parked.Identifier, "/columns/ready"} {
		body := string(h.want(h.do("GET", path, nil), 200).Body)
		footer, _, _ := strings.Cut(body[strings.LastIndex(body, `<footer class="build"`)+1:], "</footer>")
		if !strings.Contains(footer, want) || !strings.Contains(footer, "store schema "+strconv.FormatInt(in.Schema, 10)) {
			t.Errorf("%s: footer %q lacks %q and the schema", path, footer, want)
		}
	}
}
