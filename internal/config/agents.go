package config

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"gopkg.in/yaml.v3"

	"github.com/drover-dev/drover/internal/agent"
	"github.com/drover-dev/drover/internal/agent/registry"
	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/policy"
	"github.com/drover-dev/drover/internal/suggest"
)

// Agents is the agents: section.
type Agents struct {
	Default  string                   `json:"default"`
	Profiles map[string]agent.Profile `json:"profiles"`
	// Verify holds the profiles' own verify steps
	// (agents.profiles.NAME.verify), by profile name.
	Verify map[string]Verify `json:"verify,omitempty"`
}

// Profile returns the named profile, or the default one for "".
func (a Agents) Profile(name string) (agent.Profile, bool) {
	if name == "" {
		name = a.Default
	}
	p, ok := a.Profiles[name]
	return p, ok
}

// PromptModes say how a command agent receives its prompt.
var PromptModes = []string{"stdin", "file", "arg"}

// ResumeModes say whether the attempt after a human's answer continues the
// agent's session.
var ResumeModes = []string{agent.ResumeAuto, agent.ResumeNever}

// MCPModes say whether drover's MCP server (drover mcp) is wired into a
// profile's runs: auto (the default, for kinds that can take it) or off.
var MCPModes = []string{agent.MCPAuto, agent.MCPOff}

// Profile defaults applied when a profile leaves them out.
const (
	DefaultProfileTimeout = time.Hour
	DefaultStallTimeout   = 5 * time.Minute
)

