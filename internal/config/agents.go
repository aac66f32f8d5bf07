package config

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/drover-dev/drover/internal/agent"
	"github.com/drover-dev/drover/internal/agent/registry"
	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/policy"
)

// agents checks the profiles and builds them. With none, Symphony's
// codex.command is a profile named codex, else the sim agent runs.
func (d *decoder) agents(f *file, cfg *Config) {
	a := Agents{Default: f.Agents.Default, Profiles: map[string]agent.Profile{}}
	for _, name := range slices.Sorted(maps.Keys(f.Agents.Profiles)) {
		pf, path := f.Agents.Profiles[name], "agents.profiles."+name
		if board.ValidateAgentName(name) != nil {
			d.errf(path, "%q is not a profile name: use lower-case letters, digits, _ and - (at most 40)", name)
			continue
		}
		a.Profiles[name] = d.profile(name, pf)
		if pf.Verify != nil {
			if a.Verify == nil {
				a.Verify = map[string]Verify{}
			}
			a.Verify[name] = *pf.Verify
			d.verify(path+".verify", *pf.Verify)
		}
	}
	switch cx := cfg.Codex; {
	case len(a.Profiles) == 0 && cx.Command != "":
		a.Profiles[registry.SymphonyCodexKind] = d.codexProfile(cx)
	case len(a.Profiles) == 0:
		a.Profiles[registry.DemoKind] = newProfile(registry.DemoKind, registry.DemoKind)
	case cx.Command != "":
		d.ignore("codex.command", "not used: agents.profiles is set (add a profile with kind: codex instead)")
	}
	names := slices.Sorted(maps.Keys(a.Profiles))
	if a.Default == "" && len(names) == 1 {
		a.Default = names[0]
	}
	if a.Default == "" {
		d.errf("agents.default", "missing; with several profiles (%s) name the one used when a card names none", strings.Join(names, ", "))
	} else {
		d.oneOf("agents.default", a.Default, names, "a profile")
	}
	cfg.schemas = map[string]*jsonschema.Schema{}
	for _, name := range names {
		if doc := a.Profiles[name].SpecSchema; doc != nil {
			if sch, err := compileSchema(name, doc); err != nil {
				d.errf("agents.profiles."+name+".spec_schema", "is not a valid JSON Schema: %s", strings.Join(strings.Fields(err.Error()), " "))
			} else {
				cfg.schemas[name] = sch
			}
		}
	}
	cfg.Agents = a
}

func newProfile(name, kind string) agent.Profile {
	f := profileFile{Kind: kind}
	f.setDefaults()
	return f.profile(name)
}

func (f profileFile) profile(name string) agent.Profile {
	return agent.Profile{Name: name, Kind: f.Kind, Command: f.Command, Args: f.Args, ArgsMode: f.ArgsMode, Env: f.Env,
		EnvPassthrough: f.EnvPassthrough, Prompt: f.Prompt, Timeout: f.Timeout, StallTimeout: f.StallTimeout,
		Provider: f.Provider, PriceInPerMTok: f.PriceIn, PriceOutPerMTok: f.PriceOut, MaxLogBytes: f.MaxLogBytes,
		Resume: f.Resume, MCP: f.MCP}
}

