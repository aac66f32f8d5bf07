package config

import "gopkg.in/yaml.v3"

// validate runs the checks that span sections, after decoding. Each check
// lives with the section it reports on; they run in this order (problems on
// the same line keep it).
func validate(d *decoder, cfg *Config, top map[string]*yaml.Node) {
	if top == nil {
		top = map[string]*yaml.Node{}
	}
	boardOK := validateBoard(d, cfg, top)
	validateFailedState(d, cfg, top, boardOK)
	validateTrackerStates(d, cfg, top, boardOK)
	validateByState(d, cfg, top, boardOK)
	capRetryBackoff(cfg, top)
	validateAgents(d, cfg, top)
}

// at returns the node of a key path in the file, or the deepest node of it
// that exists (for the line of a problem about a missing key).
func at(top map[string]*yaml.Node, section string, keys ...string) *yaml.Node {
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
