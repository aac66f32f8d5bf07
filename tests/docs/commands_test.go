package docs

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"

	"github.com/spf13/cobra"

	"github.com/drover-dev/drover/internal/cli"
)

// invocation is one `drover …` command a doc quotes, as words.
type invocation struct {
	line  int
	text  string
	words []string // after "drover"
}

var (
	pieceSep  = regexp.MustCompile(`\s(?:&&|\|\||\||;)\s`)
	envAssign = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*=\S*$`)
	flagRe    = regexp.MustCompile(`^(--?)([A-Za-z][A-Za-z0-9-]*)(=.*)?$`)
	// A placeholder or value, never a command word: ID, DRV-7, [ID], <x>, a…
	notWord = regexp.MustCompile(`[^a-z-]|^-`)
)

// invocations finds the drover commands in quoted shell text: a piece of a
// line (split at &&, ||, |, ;) whose first word, after VAR=value
// assignments, is drover, ./drover, "$DROVER_BIN" or go run ./cmd/drover.
func invocations(q quote) []invocation {
	text := strings.ReplaceAll(q.text, `\|`, "|")
	text = strings.TrimPrefix(strings.TrimSpace(text), "$ ")
	if i := strings.Index(text, " #"); i >= 0 {
		text = text[:i]
	}
	var out []invocation
	for _, piece := range pieceSep.Split(text, -1) {
		w := tokens(strings.TrimLeft(strings.TrimSpace(piece), "("))
		for len(w) > 0 && envAssign.MatchString(w[0]) {
			w = w[1:]
		}
		switch {
		case len(w) >= 3 && w[0] == "go" && w[1] == "run" && w[2] == "./cmd/drover":
			w = w[3:]
		case len(w) > 0 && (w[0] == "drover" || w[0] == "./drover" || w[0] == "$DROVER_BIN"):
			w = w[1:]
		default:
			continue
		}
		if len(w) == 0 {
			continue // `drover` alone names the program
		}
		out = append(out, invocation{q.line, strings.TrimSpace(piece), w})
	}
	return out
}

// tokens splits shell words, honouring quotes; text with an unclosed quote
// (an excerpt ending in …) is split at spaces.
func tokens(s string) []string {
	var out []string
	var cur strings.Builder
	in, quote := false, rune(0)
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '"' || r == '\'':
			quote, in = r, true
		case r == ' ' || r == '\t':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if quote != 0 {
		return strings.Fields(s)
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}

// commandChecker checks invocations against drover's command tree and
// runs each command path's --help once.
type commandChecker struct {
	root *cobra.Command
	help map[string]string // command path → "" when --help ran, else why not
}

func newCommandChecker() *commandChecker {
	return &commandChecker{root: cli.Tree(), help: map[string]string{}}
}

// check returns what is wrong with inv, or "".
func (c *commandChecker) check(inv invocation) string {
	cmd, path, msg := c.resolve(inv.words)
	if msg != "" {
		return msg
	}
	if msg := c.runHelp(path); msg != "" {
		return msg
	}
	return checkFlags(cmd, inv.words)
}

// resolve follows the command words (up to the first flag, placeholder or
// argument) down the tree. A word of a|b|c alternatives names each.
func (c *commandChecker) resolve(words []string) (*cobra.Command, []string, string) {
	cur, path := c.root, []string{}
	for _, w := range words {
		if !cur.HasSubCommands() || notWord.MatchString(strings.ReplaceAll(w, "|", "")) {
			break
		}
		alts := strings.Split(w, "|")
		if takesArgs(cur, alts) {
			break // arguments of a command that has subcommands too (drover bench store|policy)
		}
		var next *cobra.Command
		for _, a := range alts {
			sub := findSub(cur, a)
			if sub == nil {
				return nil, nil, fmt.Sprintf("%q has no subcommand %q (it has: %s); fix the command in the doc, or add the command", cur.CommandPath(), a, subNames(cur))
			}
			if next == nil {
				next = sub
			}
		}
		if len(alts) > 1 {
			for _, a := range alts[1:] {
				if msg := c.runHelp(append(append([]string{}, path...), a)); msg != "" {
					return nil, nil, msg
				}
			}
		}
		cur, path = next, append(path, alts[0])
	}
	return cur, path, ""
}

// takesArgs: c runs by itself, its Args name the words it takes (they
// refuse a made-up one) and accept each word that is not one of its
// subcommands.
func takesArgs(c *cobra.Command, words []string) bool {
	if !c.Runnable() || c.Args == nil || c.Args(c, []string{"no-such-word-at-all"}) == nil {
		return false
	}
	for _, w := range words {
		if findSub(c, w) == nil && c.Args(c, []string{w}) != nil {
			return false
		}
	}
	for _, w := range words {
		if findSub(c, w) == nil {
			return true
		}
	}
	return false
}

func findSub(c *cobra.Command, name string) *cobra.Command {
	for _, s := range c.Commands() {
		if s.Name() == name || s.HasAlias(name) {
			return s
		}
	}
	return nil
}

func subNames(c *cobra.Command) string {
	var n []string
	for _, s := range c.Commands() {
		if s.Name() != "help" && s.Name() != "completion" {
			n = append(n, s.Name())
		}
	}
	return strings.Join(n, ", ")
}

// runHelp runs `drover PATH --help` in-process once per path.
func (c *commandChecker) runHelp(path []string) string {
	key := strings.Join(path, " ")
	if msg, ok := c.help[key]; ok {
		return msg
	}
	var out, errb bytes.Buffer
	msg := ""
	if code := cli.Main(append(append([]string{}, path...), "--help"), &out, &errb); code != 0 {
		msg = fmt.Sprintf("`drover %s --help` exited %d: %s", key, code, strings.TrimSpace(errb.String()))
	}
	c.help[key] = msg
	return msg
}

// checkFlags finds the flags of words (stopping at a bare --) that cmd
// does not take; [--x], a|--y alternatives and --x=v are read as flags.
func checkFlags(cmd *cobra.Command, words []string) string {
	cmd.InitDefaultHelpFlag()
	cmd.InheritedFlags() // merges the persistent flags into Flags()
	for _, w := range words {
		if w == "--" {
			break
		}
		for _, part := range strings.Split(strings.Trim(w, "[]()…"), "|") {
			m := flagRe.FindStringSubmatch(strings.Trim(part, "[]"))
			if m == nil || part == "--version" && cmd == cmd.Root() {
				continue
			}
			fs := cmd.Flags()
			if m[1] == "--" && fs.Lookup(m[2]) == nil || m[1] == "-" && (len(m[2]) != 1 || fs.ShorthandLookup(m[2]) == nil) {
				return fmt.Sprintf("%q takes no flag %s%s (see %s --help); fix the flag in the doc", cmd.CommandPath(), m[1], m[2], cmd.CommandPath())
			}
		}
	}
	return ""
}

// checkCommands checks every drover command the pages quote.
func checkCommands(pages map[string]*page) []problem {
	c := newCommandChecker()
	var probs []problem
	for _, name := range sortedKeys(pages) {
		for _, q := range pages[name].code {
			for _, inv := range invocations(q) {
				if msg := c.check(inv); msg != "" {
					probs = append(probs, problem{name, inv.line, fmt.Sprintf("`%s`: %s", inv.text, msg)})
				}
			}
		}
	}
	return probs
}