func (d *decoder) profile(name string, f profileFile) agent.Profile {
	path, p := "agents.profiles."+name+".", f.profile(name)
	d.check(d.has(path+"kind"), path+"kind", "missing; set kind to one of %s", strings.Join(registry.Names(), ", "))
	known := d.has(path+"kind") && d.oneOf(path+"kind", p.Kind, registry.Names(), "an agent kind")
	if reg, _ := registry.Lookup(p.Kind); known && p.Command == "" {
		p.Command = reg.DefaultCommand
		d.check(!reg.RequiresCommand, path+"command", "missing; a %s profile needs the program to run (e.g. command: ./agent.sh)", p.Kind)
	}
	if d.has(path+"args_mode") && d.oneOf(path+"args_mode", p.ArgsMode, []string{agent.ArgsAppend, agent.ArgsReplace}, "an args mode") && p.ArgsMode == agent.ArgsReplace {
		if err := registry.CheckArgs(p.Kind, p.Args); err != nil {
			d.errf(path+"args", "with args_mode: replace, the list %v; or remove args_mode to add args after the kind's defaults", err)
		}
	}
	for i, v := range p.EnvPassthrough {
		d.check(isEnvName(v), fmt.Sprintf("%senv_passthrough[%d]", path, i), "%q is not an environment variable name (letters, digits and _, not starting with a digit)", v)
	}
	for _, k := range slices.Sorted(maps.Keys(p.Env)) {
		d.check(isEnvName(k), path+"env."+k, "is not an environment variable name (letters, digits and _, not starting with a digit)")
	}
	d.oneOf(path+"prompt", p.Prompt, PromptModes, "a prompt mode")
	d.oneOf(path+"resume", p.Resume, ResumeModes, "a resume mode")
	d.oneOf(path+"mcp", p.MCP, MCPModes, "an mcp mode")
	d.check(p.PriceInPerMTok >= 0, path+"price_in_per_mtok", "%v is negative; prices are 0 or more", p.PriceInPerMTok)
	d.check(p.PriceOutPerMTok >= 0, path+"price_out_per_mtok", "%v is negative; prices are 0 or more", p.PriceOutPerMTok)
	d.check(p.MaxLogBytes >= 0, path+"max_log_bytes", "%d is negative; use 0 for the default", p.MaxLogBytes)
	if f.SpecSchema != nil {
		p.SpecSchema = d.schemaDoc(path+"spec_schema", f.SpecSchema)
	}
	for i, m := range f.Match {
		p.Match = append(p.Match, d.rule(fmt.Sprintf("%smatch[%d]", path, i), m))
	}
	given := slices.DeleteFunc(slices.Clone(appServerKeys), func(k string) bool { return !d.has(path + k) })
	for _, k := range given {
		if p.Kind != registry.SymphonyCodexKind {
			d.errf(path+k, "only a %s profile in app-server mode reads it; remove it or set kind: %[1]s with args: [app-server]", registry.SymphonyCodexKind)
		} else if !slices.Contains(p.Args, "app-server") {
			d.ignore(path+k, "not used: the profile runs `codex exec`; only app-server mode (args: [app-server]) reads it")
		}
	}
	if p.Kind == registry.SymphonyCodexKind {
		a := d.appServer(path, f.appServer)
		p.ApprovalPolicy, p.ThreadSandbox, p.TurnSandboxPolicy = a.ApprovalPolicy, a.ThreadSandbox, a.TurnSandboxPolicy
	}
	return p
}

func (d *decoder) rule(path string, m matchRule) policy.Rule {
	if _, err := regexp.Compile(m.Regex); err != nil {
		d.errf(path+".regex", "does not compile: %v", err)
	}
	d.check(m.Regex != "" || m.ExitCode != nil, path, "matches nothing; give a regex, an exit_code or both")
	if m.Kind != policy.KindSucceeded {
		d.oneOf(path+".kind", string(m.Kind), kindNames(), "a failure kind")
	}
	return policy.Rule(m)
}

func kindNames() []string {
	s := make([]string, len(policy.Kinds))
	for i, k := range policy.Kinds {
		s[i] = string(k)
	}
	return s
}

// schemaDoc is a spec_schema written in YAML (or as a JSON string) as JSON.
func (d *decoder) schemaDoc(path string, v any) map[string]any {
	if s, ok := v.(string); ok {
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			d.errf(path, "is a string but not JSON (%v); write the schema as YAML keys or as a JSON object", err)
			return nil
		}
	}
	m, ok := jsonCompatible(v).(map[string]any)
	d.check(ok, path, "must be a JSON Schema object (e.g. {type: object, required: [plan]})")
	return m
}

