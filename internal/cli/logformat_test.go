package cli

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/testkit"
)

func TestJournalFormat(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(newJournalHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})).With("node", "n1")
	log.Debug("tick")
	log.Info("run finished", "card_id", "c1", "why", "line one\nline two")
	log.WithGroup("g").Warn("slow", "ms", 900)
	log.Error("store unavailable")
	got := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	want := []string{
		`<7>level=DEBUG msg=tick node=n1`,
		`<6>level=INFO msg="run finished" node=n1 card_id=c1 why="line one\nline two"`,
		`<4>level=WARN msg=slow node=n1 g.ms=900`,
		`<3>level=ERROR msg="store unavailable" node=n1`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("journal lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestLogFormatChoice(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	stream := streamOf(t, f)
	for _, c := range []struct {
		flag          string
		flagSet       bool
		env, journal  string
		want, wantErr string
	}{
		{flag: "auto", want: "text"},
		{flag: "auto", journal: stream, want: "journal"},
		{flag: "auto", journal: "1:2", want: "text"}, // stderr redirected away from the journal
		{flag: "auto", env: "json", journal: stream, want: "json"},
		{flag: "text", flagSet: true, env: "json", journal: stream, want: "text"},
		{flag: "journal", flagSet: true, want: "journal"},
		{flag: "auto", env: "xml", wantErr: `DROVER_LOG_FORMAT: "xml" is not auto, text, json or journal`},
		{flag: "yaml", flagSet: true, wantErr: `--log-format: "yaml" is not auto, text, json or journal`},
	} {
		t.Setenv(logFormatEnv, c.env)
		t.Setenv("JOURNAL_STREAM", c.journal)
		got, err := resolveLogFormat(c.flag, c.flagSet, f)
		if c.wantErr != "" {
			if err == nil || err.Error() != c.wantErr {
				t.Errorf("%+v: err %v, want %q", c, err, c.wantErr)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%+v: got %q, %v; want %q", c, got, err, c.want)
		}
	}
}

// streamOf is f's "device:inode", as systemd sets JOURNAL_STREAM.
func streamOf(t *testing.T, f *os.File) string {
	t.Helper()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	return fmt.Sprintf("%d:%d", uint64(st.Dev), uint64(st.Ino))
}

// TestServeLogsForTheJournal runs drover serve as systemd would (stderr the
// journal's stream, JOURNAL_STREAM naming it) and reads what it wrote.
func TestServeLogsForTheJournal(t *testing.T) {
	dir := t.TempDir()
	testkit.NewWorkflow().Set("server", "{port: 0}").Write(t, dir)
	f, err := os.Create(filepath.Join(dir, "journal"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := exec.Command(testkit.Binary(t), "serve")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "JOURNAL_STREAM="+streamOf(t, f), logFormatEnv+"=")
	cmd.Stderr = f
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, _ := os.ReadFile(f.Name())
		if bytes.Contains(b, []byte("dispatcher started")) {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("serve did not start:\n%s", b)
		}
		time.Sleep(50 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("serve after SIGTERM: %v", err)
	}
	b, _ := os.ReadFile(f.Name())
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	for _, l := range lines {
		if !strings.HasPrefix(l, "<6>") && !strings.HasPrefix(l, "<4>") && !strings.HasPrefix(l, "<3>") {
			t.Errorf("line without a journal priority: %q", l)
		}
		if strings.Contains(l, "time=") {
			t.Errorf("line with its own timestamp: %q", l)
		}
	}
	if !strings.Contains(string(b), `<6>level=INFO msg="dispatcher started"`) || !strings.Contains(string(b), `msg=stopping`) {
		t.Errorf("journal output lacks the start and stop records:\n%s", b)
	}
}