var profileKeys = []string{"kind", "command", "args", "args_mode", "env", "env_passthrough", "prompt", "timeout", "stall_timeout", "provider", "spec_schema", "match", "price_in_per_mtok", "price_out_per_mtok", "max_log_bytes", "resume", "approval_policy", "thread_sandbox", "turn_sandbox_policy", "mcp", "verify"}

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
		if v := mapValue(e.val, "verify"); v != nil {
			if a.Verify == nil {
				a.Verify = map[string]Verify{}
			}
			a.Verify[e.key] = decodeVerify(d, v, p+".verify")
		}
	}
	if len(a.Profiles) == 0 {
		if haveCodex && cx.Command != "" {
			a.Profiles[registry.SymphonyCodexKind] = codexProfile(d, cx)
		} else {
			a.Profiles[registry.DemoKind] = agent.Profile{Name: registry.DemoKind, Kind: registry.DemoKind, Prompt: "stdin", Timeout: DefaultProfileTimeout, StallTimeout: DefaultStallTimeout}
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

func decodeProfile(d *decoder, name string, n *yaml.Node, path string) agent.Profile {
	p := agent.Profile{Name: name, Prompt: "stdin", Timeout: DefaultProfileTimeout, StallTimeout: DefaultStallTimeout, Resume: agent.ResumeAuto, MCP: agent.MCPAuto}
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
	if v, ok := f["args_mode"]; ok {
		p.ArgsMode = d.str(v, path+".args_mode", expandPlain)
		switch p.ArgsMode {
		case agent.ArgsAppend:
		case agent.ArgsReplace:
			if err := registry.CheckArgs(p.Kind, p.Args); err != nil {
				d.errf(deref(n), path+".args", "with args_mode: replace, the list %v; or remove args_mode to add args after the kind's defaults", err)
			}
		default:
			d.errf(deref(v), path+".args_mode", "%q is not an args mode; use append (args follow the kind's defaults) or replace (args are the whole list)", p.ArgsMode)
		}
	}
	for _, name := range d.strList(f["env_passthrough"], path+".env_passthrough", expandNone) {
		if !isEnvName(name) {
			d.errf(deref(f["env_passthrough"]), path+".env_passthrough", "%q is not an environment variable name (letters, digits and _, not starting with a digit)", name)
			continue
		}
		p.EnvPassthrough = append(p.EnvPassthrough, name)
	}
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
	if v, ok := f["mcp"]; ok {
		p.MCP = d.str(v, path+".mcp", expandPlain)
		if !contains(MCPModes, p.MCP) {
			d.errf(deref(v), path+".mcp", "%q is not an mcp mode; use auto (give the agent drover's tools: drover_block, drover_ask_human, …) or off", p.MCP)
		}
	}
	if v, ok := f["resume"]; ok {
		p.Resume = d.str(v, path+".resume", expandPlain)
		if !contains(ResumeModes, p.Resume) {
			d.errf(deref(v), path+".resume", "%q is not a resume mode; use auto (continue the agent's session after an answer, where its kind can) or never (always a new session)", p.Resume)
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
	decodeProfileAppServer(d, f, &p, path)
	if v, ok := f["max_log_bytes"]; ok {
		if x, ok := d.integer(v, path+".max_log_bytes"); ok && x < 0 {
			d.errf(deref(v), path+".max_log_bytes", "%d is negative; use 0 for the default", x)
		} else {
			p.MaxLogBytes = int64(x)
		}
	}
	return p
}

// decodeProfileAppServer reads a profile's codex app-server keys. Only a
// codex profile takes them, and only app-server mode (its args run
// app-server) reads them.
func decodeProfileAppServer(d *decoder, f map[string]*yaml.Node, p *agent.Profile, path string) {
	var given []string
	for _, k := range appServerKeys {
		if _, ok := f[k]; ok {
			given = append(given, k)
		}
	}
	if len(given) == 0 {
		return
	}
	if p.Kind != registry.SymphonyCodexKind {
		for _, k := range given {
			d.errf(deref(f[k]), path+"."+k, "only a %s profile in app-server mode reads it; remove it or set kind: %s with args: [app-server]", registry.SymphonyCodexKind, registry.SymphonyCodexKind)
		}
		return
	}
	p.ApprovalPolicy, p.ThreadSandbox, p.TurnSandboxPolicy = decodeAppServerKeys(d, f, path)
	if !contains(p.Args, "app-server") {
		for _, k := range given {
			d.ignored = append(d.ignored, path+"."+k)
			d.warnf(path+"."+k, "not used: the profile runs `codex exec`; only app-server mode (args: [app-server]) reads it")
		}
	}
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

// validateAgents checks agents.default names a profile and every
// spec_schema compiles as JSON Schema.
func validateAgents(d *decoder, cfg *Config, top map[string]*yaml.Node) {
	names := sortedKeys(cfg.Agents.Profiles)
	switch {
	case cfg.Agents.Default == "" && len(names) > 1:
		d.errf(at(top, "agents"), "agents.default", "missing; with several profiles (%s) name the one used when a card names none", strings.Join(names, ", "))
	case cfg.Agents.Default != "":
		if _, ok := cfg.Agents.Profiles[cfg.Agents.Default]; !ok {
			d.errf(at(top, "agents", "default"), "agents.default", "%q is not a profile%s; profiles: %s", cfg.Agents.Default, suggest.DidYouMean(suggest.Closest(cfg.Agents.Default, names)), strings.Join(names, ", "))
		}
	}
	cfg.schemas = map[string]*jsonschema.Schema{}
	for _, name := range names {
		p := cfg.Agents.Profiles[name]
		if p.SpecSchema == nil {
			continue
		}
		sch, err := compileSchema(name, p.SpecSchema)
		if err != nil {
			d.errf(at(top, "agents", "profiles", name, "spec_schema"), "agents.profiles."+name+".spec_schema", "is not a valid JSON Schema: %s", strings.Join(strings.Fields(err.Error()), " "))
			continue
		}
		cfg.schemas[name] = sch
	}
}

// compileSchema compiles one profile's spec_schema. References to other
// documents are refused: a schema must be self-contained.
func compileSchema(name string, doc map[string]any) (sch *jsonschema.Schema, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	c := jsonschema.NewCompiler()
	c.UseLoader(jsonschema.SchemeURLLoader{})
	url := "mem:///agents/" + name + "/spec_schema.json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	return c.Compile(url)
}