// jsonCompatible converts YAML-decoded values (map[string]any, ints) into
// what encoding/json would produce.
func jsonCompatible(v any) any {
	b, err := json.Marshal(v)
	var out any
	if err != nil || json.Unmarshal(b, &out) != nil {
		return nil
	}
	return out
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

// codex checks Symphony's codex: section. Only app-server mode reads its
// app-server keys; read_timeout_ms no mode reads.
func (d *decoder) codex(cx *Codex) {
	app := slices.Contains(strings.Fields(cx.Command), "app-server")
	exec := "not used: drover runs codex with `exec --json`; run `codex app-server` in codex.command for the app-server keys, or put flags in an agents.profiles entry's args"
	for _, k := range appServerKeys {
		if !app && d.has("codex."+k) {
			d.ignore("codex."+k, exec)
		}
	}
	if d.has("codex.read_timeout_ms") && app {
		d.ignore("codex.read_timeout_ms", "not used: drover waits on the app-server's messages with codex.stall_timeout_ms and codex.turn_timeout_ms")
	} else if d.has("codex.read_timeout_ms") {
		d.ignore("codex.read_timeout_ms", exec)
	}
	cx.appServer = d.appServer("codex.", cx.appServer)
}

// appServer checks approval_policy, thread_sandbox and turn_sandbox_policy
// under path against what codex app-server takes.
func (d *decoder) appServer(path string, a appServer) appServer {
	show := func(v any) string {
		if s, ok := v.(string); ok {
			return strconv.Quote(s)
		}
		return fmt.Sprint(v)
	}
	if a.ApprovalPolicy != nil {
		s, _ := a.ApprovalPolicy.(string)
		m, _ := a.ApprovalPolicy.(map[string]any)
		_, granular := m["granular"]
		d.check(slices.Contains(approvalPolicies, s) || granular && len(m) == 1, path+"approval_policy", "%s is not an approval policy; use one of %s, or {granular: {…}}", show(a.ApprovalPolicy), strings.Join(approvalPolicies, ", "))
		a.ApprovalPolicy = jsonCompatible(a.ApprovalPolicy)
	}
	if a.ThreadSandbox != "" {
		d.oneOf(path+"thread_sandbox", a.ThreadSandbox, threadSandboxes, "a sandbox mode")
	}
	if a.TurnSandboxPolicy != nil {
		m, _ := a.TurnSandboxPolicy.(map[string]any)
		typ, _ := m["type"].(string)
		d.check(slices.Contains(turnSandboxTypes, typ), path+"turn_sandbox_policy", "%s is not a sandbox policy; give a mapping whose type is one of %s (e.g. {type: workspaceWrite, networkAccess: false})", show(a.TurnSandboxPolicy), strings.Join(turnSandboxTypes, ", "))
		a.TurnSandboxPolicy = jsonCompatible(a.TurnSandboxPolicy)
	}
	return a
}

// codexProfile turns Symphony's codex: section into a profile named codex.
func (d *decoder) codexProfile(cx Codex) agent.Profile {
	p := newProfile(registry.SymphonyCodexKind, registry.SymphonyCodexKind)
	fields := strings.Fields(cx.Command)
	if len(fields) > 0 {
		p.Command = fields[0]
	}
	switch {
	case slices.Contains(fields, "app-server"):
		// "codex … app-server": drover speaks the app-server protocol
		// with the line's own arguments and the app-server keys.
		p.Args, p.ArgsMode = fields[1:], agent.ArgsReplace
		p.ApprovalPolicy, p.ThreadSandbox, p.TurnSandboxPolicy = cx.ApprovalPolicy, cx.ThreadSandbox, cx.TurnSandboxPolicy
	case len(fields) > 1:
		// "codex exec …" is the whole line (the registry would add exec
		// again); anything else adds flags after drover's own.
		p.Args = fields[1:]
		if slices.Contains(p.Args, "exec") {
			p.ArgsMode = agent.ArgsReplace
			if err := registry.CheckArgs(p.Kind, p.Args); err != nil {
				d.errf("codex.command", "%q %v", cx.Command, err)
			}
		}
	}
	if cx.TurnTimeout > 0 {
		p.Timeout = cx.TurnTimeout
	}
	if cx.StallTimeout > 0 {
		p.StallTimeout = cx.StallTimeout
	}
	return p
}
