package config

import (
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"gopkg.in/yaml.v3"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/suggest"
)

// validate runs the checks that span sections, after decoding.
func validate(d *decoder, cfg *Config, top map[string]*yaml.Node) {
	if top == nil {
		top = map[string]*yaml.Node{}
	}
	at := func(section string, keys ...string) *yaml.Node {
		n := deref(top[section])
		for _, k := range keys {
			if n == nil || n.Kind != yaml.MappingNode {
				return n
			}
			var next *yaml.Node
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == k {
					next = deref(n.Content[i+1])
				}
			}
			if next == nil {
				return n
			}
			n = next
		}
		return n
	}
	boardOK := true
	if err := cfg.Board.Validate(); err != nil {
		boardOK = false
		path, msg, _ := strings.Cut(err.Error(), ": ")
		d.errf(at("board"), path, "%s", msg)
	}
	cols := strings.Join(cfg.Board.Names(), ", ")

	// policy.failed_state defaults to the board's first blocked column and
	// must be a blocked or cancelled column.
	if c, ok := cfg.Board.First(board.RoleBlocked); ok && !has(top, "policy", "failed_state") {
		cfg.Policy.FailedState = c.Name
	}
	if fs := cfg.Policy.FailedState; boardOK {
		n := at("policy", "failed_state")
		if c, ok := cfg.Board.Column(fs); !ok {
			d.errf(n, "policy.failed_state", "%q is not a column on the board (columns: %s)", fs, cols)
		} else if c.Role != board.RoleBlocked && c.Role != board.RoleCancelled {
			d.errf(n, "policy.failed_state", "%q has role %s; a give-up state must be a sink that automation never reads as ready (a column with role blocked or cancelled)", fs, c.Role)
		}
	}

	// States named for the native tracker must be columns of the right kind.
	if cfg.Tracker.Kind == TrackerNative && boardOK {
		for i, s := range cfg.Tracker.ActiveStates {
			p := fmt.Sprintf("tracker.active_states[%d]", i)
			if c, ok := cfg.Board.Column(s); !ok {
				d.errf(at("tracker", "active_states"), p, "%q is not a column on the board (columns: %s)", s, cols)
			} else if c.Role.IsSink() {
				d.errf(at("tracker", "active_states"), p, "%q has role %s, a sink; active states are the columns agents work from (eligible or running)", s, c.Role)
			}
		}
		for i, s := range cfg.Tracker.TerminalStates {
			if _, ok := cfg.Board.Column(s); !ok {
				d.errf(at("tracker", "terminal_states"), fmt.Sprintf("tracker.terminal_states[%d]", i), "%q is not a column on the board (columns: %s)", s, cols)
			}
		}
	}
	if cfg.Tracker.Kind == TrackerLinear && cfg.Tracker.APIKey == "" {
		d.errf(at("tracker"), "tracker.api_key", "missing; the linear tracker needs an API key (e.g. api_key: $LINEAR_API_KEY)")
	}
	if cfg.Tracker.Kind != TrackerNative && cfg.Tracker.Kind != "" && len(cfg.Tracker.ActiveStates) == 0 {
		d.errf(at("tracker"), "tracker.active_states", "missing; list the %s states agents should pick work from", cfg.Tracker.Kind)
	}
	byState := "dispatch.max_concurrent_by_state"
	if _, ok := top["agent"]; ok && top["dispatch"] == nil {
		byState = "agent.max_concurrent_agents_by_state"
	}
	for _, s := range sortedKeys(cfg.Dispatch.MaxConcurrentByState) {
		if cfg.Tracker.Kind == TrackerNative && boardOK {
			if _, ok := cfg.Board.Column(s); !ok {
				d.errf(nil, byState+"."+s, "%q is not a column on the board (columns: %s)", s, cols)
			}
		} else if !containsFold(cfg.Tracker.ActiveStates, s) {
			d.errf(nil, byState+"."+s, "%q is not one of tracker.active_states (%s)", s, strings.Join(cfg.Tracker.ActiveStates, ", "))
		}
	}

	// A retry-backoff cap from dispatch:/agent: applies when policy.backoff.max is unset.
	if !has(top, "policy", "backoff", "max") && (has(top, "agent", "max_retry_backoff_ms") || has(top, "dispatch", "max_retry_backoff")) {
		cfg.Policy.Backoff.Max = max(cfg.Dispatch.MaxRetryBackoff, cfg.Policy.Backoff.Base)
	}

	// agents.default must name a profile.
	names := sortedKeys(cfg.Agents.Profiles)
	switch {
	case cfg.Agents.Default == "" && len(names) > 1:
		d.errf(at("agents"), "agents.default", "missing; with several profiles (%s) name the one used when a card names none", strings.Join(names, ", "))
	case cfg.Agents.Default != "":
		if _, ok := cfg.Agents.Profiles[cfg.Agents.Default]; !ok {
			d.errf(at("agents", "default"), "agents.default", "%q is not a profile%s; profiles: %s", cfg.Agents.Default, suggest.DidYouMean(suggest.Closest(cfg.Agents.Default, names)), strings.Join(names, ", "))
		}
	}

	// spec_schema must compile as JSON Schema.
	cfg.schemas = map[string]*jsonschema.Schema{}
	for _, name := range names {
		p := cfg.Agents.Profiles[name]
		if p.SpecSchema == nil {
			continue
		}
		sch, err := compileSchema(name, p.SpecSchema)
		if err != nil {
			d.errf(at("agents", "profiles", name, "spec_schema"), "agents.profiles."+name+".spec_schema", "is not a valid JSON Schema: %s", strings.Join(strings.Fields(err.Error()), " "))
			continue
		}
		cfg.schemas[name] = sch
	}
}

// has reports whether the key path is present in the file.
func has(top map[string]*yaml.Node, section string, keys ...string) bool {
	n, ok := top[section]
	if !ok {
		return false
	}
	for _, k := range keys {
		n = deref(n)
		if n == nil || n.Kind != yaml.MappingNode {
			return false
		}
		var next *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == k {
				next = n.Content[i+1]
			}
		}
		if next == nil {
			return false
		}
		n = next
	}
	return true
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
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
