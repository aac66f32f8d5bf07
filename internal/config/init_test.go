package config

import (
	"strings"
	"testing"
)

// uncommentProfile is tmpl with the commented profile name (its "# name:"
// line and the "#   " lines under it) uncommented, as an operator does.
func uncommentProfile(t *testing.T, tmpl, name string) string {
	t.Helper()
	var b strings.Builder
	in, found := false, false
	for l := range strings.Lines(tmpl) {
		switch {
		case l == "    # "+name+":\n":
			in, found = true, true
			l = "    " + name + ":\n"
		case in && strings.HasPrefix(l, "    #   "):
			l = "      " + strings.TrimPrefix(l, "    #   ")
		default:
			in = false
		}
		b.WriteString(l)
	}
	if !found {
		t.Fatalf("no commented profile %s in the template", name)
	}
	return b.String()
}

// drover init's real-agent profiles: where a sandbox starts, uncommenting
// one gives a sandboxed profile; where none starts, the key stays commented
// with the reason beside it and the uncommented profile has no sandbox.
func TestInitSandbox(t *testing.T) {
	both := func(tmpl string) *Config {
		return mustParse(t, uncommentProfile(t, uncommentProfile(t, tmpl, "claude"), "codex"))
	}
	const why = "bwrap (bwrap) is not installed (Debian: apt-get install -y bubblewrap): exec: not found"
	on, off := both(InitSandbox(InitTemplate, "")), both(InitSandbox(InitTemplate, why))
	for _, name := range []string{"claude", "codex"} {
		if p := on.Agents.Profiles[name]; p.Sandbox == nil || p.Sandbox.Kind != "bwrap" || p.Sandbox.Network != "on" {
			t.Errorf("%s uncommented where the sandbox is proven: sandbox %+v, want bwrap with network on", name, p.Sandbox)
		}
		if p := off.Agents.Profiles[name]; p.Kind != name || p.Sandbox != nil {
			t.Errorf("%s uncommented where no sandbox starts: %+v, want the profile without a sandbox", name, p)
		}
	}
	text := InitSandbox(InitTemplate, why)
	if n := strings.Count(text, "sandbox off: drover init found no working sandbox here: "+why+"\n"); n != 2 {
		t.Errorf("the refused template says why %d times, want once per real-agent profile:\n%s", n, text)
	}
	if got := InitSandbox("a\nb\n", "x\ny"); got != "a\nb\n" {
		t.Errorf("a template without a sandbox key changed: %q", got)
	}
}
