package config

import (
	"time"

	"gopkg.in/yaml.v3"
)

// Verify is what drover runs in a card's workspace after a clean exit to
// decide that the work is done: each command in turn (sh -c), within
// Timeout for all of them. No commands: a clean exit is done as before.
type Verify struct {
	Commands []string      `json:"commands,omitempty"`
	Timeout  time.Duration `json:"timeout"`
}

// DefaultVerifyTimeout bounds a verify step that gives no timeout.
const DefaultVerifyTimeout = 10 * time.Minute

var verifyKeys = []string{"commands", "timeout"}

// decodeVerify reads a verify: section (top level, or a profile's).
func decodeVerify(d *decoder, n *yaml.Node, path string) Verify {
	v := Verify{Timeout: DefaultVerifyTimeout}
	f := d.fields(n, path, verifyKeys, strict)
	if f == nil {
		return v
	}
	v.Commands = d.strList(f["commands"], path+".commands", expandPlain)
	for i, c := range v.Commands {
		if c == "" {
			d.errf(deref(f["commands"]), path+".commands", "entry %d is empty; give a shell command such as `go test ./...`, or remove it", i)
		}
	}
	if t, ok := f["timeout"]; ok {
		v.Timeout = nonZero(d, t, path+".timeout", v.Timeout)
	}
	return v
}

// VerifyFor is the verify step of a profile's runs: the profile's own
// (agents.profiles.NAME.verify) when it has one, else the top-level verify:.
func (c *Config) VerifyFor(profile string) Verify {
	if profile == "" {
		profile = c.Agents.Default
	}
	if v, ok := c.Agents.Verify[profile]; ok {
		return v
	}
	return c.Verify
}

// mapValue is the value of key in mapping n (nil when n is no mapping or
// has no such key).
func mapValue(n *yaml.Node, key string) *yaml.Node {
	n = deref(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := deref(n.Content[i]); k != nil && k.Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}
