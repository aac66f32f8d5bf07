package cli

import (
	"bytes"
	"encoding/json"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/drover-dev/drover/internal/store/sqlstore"
)

func TestVersionCommand(t *testing.T) {
	var out, errw bytes.Buffer
	if code := Main([]string{"version", "--json"}, &out, &errw); code != 0 {
		t.Fatalf("drover version --json: exit %d: %s", code, errw.String())
	}
	var got struct {
		Version, Commit, Date string
		GoVersion             string `json:"go_version"`
		Schema                int64
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("drover version --json: %v\n%s", err, out.String())
	}
	if got.Version == "" || got.Commit == "" || got.Date == "" || got.GoVersion != runtime.Version() || got.Schema != sqlstore.SchemaVersion() {
		t.Fatalf("drover version --json = %+v; want a version, commit and date, Go %s and schema %d", got, runtime.Version(), sqlstore.SchemaVersion())
	}

	out.Reset()
	if code := Main([]string{"version"}, &out, &errw); code != 0 || !strings.Contains(out.String(), "store schema: "+strconv.FormatInt(got.Schema, 10)) {
		t.Fatalf("drover version: exit %d\n%s", code, out.String())
	}

	out.Reset()
	if code := Main([]string{"--version"}, &out, &errw); code != 0 {
		t.Fatalf("drover --version: exit %d: %s", code, errw.String())
	}
	want := "drover " + got.Version + " (commit "
	if line := out.String(); !strings.HasPrefix(line, want) || !strings.HasSuffix(line, "store schema "+strconv.FormatInt(got.Schema, 10)+")\n") || strings.Count(line, "\n") != 1 {
		t.Fatalf("drover --version = %q; want one line starting %q", line, want)
	}
}
