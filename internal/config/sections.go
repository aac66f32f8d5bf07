package config

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/drover-dev/drover/internal/agent"
	"github.com/drover-dev/drover/internal/agent/codex"
	"github.com/drover-dev/drover/internal/agent/registry"
	"github.com/drover-dev/drover/internal/agent/sim"
	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/policy"
	"github.com/drover-dev/drover/internal/suggest"
)

// PromptModes say how a command agent receives its prompt.
var PromptModes = []string{"stdin", "file", "arg"}

// Profile defaults applied when a profile leaves them out.
const (
	DefaultProfileTimeout = time.Hour
	DefaultStallTimeout   = 5 * time.Minute
)

// decodeAll fills cfg from the top-level sections, defaults included.
func decodeAll(d *decoder, cfg *Config, top map[string]*yaml.Node, baseDir string) {
	if top == nil {
		top = map[string]*yaml.Node{}
	}
	cfg.Board = decodeBoard(d, top["board"])
	cfg.Policy = decodePolicy(d, top["policy"])
	cfg.Limits = decodeLimits(d, top["limits"])
	cfg.Notify = decodeNotify(d, top["notify"])
	cfg.Workspace = decodeWorkspace(d, top["workspace"], baseDir)
	cfg.Hooks = decodeHooks(d, top["hooks"])
	cfg.Dispatch = decodeDispatch(d, top["dispatch"], top["polling"], top["agent"])
	cfg.Tracker = decodeTracker(d, top["tracker"], cfg.Board)
	cfg.Store = decodeStore(d, top["store"], baseDir)
	cfg.Server = decodeServer(d, top["server"])
	cfg.Codex = decodeCodex(d, top["codex"])
	cfg.Agents = decodeAgents(d, top["agents"], top["codex"] != nil, cfg.Codex)
}

var boardKeys = []string{"prefix", "columns"}

func decodeBoard(d *decoder, n *yaml.Node) board.Board {
	b := board.Default()
	f := d.fields(n, "board", boardKeys, strict)
	if v, ok := f["prefix"]; ok {
		b.Prefix = d.str(v, "board.prefix", expandPlain)
	}
	if v, ok := f["columns"]; ok {
		v = deref(v)
		if v == nil || v.Kind != yaml.SequenceNode {
			d.errf(v, "board.columns", "must be a list of {name, role} entries")
			return b
		}
		b.Columns = nil
		for i, c := range v.Content {
			p := fmt.Sprintf("board.columns[%d]", i)
			cf := d.fields(c, p, []string{"name", "role"}, strict)
			if cf == nil {
				continue
			}
			b.Columns = append(b.Columns, board.Column{
				Name: d.str(cf["name"], p+".name", expandPlain),
				Role: board.Role(d.str(cf["role"], p+".role", expandPlain)),
			})
		}
	}
	return b
}

var profileKeys = []string{"kind", "command", "args", "env", "prompt", "timeout", "stall_timeout", "provider", "spec_schema", "match", "price_in_per_mtok", "price_out_per_mtok", "max_log_bytes"}

func decodeAgents(d *decoder, n *yaml.Node, haveCodex bool, cx Codex) Agents {
	f := d.fields(n, "agents", []string{"default", "profiles"}, strict)
	a := Agents{Profiles: map[string]agent.Profile{}}
	if f == nil {
		return a
	}
	a.Default = d.str(f["default"], "agents.default", expandPlain)
	for _, e := range d.entries(f["profiles"], "agents.profiles") {
		p := "agents.profiles." + e.key
		if err := board.ValidateAgentName(e.key); err != nil {
			d.errf(e.knode, p, "%q is not a profile name: use lower-case letters, digits, _ and - (at most 40)", e.key)
			continue
		}
		a.Profiles[e.key] = decodeProfile(d, e.key, e.val, p)
	}
	if len(a.Profiles) == 0 {
		if haveCodex && cx.Command != "" {
			a.Profiles[codex.Kind] = codexProfile(d, cx)
		} else {
			a.Profiles[sim.Kind] = agent.Profile{Name: sim.Kind, Kind: sim.Kind, Prompt: "stdin", Timeout: DefaultProfileTimeout, StallTimeout: DefaultStallTimeout}
		}
	} else if haveCodex && cx.Command != "" {
		d.ignored = append(d.ignored, "codex.command")
		d.warnf("codex.command", "not used: agents.profiles is set (add a profile with kind: codex instead)")
	}
	if a.Default == "" && len(a.Profiles) == 1 {
		for name := range a.Profiles {
			a.Default = name
		}
	}
	return a
}

