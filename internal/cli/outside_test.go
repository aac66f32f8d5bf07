package cli

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// files lists every path under dir (dir itself excluded).
func files(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	_ = filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		if p != dir {
			out = append(out, p)
		}
		return err
	})
	return out
}

func runMain(args ...string) (int, string, string) {
	var o, e bytes.Buffer
	code := Main(args, &o, &e)
	return code, o.String(), e.String()
}

// Outside a board (no WORKFLOW.md, no --store, no DROVER_STORE) every
// command that needs the store fails as bad usage, says how to find a board,
// and creates nothing (issue 13, item 11: card ls printed an empty board and
// created ./.drover/drover.db).
func TestOutsideABoardNothingIsCreated(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	t.Setenv("DROVER_STORE", "")
	for _, args := range [][]string{
		{"card", "ls"}, {"card", "show", "DRV-1"}, {"board", "show"}, {"events"}, {"runs"}, {"logs", "01ABC"},
		{"status"}, {"explain", "DRV-1"}, {"agent", "ls"}, {"--json", "status"},
		{"card", "add", "--title", "x"}, {"card", "comment", "DRV-1", "hi"}, {"agent", "resume", "sim"},
	} {
		code, out, errs := runMain(args...)
		if code != ExitInvalid {
			t.Errorf("drover %s outside a board: exit %d, want %d (stdout %q)", strings.Join(args, " "), code, ExitInvalid, out)
		}
		for _, want := range []string{"no board here", "--config", "drover init"} {
			if !strings.Contains(errs, want) {
				t.Errorf("drover %s: stderr %q lacks %q", strings.Join(args, " "), errs, want)
			}
		}
	}
	if got := files(t, dir); len(got) != 0 {
		t.Fatalf("commands outside a board created %v", got)
	}
}

// A read command never creates a store or its directory, in a board or not;
// a write command inside a board creates the board's store.
func TestReadCommandsCreateNoStore(t *testing.T) {
	t.Setenv("DROVER_STORE", "")
	dir := t.TempDir()
	missing := filepath.Join(dir, "nonexistent", "dir", "x.db")
	board := filepath.Join(dir, "board")
	if err := os.MkdirAll(board, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(board, "WORKFLOW.md")
	if err := os.WriteFile(cfg, []byte("---\nagents: {profiles: {sim: {kind: sim}}}\n---\nWork on {{ card.title }}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, pre := range [][]string{
		{"--config", filepath.Join(dir, "none", "WORKFLOW.md"), "--store", "sqlite:" + missing},
		{"--config", cfg, "--store", "sqlite:" + missing},
		{"--config", cfg},
	} {
		for _, args := range [][]string{{"card", "ls"}, {"status"}, {"events"}, {"runs"}, {"board", "show"}} {
			full := append(append([]string{}, pre...), args...)
			code, _, errs := runMain(full...)
			if code != ExitInvalid || !strings.Contains(errs, "no store at") || !strings.Contains(errs, "drover init") {
				t.Errorf("drover %s: exit %d, stderr %q; want exit 2 naming the missing store and drover init", strings.Join(full, " "), code, errs)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "nonexistent")); !os.IsNotExist(err) {
		t.Errorf("a read command created the store's directory: %v", err)
	}
	if got := files(t, board); len(got) != 1 {
		t.Errorf("read commands in a board without a store created %v", got)
	}
	if code, _, errs := runMain("--config", cfg, "card", "add", "--title", "first"); code != 0 {
		t.Fatalf("card add inside a board: exit %d: %s", code, errs)
	}
	if code, out, errs := runMain("--config", cfg, "card", "ls"); code != 0 || !strings.Contains(out, "first") {
		t.Fatalf("card ls after card add: exit %d %q %s", code, out, errs)
	}
}

// serve refuses a config it could only fail on before it creates the store:
// a non-loopback server.host without server.auth_token.
func TestServeRefusesBeforeCreatingTheStore(t *testing.T) {
	t.Setenv("DROVER_STORE", "")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "WORKFLOW.md")
	if err := os.WriteFile(cfg, []byte("---\nagents: {profiles: {sim: {kind: sim}}}\nserver: {host: 0.0.0.0, port: 4999}\n---\nWork on {{ card.title }}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs := runMain("--config", cfg, "serve")
	if code != ExitInvalid || !strings.Contains(errs, "server.auth_token") {
		t.Fatalf("serve on 0.0.0.0 without a token: exit %d, stderr %q", code, errs)
	}
	if got := files(t, dir); len(got) != 1 {
		t.Fatalf("a refused serve created %v", got)
	}
}
