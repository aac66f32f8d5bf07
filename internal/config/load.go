package config

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
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
func Load(path string) (*Config, error) {
	cfg, err := LoadBestEffort(path)
	if err != nil {
		return nil, err
	}
	return cfg, nil
}

func readFile(path string) ([]byte, os.FileInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil, fmt.Errorf("%s: no such file; run `drover init` to write one, or pass --config", path)
		}
		return nil, nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if info.IsDir() {
		return nil, nil, fmt.Errorf("%s: is a directory; pass the WORKFLOW.md file inside it", path)
	}
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(&limitedReader{f, MaxFileSize + 1}); err != nil {
		return nil, nil, fmt.Errorf("%s: %v", path, err)
	}
	if buf.Len() > MaxFileSize {
		return nil, nil, fmt.Errorf("%s: larger than %d bytes; a WORKFLOW.md is settings and a prompt", path, MaxFileSize)
	}
	return buf.Bytes(), info, nil
}

type limitedReader struct {
	f *os.File
	n int64
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, fmt.Errorf("file too large")
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.f.Read(p)
	l.n -= int64(n)
	return n, err
}

// Parse parses and validates a WORKFLOW.md held in memory. baseDir resolves
// relative paths; it should be absolute (the config file's directory).
func Parse(data []byte, baseDir string) (*Config, error) {
	cfg, err := parseAll(data, baseDir)
	if err != nil {
		return nil, err
	}
	return cfg, nil
}

// LoadBestEffort is Load for a reader that must show the board even while
// the file is refused (drover status while serve keeps its last good
// config): when the front matter is YAML but some keys are invalid, it
// returns the config with those keys at their defaults together with the
// error. A file that is not YAML at all gives no config.
func LoadBestEffort(path string) (*Config, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	data, info, err := readFile(abs)
	if err != nil {
		return nil, err
	}
	cfg, err := parseAll(data, filepath.Dir(abs))
	if e, ok := err.(*Error); ok {
		e.File = path
	}
	if cfg != nil {
		cfg.Path, cfg.ModTime, cfg.Size = abs, info.ModTime(), info.Size()
	}
	return cfg, err
}

// parseAll is Parse that also returns what it could decode when keys are
// invalid (nil when the file is not YAML front matter at all).
func parseAll(data []byte, baseDir string) (*Config, error) {
	sum := sha256.Sum256(data)
	front, body, bodyLine, err := splitFrontMatter(data)
	if err != nil {
		return nil, &Error{Problems: []Problem{{Line: 1, Msg: err.Error()}}}
	}
	for i := 0; i < len(front); {
		r, n := utf8.DecodeRune(front[i:])
		if r == utf8.RuneError && n == 1 {
			return nil, &Error{Problems: []Problem{{Line: 2 + bytes.Count(front[:i], []byte("\n")), Msg: fmt.Sprintf("invalid UTF-8 (byte 0x%02x); save the file as UTF-8", front[i])}}}
		}
		i += n
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(front, &doc); err != nil {
		return nil, &Error{Problems: []Problem{yamlProblem(err, 1)}}
	}
	d := newDecoder(1)
	f := defaults()
	if len(doc.Content) > 0 {
		root := doc.Content[0]
		if root.Kind != yaml.MappingNode && root.ShortTag() != "!!null" {
			return nil, &Error{Problems: []Problem{{Line: root.Line + 1, Msg: "the front matter must be YAML keys (board:, agents:, policy: …), not " + describe(root)}}}
		}
		d.decode(root, reflect.ValueOf(f).Elem(), "", `cfg:"lenient"`)
	}
	if baseDir == "" {
		baseDir = "."
	}
	if abs, err := filepath.Abs(baseDir); err == nil {
		baseDir = abs
	}
	cfg := &Config{Hash: hex.EncodeToString(sum[:]), Prompt: body, PromptLine: bodyLine}
	d.build(f, cfg, baseDir)
	compilePrompt(d, cfg)
	cfg.Ignored, cfg.Warnings = d.ignored, d.warns
	if len(d.probs) == 0 {
		return cfg, nil
	}
	sort.SliceStable(d.probs, func(i, j int) bool {
		li, lj := d.probs[i].Line, d.probs[j].Line
		return li != 0 && (lj == 0 || li < lj)
	})
	return cfg, &Error{Problems: d.probs}
}

// splitFrontMatter separates the YAML between the opening and closing ---
// lines from the prompt body; bodyLine is the file line the body starts on.
func splitFrontMatter(data []byte) (front []byte, body string, bodyLine int, err error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	if !strings.HasPrefix(text, "---\n") && strings.TrimRight(text, " \t") != "---" && !strings.HasPrefix(text, "--- \n") {
		return nil, "", 0, fmt.Errorf("no YAML front matter: the file must start with a line `---`, then the settings, then `---` and the prompt template (`drover init` writes an example)")
	}
	lines := strings.SplitAfter(text, "\n")
	for i := 1; i < len(lines); i++ {
		if strings.TrimRight(lines[i], " \t\n") == "---" {
			front = []byte(strings.Join(lines[1:i], ""))
			body = strings.Join(lines[i+1:], "")
			bodyLine = i + 2
			trimmed := strings.TrimLeft(body, "\n")
			bodyLine += strings.Count(body[:len(body)-len(trimmed)], "\n")
			return front, trimmed, bodyLine, nil
		}
	}
	return nil, "", 0, fmt.Errorf("front matter is not closed: add a line `---` after the settings (before the prompt)")
}

var yamlLine = regexp.MustCompile(`line (\d+)`)

// yamlProblem turns a yaml.v3 syntax error into a Problem with file lines.
func yamlProblem(err error, offset int) Problem {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	msg = yamlLine.ReplaceAllStringFunc(msg, func(m string) string {
		n, _ := strconv.Atoi(m[len("line "):])
		if line == 0 {
			line = n + offset
		}
		return fmt.Sprintf("line %d", n+offset)
	})
	msg = strings.TrimPrefix(msg, fmt.Sprintf("line %d: ", line))
	return Problem{Line: line, Msg: "invalid YAML: " + msg}
}

// resolvePath makes p absolute against baseDir, expanding a leading ~.
func resolvePath(p, baseDir string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			p = filepath.Join(home, p[1:])
		}
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(baseDir, p)
	}
	return filepath.Clean(p)
}
