// Package cli is drover's command line: Cobra commands that parse flags, call
// the operator service, the store or the dispatcher, and print text or JSON.
package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/drover-dev/drover/internal/excerpt"
	"github.com/drover-dev/drover/internal/operator"
	"github.com/drover-dev/drover/internal/store"
	"github.com/drover-dev/drover/internal/version"
)

// Exit codes.
const (
	ExitOK      = 0
	ExitFailed  = 1
	ExitInvalid = 2
)

// usageError marks bad usage (exit 2).
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return &usageError{fmt.Sprintf(format, a...)} }

// app is what every command needs, built once per invocation.
type app struct {
	configPath string
	storeDSN   string
	asJSON     bool
	// out is stdout for text: everything printed through it passes
	// excerpt.Terminal, so text an agent wrote (an error excerpt, a
	// question, a log) is shown and never obeyed by the terminal. jsonOut
	// is stdout itself, for JSON (whose encoder escapes control characters).
	out, jsonOut io.Writer
	errw         io.Writer

	st  store.Store
	cfg *loadedConfig
	// refused is why WORKFLOW.md was refused when a read command read the
	// board anyway (readBestEffort), nil when it loaded.
	refused error
	idents  map[string]string
	// dashboard is the address the server listens on (set by startSurfaces);
	// announce, when set, is told it.
	dashboard string
	announce  func(addr string)
	// trackerWake, with an external tracker, asks its sync to run now
	// (the webhooks call it).
	trackerWake func()
	// pullPoke, with workspace.git.pull_request, asks for a read of a
	// pull request now (0: every open one).
	pullPoke func(number int)
}

// Main runs the CLI with args and returns the process exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	a := &app{out: excerpt.NewTerminalWriter(stdout), jsonOut: stdout, errw: stderr}
	root := a.rootCmd()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(context.Background())
	if a.st != nil {
		a.st.Close()
	}
	if err == nil {
		return ExitOK
	}
	return a.report(err)
}

func (a *app) rootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "drover",
		Short: "drover dispatches coding agents on a board of cards and tells the truth about every outcome",
		Long: `drover claims eligible cards from a board, runs a coding agent on each in its own
workspace, and routes every outcome to a state that tells the truth: done, waiting
for a retry (when and why), blocked (what, where, how to continue), or waiting for
a human answer.

Start with:  drover demo --until-settled   (a self-contained tour)
             drover init && drover serve    (your own board)`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	pf := root.PersistentFlags()
	pf.StringVar(&a.configPath, "config", "WORKFLOW.md", "path to WORKFLOW.md")
	pf.StringVar(&a.storeDSN, "store", "", "store DSN: sqlite:PATH or postgres://… (default sqlite:<config dir>/.drover/drover.db; env DROVER_STORE)")
	pf.BoolVar(&a.asJSON, "json", false, "print JSON (read commands) and JSON errors")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usagef("%v (see %s --help)", err, c.CommandPath())
	})
	// Help lists them sorted by name, whatever the order here.
	root.AddCommand(
		a.initCmd(), a.cardCmd(), a.boardCmd(), a.eventsCmd(), a.runsCmd(), a.logsCmd(),
		a.benchCmd(), a.demoCmd(),
		a.statusCmd(), a.explainCmd(), a.policyCmd(), a.classifyCmd(), a.agentCmd(),
		a.serveCmd(), a.outboxCmd(), a.versionCmd(), a.gcCmd(),
		a.storeCmd(), a.backupCmd(), a.restoreCmd(),
		a.mcpCmd(), a.runCmd(),
	)
	// drover --version: Cobra adds the flag when Version is set.
	root.Version = version.Get().String()
	root.SetVersionTemplate("{{.Version}}\n")
	guardGroups(root)
	return root
}

