// Package agentchan is drover serve's agent channel: the per-run
// capability through which drover mcp and drover run reach their run's
// agentcall.Service, so that an agent never holds the store's DSN. Each
// run gets a Unix socket of its own, in a directory of its own (0700, the
// socket 0600) under the node's state directory, and a random token; the
// socket serves that run only, and only to a caller with its token, and
// is removed when the run ends. The agent finds both in its environment
// (EnvSocket, EnvToken). The service's own fences still apply: a call is
// taken only while the run is open and its claim held.
package agentchan

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/drover-dev/drover/internal/agentcall"
	"github.com/drover-dev/drover/internal/store"
)

// The variables an agent's environment carries the capability in.
const (
	EnvSocket = "DROVER_AGENT_SOCKET" // the run's socket: the one path a sandbox binds
	EnvToken  = "DROVER_AGENT_TOKEN"  // the run's secret, sent with every call
)

// maxSocketPath keeps a socket's path within sun_path (108 bytes on Linux).
const maxSocketPath = 100

// Channel opens the runs' sockets of one node.
type Channel struct {
	Dir   string // the node's state directory for sockets (created 0700)
	Store store.Store
	Now   func() time.Time
	swept sync.Once
}

// Run is one run's open capability.
type Run struct {
	runID, dir, socket, token string
	srv                       *http.Server
	done                      chan struct{}
}

// Open starts run's socket and returns its capability; Close ends it.
func (c *Channel) Open(runID string, limits *agentcall.Limits) (*Run, error) {
	c.swept.Do(func() { sweep(c.Dir, time.Now()) })
	dir, err := c.runDir()
	if err != nil {
		return nil, fmt.Errorf("agent channel: %w", err)
	}
	r := &Run{runID: runID, dir: dir, socket: filepath.Join(dir, "s"), token: secret(), done: make(chan struct{})}
	ln, err := net.Listen("unix", r.socket)
	if err == nil {
		err = os.Chmod(r.socket, 0o600)
	}
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("agent channel: %w", err)
	}
	svc := &agentcall.Service{Store: c.Store, RunID: runID, Now: c.Now, Limits: limits}
	r.srv = &http.Server{Handler: r.handler(svc), ReadHeaderTimeout: 10 * time.Second}
	go func() { defer close(r.done); _ = r.srv.Serve(ln) }()
	return r, nil
}

// runDir makes a directory of the run's own, 0700, under c.Dir, or under
// the system's temporary directory when c.Dir's path is too long for a
// socket.
func (c *Channel) runDir() (string, error) {
	parent := c.Dir
	if len(filepath.Join(parent, "0123456789abcdef", "s")) > maxSocketPath {
		parent = ""
	} else if err := os.MkdirAll(parent, 0o700); err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp(parent, "run-")
	if err != nil {
		return "", err
	}
	return dir, os.Chmod(dir, 0o700)
}

func secret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Env is the capability as the agent's environment carries it.
func (r *Run) Env() map[string]string {
	return map[string]string{EnvSocket: r.socket, EnvToken: r.token}
}

// Socket is the run's socket path.
func (r *Run) Socket() string { return r.socket }

// Close revokes the capability: the socket stops accepting and is removed
// with its directory. Calls in flight finish (a few seconds at most).
func (r *Run) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := r.srv.Shutdown(ctx); err != nil {
		r.srv.Close()
	}
	<-r.done
	os.RemoveAll(r.dir)
}

// authorized checks the call's token and the run it believes it is in.
func (r *Run) authorized(req *http.Request) (int, string) {
	tok, _ := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer ")
	if subtle.ConstantTimeCompare([]byte(tok), []byte(r.token)) != 1 {
		return http.StatusUnauthorized, "the token sent (" + EnvToken + ") is not this socket's; nothing was changed"
	}
	if want := req.Header.Get(headerRun); want != "" && want != r.runID {
		return http.StatusForbidden, fmt.Sprintf("this channel serves run %s only, not %s (DROVER_RUN_ID); nothing was changed", r.runID, want)
	}
	return 0, ""
}

// errorStatus is the status and body of a call's error.
func errorStatus(err error) (int, reply) {
	var ie *agentcall.InputError
	switch {
	case errors.As(err, &ie):
		return http.StatusBadRequest, reply{Error: ie.Msg, Field: ie.Field}
	case errors.Is(err, agentcall.ErrRefused):
		return http.StatusConflict, reply{Error: strings.TrimPrefix(err.Error(), agentcall.ErrRefused.Error()+": ")}
	}
	return http.StatusInternalServerError, reply{Error: err.Error()}
}
