package config

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// MaxFileSize bounds a WORKFLOW.md; anything larger is refused.
const MaxFileSize = 4 << 20

// Load reads, parses and validates the WORKFLOW.md at path. Relative paths in
// it (workspace.root, a sqlite store) are resolved against its directory.
func Load(path string) (*Config, error) { return valid(LoadBestEffort(path)) }

// Parse parses and validates a WORKFLOW.md held in memory. baseDir resolves
// relative paths; it should be absolute (the config file's directory).
func Parse(data []byte, baseDir string) (*Config, error) { return valid(parseAll(data, baseDir)) }

func valid(cfg *Config, err error) (*Config, error) {
	if err != nil {
		return nil, err
	}
	return cfg, nil
}

// LoadBestEffort is Load for a reader that must show the board even while
// the file is refused (drover status while serve keeps its last good
// config): when the front matter is YAML but some keys are invalid, it
// returns the config as far as it could be read together with the error
// (a value that could not be read keeps its default). A file that is not
// YAML at all gives no config.
func LoadBestEffort(path string) (*Config, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	data, info, err := ReadFile(abs)
	if err != nil {
		return nil, err
	}
	return ParseFile(path, abs, data, info)
}

// ParseFile is LoadBestEffort of the bytes ReadFile read from the file at
// abs, which its errors call name.
func ParseFile(name, abs string, data []byte, info os.FileInfo) (*Config, error) {
	cfg, err := parseAll(data, filepath.Dir(abs))
	if e, ok := err.(*Error); ok {
		e.File = name
	}
	if cfg != nil {
		cfg.Path, cfg.ModTime, cfg.Size = abs, info.ModTime(), info.Size()
	}
	return cfg, err
}

// Hash is Config.Hash of a file's bytes.
func Hash(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// ReadFile reads a WORKFLOW.md for Load, refusing one over MaxFileSize.
func ReadFile(path string) ([]byte, os.FileInfo, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, nil, fmt.Errorf("%s: no such file; run `drover init` to write one, or pass --config", path)
	} else if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err == nil && info.IsDir() {
		return nil, nil, fmt.Errorf("%s: is a directory; pass the WORKFLOW.md file inside it", path)
	}
	var data []byte
	if err == nil {
		data, err = io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	}
	if err == nil && len(data) > MaxFileSize {
		err = fmt.Errorf("larger than %d bytes; a WORKFLOW.md is settings and a prompt", MaxFileSize)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %v", path, err)
	}
	return data, info, nil
}

// parseAll is Parse that also returns what it could decode when keys are
// invalid (nil when the file is not YAML front matter at all).
func parseAll(data []byte, baseDir string) (*Config, error) {
	fail := func(line int, format string, a ...any) (*Config, error) {
		return nil, &Error{Problems: []Problem{{Line: line, Msg: fmt.Sprintf(format, a...)}}}
	}
	front, body, bodyLine, err := splitFrontMatter(data)
	if err != nil {
		return fail(1, "%v", err)
	}
	for i, n := 0, 0; i < len(front); i += n {
		var r rune
		if r, n = utf8.DecodeRune(front[i:]); r == utf8.RuneError && n == 1 {
			return fail(2+bytes.Count(front[:i], []byte("\n")), "invalid UTF-8 (byte 0x%02x); save the file as UTF-8", front[i])
		}
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(front, &doc); err != nil {
		line, msg := yamlProblem(err)
		return fail(line, "invalid YAML: %s", msg)
	}
	d := &decoder{off: 1, lines: map[string]int{}, renamed: map[string]string{}, unread: map[string]bool{}, budget: maxValues}
	f := defaults()
	if len(doc.Content) > 0 {
		if root := doc.Content[0]; root.Kind != yaml.MappingNode && root.ShortTag() != "!!null" {
			return fail(root.Line+1, "the front matter must be YAML keys (board:, agents:, policy: …), not %s", describe(root))
		}
		d.decode(doc.Content[0], reflect.ValueOf(f).Elem(), "", `cfg:"lenient"`)
	}
	if abs, err := filepath.Abs(cmp.Or(baseDir, ".")); err == nil {
		baseDir = abs
	}
	d.build(f, baseDir)
	cfg := &f.Config
	cfg.Hash, cfg.Prompt, cfg.PromptLine = Hash(data), body, bodyLine
	compilePrompt(d, cfg)
	cfg.Ignored, cfg.Warnings = d.ignored, d.warns
	if len(d.probs) == 0 {
		return cfg, nil
	}
	sort.SliceStable(d.probs, func(i, j int) bool {
		li, lj := d.probs[i].Line, d.probs[j].Line
		return li != 0 && (lj == 0 || li < lj)
	})
	if n := len(d.probs) - maxProblems; n > 0 {
		d.probs = append(d.probs[:maxProblems], Problem{Msg: fmt.Sprintf("and %d more problems", n)})
	}
	return cfg, &Error{Problems: d.probs}
}

// maxProblems is how many problems an Error lists at most.
const maxProblems = 50

// splitFrontMatter separates the YAML between the opening and closing ---
// lines from the prompt body; bodyLine is the file line the body starts on.
func splitFrontMatter(data []byte) (front []byte, body string, bodyLine int, err error) {
	text := strings.ReplaceAll(string(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))), "\r\n", "\n")
	if !strings.HasPrefix(text, "---\n") && strings.TrimRight(text, " \t") != "---" && !strings.HasPrefix(text, "--- \n") {
		return nil, "", 0, fmt.Errorf("no YAML front matter: the file must start with a line `---`, then the settings, then `---` and the prompt template (`drover init` writes an example)")
	}
	lines := strings.SplitAfter(text, "\n")
	for i := 1; i < len(lines); i++ {
		if strings.TrimRight(lines[i], " \t\n") == "---" {
			body = strings.Join(lines[i+1:], "")
			trimmed := strings.TrimLeft(body, "\n")
			return []byte(strings.Join(lines[1:i], "")), trimmed, i + 2 + len(body) - len(trimmed), nil
		}
	}
	return nil, "", 0, fmt.Errorf("front matter is not closed: add a line `---` after the settings (before the prompt)")
}

var yamlLine = regexp.MustCompile(`line (\d+)`)

// yamlProblem is a yaml.v3 syntax error's line and message, with the file's
// line numbers (the YAML starts on line 2).
func yamlProblem(err error) (int, string) {
	line := 0
	msg := yamlLine.ReplaceAllStringFunc(strings.TrimPrefix(err.Error(), "yaml: "), func(m string) string {
		n, _ := strconv.Atoi(m[len("line "):])
		line = cmp.Or(line, n+1)
		return fmt.Sprintf("line %d", n+1)
	})
	return line, strings.TrimPrefix(msg, fmt.Sprintf("line %d: ", line))
}

// resolvePath makes p absolute against baseDir, expanding a leading ~.
func resolvePath(p, baseDir string) string {
	if home, err := os.UserHomeDir(); err == nil && (p == "~" || strings.HasPrefix(p, "~/")) {
		p = filepath.Join(home, p[1:])
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(baseDir, p)
	}
	return filepath.Clean(p)
}