// guardGroups makes bad usage exit 2 everywhere. It makes every command that only groups subcommands (drover,
// drover card, drover board, …) print its help when called bare and refuse
// an unknown subcommand as bad usage (exit 2). Left alone, Cobra prints the
// help and exits 0 for "drover card frob", and exits 1 for "drover frob".
func guardGroups(c *cobra.Command) {
	if c.HasSubCommands() && c.Run == nil && c.RunE == nil {
		c.Args = cobra.ArbitraryArgs
		c.RunE = func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return c.Help()
			}
			hint := ""
			if c.SuggestionsMinimumDistance <= 0 {
				c.SuggestionsMinimumDistance = 2
			}
			if s := c.SuggestionsFor(args[0]); len(s) > 0 {
				hint = fmt.Sprintf(" (did you mean %s?)", s[0])
			}
			return usagef("unknown command %q for %q%s; see %s --help", args[0], c.CommandPath(), hint, c.CommandPath())
		}
	}
	// Cobra's own argument checks (cobra.NoArgs, MaximumNArgs, …) return plain
	// errors, which would exit 1; a wrong argument count is bad usage.
	if check := c.Args; check != nil {
		c.Args = func(c *cobra.Command, args []string) error {
			err := check(c, args)
			var ue *usageError
			if err == nil || errors.As(err, &ue) {
				return err
			}
			return usagef("%v; see %s --help", err, c.CommandPath())
		}
	}
	for _, sub := range c.Commands() {
		guardGroups(sub)
	}
}

// report prints err as one line (or JSON) and returns the exit code.
func (a *app) report(err error) int {
	code, exit := classifyErr(err)
	// One line, whatever the error: driver errors (pgx's connect errors, for
	// one) span several lines.
	msg := excerpt.Flatten(err.Error())
	if a.asJSON {
		b, _ := json.Marshal(map[string]any{"error": map[string]string{"code": code, "message": msg}})
		fmt.Fprintln(a.errw, string(b))
	} else {
		fmt.Fprintln(a.errw, "drover: "+excerpt.Terminal(msg))
	}
	return exit
}

// classifyErr gives err its --json code (operator.ErrorCode's, the HTTP
// API's, for the errors the board, the operator and the store return) and
// the exit code: ExitInvalid for what the caller can fix in the command or
// the config, ExitFailed for the rest.
func classifyErr(err error) (string, int) {
	var ue *usageError
	if errors.As(err, &ue) {
		return "bad_usage", ExitInvalid
	}
	switch code := operator.ErrorCode(err); {
	case code == operator.CodeInvalidInput || code == operator.CodeCardNotFound || code == operator.CodeCardAmbiguous:
		return code, ExitInvalid
	case code != "":
		return code, ExitFailed
	case errors.Is(err, errConfig):
		return "invalid_config", ExitInvalid
	}
	return "failed", ExitFailed
}

// configDir is where the config file lives (the store defaults beside it).
func (a *app) configDir() string {
	abs, err := filepath.Abs(a.configPath)
	if err != nil {
		return "."
	}
	return filepath.Dir(abs)
}

// dsn resolves the store DSN: --store, then DROVER_STORE, then the config's
// store key, then a SQLite file beside the config.
func (a *app) dsn() string {
	if a.storeDSN != "" {
		return normalizeDSN(a.storeDSN, "")
	}
	if v := os.Getenv("DROVER_STORE"); v != "" {
		return normalizeDSN(v, "")
	}
	if a.cfg != nil && a.cfg.StoreDSN != "" {
		return normalizeDSN(a.cfg.StoreDSN, a.configDir())
	}
	return "sqlite:" + filepath.Join(a.configDir(), ".drover", "drover.db")
}

// normalizeDSN makes a relative sqlite path absolute (relative to base when given).
func normalizeDSN(dsn, base string) string {
	const p = "sqlite:"
	if len(dsn) > len(p) && dsn[:len(p)] == p {
		path := dsn[len(p):]
		if !filepath.IsAbs(path) && base != "" {
			path = filepath.Join(base, path)
		}
		if abs, err := filepath.Abs(path); err == nil {
			path = abs
		}
		return p + path
	}
	return dsn
}

// ops is the operator service for this invocation.
func (a *app) ops() *operator.Service {
	name := "operator"
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = "operator:" + u.Username
	}
	return &operator.Service{Store: a.st, Board: a.cfg.Board, Agents: a.cfg.AgentNames, Actor: name}
}

// printJSON writes v as indented JSON. The encoder escapes C0 controls;
// C1 controls (U+0080-U+009F), which some terminals obey, are escaped too
// (\u0080 …), so the document means the same and shows nothing hostile.
func (a *app) printJSON(v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := io.WriteString(a.jsonOut, escapeC1(b.String()))
	return err
}

// escapeC1 writes the C1 control characters of a JSON text as \u escapes
// (they can only occur inside strings).
func escapeC1(s string) string {
	if !strings.Contains(s, "\xc2") {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if r >= 0x80 && r <= 0x9f {
			fmt.Fprintf(&b, "\\u%04x", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
