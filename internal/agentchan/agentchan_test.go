package agentchan_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/agentcall"
	"github.com/drover-dev/drover/internal/agentchan"
	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/store"
	"github.com/drover-dev/drover/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// open claims a fresh card on st and opens its run's channel under dir.
func open(t *testing.T, st store.Store, dir, title string) (*agentchan.Run, board.Card, board.Run) {
	t.Helper()
	c, err := st.CreateCard(context.Background(), "DRV", board.Card{Title: title, State: "ready"}, "operator")
	if err != nil {
		t.Fatal(err)
	}
	c, r := testkit.Claim(t, st, c, "n1", "claude")
	ch := &agentchan.Channel{Dir: dir, Store: st}
	run, err := ch.Open(r.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(run.Close)
	return run, c, r
}

// A run's socket lives in a directory of its own that only drover's user
// can enter, and serves its run to the holder of its token only.
func TestTheSocketServesItsRunToItsTokenOnly(t *testing.T) {
	st := testkit.Store(t, testkit.SQLite)
	dir := filepath.Join(t.TempDir(), "agent")
	mine, c, r := open(t, st, dir, "mine")
	other, _, or := open(t, st, dir, "other")
	ctx := context.Background()

	sock := mine.Env()[agentchan.EnvSocket]
	if fi, err := os.Stat(filepath.Dir(sock)); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("the socket's directory: %v %v, want mode 0700", fi.Mode(), err)
	}
	if fi, err := os.Stat(sock); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the socket: %v %v, want mode 0600", fi.Mode(), err)
	}
	if filepath.Dir(filepath.Dir(sock)) != dir {
		t.Errorf("socket %s is not under %s", sock, dir)
	}

	got, err := agentchan.NewClient(sock, mine.Env()[agentchan.EnvToken], r.ID).ReadCard(ctx)
	if err != nil || got.Identifier != c.Identifier {
		t.Fatalf("own card through the channel: %+v, %v", got, err)
	}
	attempts := map[string]*agentchan.Client{
		"another run's id":     agentchan.NewClient(sock, mine.Env()[agentchan.EnvToken], or.ID),
		"another run's socket": agentchan.NewClient(other.Env()[agentchan.EnvSocket], mine.Env()[agentchan.EnvToken], ""),
		"a guessed token":      agentchan.NewClient(sock, strings.Repeat("0", 64), ""),
		"no token":             agentchan.NewClient(sock, "", ""),
	}
	for name, cl := range attempts {
		_, err := cl.Block(ctx, "pwned", "x", "y")
		if !errors.Is(err, agentcall.ErrRefused) {
			t.Errorf("%s: %v, want refused", name, err)
		}
	}
	for _, id := range []string{r.ID, or.ID} {
		if run, _ := st.GetRun(ctx, id); run.Report != nil {
			t.Errorf("run %s has a report: %+v", id, run.Report)
		}
	}
}

// A bad argument comes back as the service's input error, naming it.
func TestAnInputErrorCrossesTheChannel(t *testing.T) {
	st := testkit.Store(t, testkit.SQLite)
	run, _, r := open(t, st, filepath.Join(t.TempDir(), "agent"), "t")
	cl := agentchan.NewClient(run.Env()[agentchan.EnvSocket], run.Env()[agentchan.EnvToken], r.ID)
	_, err := cl.Block(context.Background(), " ", "x", "y")
	var ie *agentcall.InputError
	if !errors.As(err, &ie) || ie.Field != "what" || !strings.Contains(ie.Msg, "is empty") {
		t.Fatalf("err = %v, want an input error on what", err)
	}
}

// Closing a run's channel removes its socket and directory; a client that
// kept the capability is refused without reaching the store.
func TestAClosedChannelIsGone(t *testing.T) {
	st := testkit.Store(t, testkit.SQLite)
	run, _, r := open(t, st, filepath.Join(t.TempDir(), "agent"), "t")
	env := run.Env()
	run.Close()
	if _, err := os.Stat(filepath.Dir(env[agentchan.EnvSocket])); !os.IsNotExist(err) {
		t.Errorf("the run's directory is still there: %v", err)
	}
	_, err := agentchan.NewClient(env[agentchan.EnvSocket], env[agentchan.EnvToken], r.ID).Comment(context.Background(), "late")
	if !errors.Is(err, agentcall.ErrRefused) || !strings.Contains(err.Error(), "does not answer") {
		t.Fatalf("err = %v, want refused: the channel does not answer", err)
	}
}

// A state directory too deep for a socket's path (108 bytes) falls back
// to a private directory under the system's temporary directory.
func TestADeepStateDirectoryStillGetsASocket(t *testing.T) {
	st := testkit.Store(t, testkit.SQLite)
	deep := filepath.Join(t.TempDir(), strings.Repeat("d", 120))
	run, c, r := open(t, st, deep, "t")
	sock := run.Env()[agentchan.EnvSocket]
	if len(sock) > 100 || strings.HasPrefix(sock, deep) {
		t.Errorf("socket path %s (%d bytes)", sock, len(sock))
	}
	got, err := agentchan.NewClient(sock, run.Env()[agentchan.EnvToken], r.ID).ReadCard(context.Background())
	if err != nil || got.Identifier != c.Identifier {
		t.Fatalf("card through the fallback socket: %+v, %v", got, err)
	}
}

// What a serve that died left behind (a run directory whose socket nobody
// listens on) is removed when the channel opens its first socket; another
// process's live socket under the same directory is kept.
func TestADeadServesSocketsAreSweptAndALiveOneKept(t *testing.T) {
	st := testkit.Store(t, testkit.SQLite)
	dir := filepath.Join(t.TempDir(), "agent")
	live, _, _ := open(t, st, dir, "another process's run")
	stale := filepath.Join(dir, "run-stale")
	if err := os.MkdirAll(stale, 0o700); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", filepath.Join(stale, "s"))
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close() // the socket file stays, with nobody listening: a dead serve's
	old := time.Now().Add(-2 * time.Minute)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	// Another process's run that has made its directory and not yet
	// listened in it: no socket, made a moment ago.
	opening := filepath.Join(dir, "run-opening")
	if err := os.MkdirAll(opening, 0o700); err != nil {
		t.Fatal(err)
	}
	open(t, st, dir, "this process's first run")
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the dead socket's directory is still there: %v", err)
	}
	if _, err := os.Stat(opening); err != nil {
		t.Errorf("a run directory made a moment ago, its socket not yet listening, was swept: %v", err)
	}
	if _, err := os.Stat(live.Env()[agentchan.EnvSocket]); err != nil {
		t.Errorf("the live socket is gone: %v", err)
	}
}