// codexProfile turns Symphony's codex: section into a profile named codex.
func codexProfile(d *decoder, cx Codex) agent.Profile {
	p := agent.Profile{Name: codex.Kind, Kind: codex.Kind, Prompt: "stdin", Timeout: DefaultProfileTimeout, StallTimeout: DefaultStallTimeout}
	fields := strings.Fields(cx.Command)
	if len(fields) > 0 {
		p.Command = fields[0]
	}
	if contains(fields, "app-server") {
		d.warnf("codex.command", "drover runs codex as `%s exec --json`; the app-server arguments are not used", p.Command)
	} else if len(fields) > 1 {
		p.Args = fields[1:]
	}
	if cx.TurnTimeout > 0 {
		p.Timeout = cx.TurnTimeout
	}
	if cx.StallTimeout > 0 {
		p.StallTimeout = cx.StallTimeout
	}
	return p
}

func decodeProfile(d *decoder, name string, n *yaml.Node, path string) agent.Profile {
	p := agent.Profile{Name: name, Prompt: "stdin", Timeout: DefaultProfileTimeout, StallTimeout: DefaultStallTimeout}
	f := d.fields(n, path, profileKeys, strict)
	if f == nil {
		return p
	}
	kinds := registry.Names()
	p.Kind = d.str(f["kind"], path+".kind", expandPlain)
	reg, known := registry.Lookup(p.Kind)
	if _, ok := f["kind"]; !ok {
		d.errf(deref(n), path+".kind", "missing; set kind to one of %s", strings.Join(kinds, ", "))
	} else if !known || p.Kind == "" {
		d.errf(deref(f["kind"]), path+".kind", "%q is not an agent kind%s; use one of %s", p.Kind, suggest.DidYouMean(suggest.Closest(p.Kind, kinds)), strings.Join(kinds, ", "))
	}
	p.Command = d.str(f["command"], path+".command", expandPlain)
	if p.Command == "" && known && p.Kind != "" {
		p.Command = reg.DefaultCommand
		if reg.RequiresCommand {
			d.errf(deref(n), path+".command", "missing; a %s profile needs the program to run (e.g. command: ./agent.sh)", p.Kind)
		}
	}
	p.Args = d.strList(f["args"], path+".args", expandPlain)
	if v, ok := f["env"]; ok {
		p.Env = map[string]string{}
		for _, e := range d.entries(v, path+".env") {
			if !isEnvName(e.key) {
				d.errf(e.knode, path+".env."+e.key, "is not an environment variable name (letters, digits and _)")
				continue
			}
			p.Env[e.key] = d.str(e.val, path+".env."+e.key, expandSecret)
		}
	}
	if v, ok := f["prompt"]; ok {
		p.Prompt = d.str(v, path+".prompt", expandPlain)
		if !contains(PromptModes, p.Prompt) {
			d.errf(deref(v), path+".prompt", "%q is not a prompt mode; use stdin, file or arg", p.Prompt)
		}
	}
	if v, ok := f["timeout"]; ok {
		p.Timeout, _ = d.duration(v, path+".timeout")
	}
	if v, ok := f["stall_timeout"]; ok {
		p.StallTimeout, _ = d.duration(v, path+".stall_timeout")
	}
	p.Provider = d.str(f["provider"], path+".provider", expandPlain)
	if v, ok := f["spec_schema"]; ok && !isNull(deref(v)) {
		p.SpecSchema = decodeSchemaDoc(d, v, path+".spec_schema")
	}
	if v, ok := f["match"]; ok {
		p.Match = decodeMatch(d, v, path+".match")
	}
	for _, pr := range []struct {
		key string
		dst *float64
	}{{"price_in_per_mtok", &p.PriceInPerMTok}, {"price_out_per_mtok", &p.PriceOutPerMTok}} {
		key, dst := pr.key, pr.dst
		if v, ok := f[key]; ok {
			if x, ok := d.number(v, path+"."+key); ok && x < 0 {
				d.errf(deref(v), path+"."+key, "%v is negative; prices are 0 or more", x)
			} else {
				*dst = x
			}
		}
	}
	if v, ok := f["max_log_bytes"]; ok {
		if x, ok := d.integer(v, path+".max_log_bytes"); ok && x < 0 {
			d.errf(deref(v), path+".max_log_bytes", "%d is negative; use 0 for the default", x)
		} else {
			p.MaxLogBytes = int64(x)
		}
	}
	return p
}

