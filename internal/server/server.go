// Package server is drover's HTTP surface: the JSON API under /api/v1 (with
// Symphony's /api/v1/state, /api/v1/{identifier} and /api/v1/refresh), the
// server-sent event stream, Prometheus metrics, health checks and the
// embedded dashboard at /.
//
// Security: the server binds 127.0.0.1 unless told otherwise. On a
// non-loopback host every request must carry `Authorization: Bearer <token>`
// (server.auth_token), or the dashboard cookie set by visiting /?token=<token>;
// ListenAndServe refuses to start there without a token. On loopback the Host
// header must name a loopback address (against DNS rebinding). Mutating
// requests are guarded against cross-site forgery, see csrfOK.
package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/drover-dev/drover/internal/config"
	"github.com/drover-dev/drover/internal/operator"
	"github.com/drover-dev/drover/internal/store"
)

// Options wire the server to the rest of drover.
type Options struct {
	// Store is required.
	Store store.Store
	// Config returns the current (hot-reloaded) config; nil or a nil result
	// means the defaults.
	Config func() *config.Config
	// Ops returns the operator service for a request; nil builds one from
	// Store and Config with actor "operator:web".
	Ops func() *operator.Service
	// Refresh wakes the dispatcher (POST /api/v1/refresh). Calls are
	// coalesced: while one is in flight, further requests only report
	// coalesced. Nil makes refresh answer 503.
	Refresh func()
	// Explain says why a card is or is not running (drover explain); nil
	// hides the dashboard panel and makes the endpoint answer 501.
	Explain func(ctx context.Context, ref string) (any, error)
	// Registry is served at /metrics; nil serves an empty registry.
	Registry *prometheus.Registry
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// Log receives request errors; nil discards.
	Log *slog.Logger
	// AuthToken, when set, is required on every request (Bearer header or
	// the dashboard cookie). ListenAndServe sets it from server.auth_token
	// for a non-loopback host.
	AuthToken string
	// LoopbackOnly makes the server refuse Host headers that are not
	// loopback names (DNS-rebinding guard). ListenAndServe sets it for a
	// loopback host.
	LoopbackOnly bool
	// Ready, when set, is called with the bound address once listening.
	Ready func(addr string)
	// Heartbeat is the SSE keep-alive interval; 0 means 15s.
	Heartbeat time.Duration
	// Webhook, with an external tracker, serves POST
	// /api/v1/webhooks/<kind>, authenticated by its signature instead of
	// AuthToken.
	Webhook *Webhook
	// PullWebhook, with workspace.git.pull_request, serves POST
	// /api/v1/webhooks/pulls (GitHub's pull request, review and check
	// events), authenticated by its signature.
	PullWebhook *PullWebhook
	// MaxBody bounds request bodies; 0 means 2 MiB.
	MaxBody int64
}

// Server serves the API and dashboard.
type Server struct {
	opts       Options
	csrf       string // per-process token the dashboard echoes in X-CSRF-Token
	refreshing atomic.Bool
	mux        *http.ServeMux
}

// DefaultMaxBody is the request body limit.
const DefaultMaxBody = 2 << 20

// New builds a server. Options.Store is required.
func New(opts Options) *Server {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.Heartbeat == 0 {
		opts.Heartbeat = 15 * time.Second
	}
	if opts.MaxBody == 0 {
		opts.MaxBody = DefaultMaxBody
	}
	if opts.Registry == nil {
		opts.Registry = prometheus.NewRegistry()
	}
	var b [16]byte
	rand.Read(b[:])
	s := &Server{opts: opts, csrf: hex.EncodeToString(b[:])}
	s.routes()
	return s
}

// Handler is the server's root handler, with auth, CSRF and limits applied.
func (s *Server) Handler() http.Handler { return s.guard(s.mux) }

func (s *Server) cfg() *config.Config {
	if s.opts.Config == nil {
		return nil
	}
	return s.opts.Config()
}

func (s *Server) ops() *operator.Service {
	if s.opts.Ops != nil {
		return s.opts.Ops()
	}
	o := &operator.Service{Store: s.opts.Store, Actor: "operator:web", Now: s.opts.Now}
	if c := s.cfg(); c != nil {
		o.Board = c.Board
		for n := range c.Agents.Profiles {
			o.Agents = append(o.Agents, n)
		}
	} else {
		o.Board = defaultBoard()
	}
	return o
}

// IsLoopback reports whether host names the loopback interface.
func IsLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// ErrNoToken: a non-loopback host without server.auth_token.
var ErrNoToken = errors.New("server.host is not a loopback address and server.auth_token is empty: set server.auth_token (e.g. auth_token: $DROVER_TOKEN) or bind 127.0.0.1")

// ListenAndServe serves on host:port until ctx ends. An empty host means
// 127.0.0.1. A non-loopback host needs a token (Options.AuthToken or the
// config's server.auth_token), else ErrNoToken. It returns after a graceful
// shutdown. Port 0 picks a free port; the bound address is logged.
func (s *Server) ListenAndServe(ctx context.Context, host string, port int) error {
	if host == "" {
		host = "127.0.0.1"
	}
	if IsLoopback(host) {
		s.opts.LoopbackOnly = s.opts.AuthToken == ""
	} else {
		if s.opts.AuthToken == "" {
			if c := s.cfg(); c != nil {
				s.opts.AuthToken = c.Server.AuthToken
			}
		}
		if s.opts.AuthToken == "" {
			return ErrNoToken
		}
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return fmt.Errorf("server: listen on %s:%d: %w (server.host/server.port)", host, port, err)
	}
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	s.opts.Log.Info("dashboard and API listening", "addr", "http://"+ln.Addr().String(), "auth", s.opts.AuthToken != "")
	if s.opts.Ready != nil {
		s.opts.Ready(ln.Addr().String())
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	srv.Shutdown(sctx)
	return nil
}
