package agent

import "github.com/drover-dev/drover/internal/policy"

// Registration is everything drover knows about one agent kind. Each kind
// package (agent/command, agent/claude, agent/codex, agent/gemini,
// agent/opencode, agent/sim) returns its own; the list of them is
// agent/registry. Nothing outside internal/agent names a kind: the config,
// the dispatcher and the CLI ask the registry.
type Registration struct {
	// Kind is the name a profile's kind: key gives.
	Kind string
	// Doc is a one-line description, for errors and documentation.
	Doc string
	// New builds the agent for a profile of this kind. The registry has
	// already filled Command with the default below when the profile gives
	// none, put DefaultArgs and LastArgs around the profile's args (unless
	// it replaces them) and merged CommonPassEnv and PassEnv into
	// EnvPassthrough.
	New func(p Profile) (Agent, error)
	// DefaultCommand is the program run when the profile names none ("" =
	// none: the profile must name one, or the kind runs in process).
	DefaultCommand string
	// RequiresCommand says a profile of this kind must name its program.
	RequiresCommand bool
	// InProcess says the kind runs inside drover: there is no program to
	// look for on a node's PATH.
	InProcess bool
	// DefaultArgs returns the arguments that come before the profile's own
	// args (nil = none). It may read the dispatch settings on the profile
	// (Profile.MaxTurns).
	DefaultArgs func(p Profile) []string
	// ResumeArgs returns the arguments of a run that continues the agent's
	// session sessionID, with the prompt as its next user message, given
	// the profile with its arguments filled in (p.Args); nil when the kind,
	// or this profile's arguments, cannot resume (the run starts a new
	// session). nil func = the kind never resumes.
	ResumeArgs func(p Profile, sessionID string) []string
	// LastArgs returns the arguments that end the command line, after the
	// profile's own args (nil = none; codex: "-", the prompt on stdin).
	LastArgs func(p Profile) []string
	// CheckArgs, when set, refuses a replacement argument list (args_mode:
	// replace) that drops what the kind's parser needs; its error says
	// which flag is missing.
	CheckArgs func(args []string) error
	// PassEnv names the variables of drover's environment the kind's
	// program documents for credentials and endpoints; agents of the kind
	// inherit them when set, on top of proc.BaseEnvKeys and CommonPassEnv.
	PassEnv []string
	// NewParser makes a fresh reader of the kind's structured output; nil
	// for kinds whose output is plain text.
	NewParser func() Parser
	// ValidateSpec checks a card's spec before the card is claimed; nil when
	// the kind reads nothing from it. Its error names the spec field.
	ValidateSpec func(spec []byte) error
	// MCP, when set, wires drover's MCP server into a run of this kind in
	// the way its program documents (it may write config files into s.Dir,
	// never into the operator's own config); nil: the kind cannot take it
	// (a command agent starts drover mcp itself, or uses drover run).
	MCP func(s MCPServer) (MCPWiring, error)
}

// KeyProblem is what is wrong with one key of a profile (Key as written
// under it, e.g. "thread_sandbox"); Unused marks a valid key this profile
// does not read, a warning rather than an error.
type KeyProblem struct {
	Key, Msg string
	Unused   bool
}

// Argument modes (agent profile key "args_mode").
const (
	ArgsAppend  = "append"  // the default: the profile's args follow the kind's
	ArgsReplace = "replace" // the profile's args are the whole list
)

// CommonPassEnv are the variables every program-running kind inherits when
// set: proxies and certificate bundles, without which an agent behind a
// corporate proxy cannot reach its provider.
var CommonPassEnv = []string{
	"HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "ALL_PROXY", "https_proxy", "http_proxy", "no_proxy", "all_proxy",
	"SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS",
}

// Parser reads an agent's stdout, one line at a time, for structured output.
// Feed is called for every stdout line (without its newline; the slice may be
// kept). Feed, Structured and Progress are never called concurrently.
type Parser interface {
	// Feed reads one stdout line; it never panics.
	Feed(line []byte)
	// Structured returns the typed fields read so far.
	Structured() policy.Structured
	// Progress is what the agent has shown so far: a human-readable last
	// line ("" = use the raw last line), tokens in, tokens out, cost in USD.
	Progress() (lastLine string, tokensIn, tokensOut int64, costUSD float64)
}

// StderrFeeder is implemented by parsers that also read stderr (codex in
// plain-text mode prints its errors there).
type StderrFeeder interface {
	FeedStderr(line []byte)
}

// InputError is a Run failure caused by the card's input (its spec), not by
// the agent or the node: the dispatcher blocks the card as invalid_input.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }

// Unwrap returns the underlying error.
func (e *InputError) Unwrap() error { return e.Err }
