package config

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/drover-dev/drover/internal/agent"
	"github.com/drover-dev/drover/internal/agent/registry"
	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/routing"
)

// agents checks the profiles and builds them. With none, Symphony's
// codex: section is a profile named codex, else the sim agent runs.
func (d *decoder) agents(f *file, cfg *Config) {
	a := Agents{Default: f.Agents.Default, Profiles: map[string]agent.Profile{}, Verify: map[string]Verify{}}
	keys := map[string]routing.ProfileKeys{}
	for _, name := range slices.Sorted(maps.Keys(f.Agents.Profiles)) {
		pf, path := f.Agents.Profiles[name], "agents.profiles."+name
		if board.ValidateAgentName(name) != nil {
			d.errf(path, "%q is not a profile name: use lower-case letters, digits, _ and - (at most 40)", name)
			continue
		}
		pf.Name = name
		if pf.SpecSchema != nil {
			pf.Profile.SpecSchema = d.schemaDoc(path+".spec_schema", pf.SpecSchema)
		}
		a.Profiles[name] = d.profile(path+".", pf.Profile)
		if pf.Verify != nil {
			a.Verify[name] = *pf.Verify
			d.verify(path+".verify", *pf.Verify)
		}
		keys[name] = pf.ProfileKeys
	}
	cx := cfg.Codex
	symphony := len(a.Profiles) == 0 && len(strings.Fields(cx.Command)) > 0
	unused := "not used: agents.profiles is set (add a profile with kind: codex instead)"
	switch {
	case symphony:
		a.Profiles[registry.SymphonyCodexKind] = d.profile("codex.", d.codexProfile(cx))
		if d.has("codex.read_timeout_ms") {
			d.ignore("codex.read_timeout_ms", "not used: drover waits on codex with codex.stall_timeout_ms and codex.turn_timeout_ms")
		}
	case len(a.Profiles) == 0:
		a.Profiles[registry.DemoKind] = newProfile(registry.DemoKind, registry.DemoKind)
		unused = "not used: without codex.command there is no codex profile"
	}
	for _, k := range keysOf(reflect.TypeFor[Codex]()) {
		if !symphony && d.has("codex."+k) {
			d.ignore("codex."+k, unused)
		}
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
	var probs []routing.Problem
	a.Table, probs = routing.Build(f.Agents.File, keys)
	for _, p := range probs {
		d.errf(p.Path, "%s", p.Msg)
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

// profile checks a profile whose keys are under path (agents.profiles.NAME.,
// or codex. for Symphony's) and fills in its kind's command.
func (d *decoder) profile(path string, p agent.Profile) agent.Profile {
	if p.Kind == "" {
		d.errf(path+"kind", "missing; set kind to one of %s", strings.Join(registry.Names(), ", "))
	} else if reg, _ := registry.Lookup(p.Kind); d.oneOf(path+"kind", p.Kind, registry.Names(), "an agent kind") && p.Command == "" {
		p.Command = reg.DefaultCommand
		d.check(!reg.RequiresCommand, path+"command", "missing; a %s profile needs the program to run (e.g. command: ./agent.sh)", p.Kind)
	}
	if d.has(path+"args_mode") && d.oneOf(path+"args_mode", p.ArgsMode, []string{agent.ArgsAppend, agent.ArgsReplace}, "an args mode") && p.ArgsMode == agent.ArgsReplace {
		if err := registry.CheckArgs(p.Kind, p.Args); err != nil {
			d.errf(path+"args", "with args_mode: replace, the list %v; or remove args_mode to add args after the kind's defaults", err)
		}
	}
	for i, v := range p.EnvPassthrough {
		d.check(agent.IsEnvName(v), fmt.Sprintf("%senv_passthrough[%d]", path, i), "%q is not an environment variable name (letters, digits and _, not starting with a digit)", v)
	}
	for _, k := range slices.Sorted(maps.Keys(p.Env)) {
		d.check(agent.IsEnvName(k), path+"env."+k, "is not an environment variable name (letters, digits and _, not starting with a digit)")
	}
	d.oneOf(path+"prompt", p.Prompt, agent.PromptModes, "a prompt mode")
	d.oneOf(path+"resume", p.Resume, agent.ResumeModes, "a resume mode")
	d.oneOf(path+"mcp", p.MCP, agent.MCPModes, "an mcp mode")
	d.check(p.PriceInPerMTok >= 0, path+"price_in_per_mtok", "%v is negative; prices are 0 or more", p.PriceInPerMTok)
	d.check(p.PriceOutPerMTok >= 0, path+"price_out_per_mtok", "%v is negative; prices are 0 or more", p.PriceOutPerMTok)
	d.check(p.MaxLogBytes >= 0, path+"max_log_bytes", "%d is negative; use 0 for the default", p.MaxLogBytes)
	for i, m := range p.Match {
		d.report(fmt.Sprintf("%smatch[%d].", path, i), m.Validate())
	}
	for _, kp := range registry.CheckProfile(&p, func(k string) bool { return d.has(path + k) }) {
		if kp.Unused {
			d.ignore(path+kp.Key, kp.Msg)
		} else {
			d.errf(path+kp.Key, "%s", kp.Msg)
		}
	}
	return p
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

// codexProfile turns Symphony's codex: section into a profile named codex.
func (d *decoder) codexProfile(cx Codex) agent.Profile {
	p := newProfile(registry.SymphonyCodexKind, registry.SymphonyCodexKind)
	if err := registry.SymphonyCommand(&p, cx.Command); err != nil {
		d.errf("codex.command", "%q %v", cx.Command, err)
	}
	p.Timeout, p.StallTimeout = cmp.Or(cx.TurnTimeout, p.Timeout), cmp.Or(cx.StallTimeout, p.StallTimeout)
	p.ApprovalPolicy, p.ThreadSandbox, p.TurnSandboxPolicy = cx.ApprovalPolicy, cx.ThreadSandbox, cx.TurnSandboxPolicy
	p.Model, p.ReasoningEffort, p.ServiceTier = cx.Model, cx.ReasoningEffort, cx.ServiceTier
	return p
}