// decodeSchemaDoc reads a spec_schema written in YAML (or as a JSON string)
// into a JSON-compatible map.
func decodeSchemaDoc(d *decoder, n *yaml.Node, path string) map[string]any {
	n = deref(n)
	var v any
	if n.Kind == yaml.ScalarNode {
		if err := json.Unmarshal([]byte(n.Value), &v); err != nil {
			d.errf(n, path, "is a string but not JSON (%v); write the schema as YAML keys or as a JSON object", err)
			return nil
		}
	} else if err := n.Decode(&v); err != nil {
		d.errf(n, path, "cannot be read: %v", err)
		return nil
	}
	m, ok := jsonCompatible(v).(map[string]any)
	if !ok {
		d.errf(n, path, "must be a JSON Schema object (e.g. {type: object, required: [plan]})")
		return nil
	}
	return m
}

// jsonCompatible converts YAML-decoded values (map[string]any, ints) into
// what encoding/json would produce.
func jsonCompatible(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var out any
	if json.Unmarshal(b, &out) != nil {
		return nil
	}
	return out
}

func decodeMatch(d *decoder, n *yaml.Node, path string) []policy.Rule {
	n = deref(n)
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		d.errf(n, path, "must be a list of {name, regex, exit_code, kind} rules")
		return nil
	}
	var out []policy.Rule
	for i, c := range n.Content {
		p := fmt.Sprintf("%s[%d]", path, i)
		f := d.fields(c, p, []string{"name", "regex", "exit_code", "kind"}, strict)
		if f == nil {
			continue
		}
		r := policy.Rule{Name: d.str(f["name"], p+".name", expandPlain), Regex: d.str(f["regex"], p+".regex", expandNone), Kind: policy.Kind(d.str(f["kind"], p+".kind", expandPlain))}
		if r.Regex != "" {
			if _, err := regexp.Compile(r.Regex); err != nil {
				d.errf(deref(f["regex"]), p+".regex", "does not compile: %v", err)
			}
		}
		if v, ok := f["exit_code"]; ok {
			if x, ok := d.integer(v, p+".exit_code"); ok {
				r.ExitCode = &x
			}
		}
		if r.Regex == "" && r.ExitCode == nil {
			d.errf(deref(c), p, "matches nothing; give a regex, an exit_code or both")
		}
		if k := policy.Kind(r.Kind); !k.Valid() && k != policy.KindSucceeded {
			d.errf(deref(c), p+".kind", "%q is not a failure kind%s; valid kinds: %s", r.Kind, suggest.DidYouMean(suggest.Closest(string(r.Kind), kindNames())), strings.Join(kindNames(), ", "))
		}
		out = append(out, r)
	}
	return out
}

func kindNames() []string {
	s := make([]string, len(policy.Kinds))
	for i, k := range policy.Kinds {
		s[i] = string(k)
	}
	return s
}
