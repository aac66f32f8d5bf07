package docs

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// problem is one finding: where it is and what to do about it.
type problem struct {
	file string
	line int
	msg  string
}

func (p problem) String() string { return fmt.Sprintf("%s:%d: %s", p.file, p.line, p.msg) }

// docFiles are the Markdown files the checks read, relative to root:
// README.md, CONTRIBUTING.md, CHANGELOG.md, everything under docs/, and
// every other README.md (the testdata notes). The WORKFLOW.md files under
// testdata and templates are inputs, not docs.
func docFiles(root string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") && rel != "." {
				return filepath.SkipDir
			}
			return nil
		}
		top := rel == "README.md" || rel == "CONTRIBUTING.md" || rel == "CHANGELOG.md"
		if top || strings.HasPrefix(rel, "docs/") && strings.HasSuffix(rel, ".md") || d.Name() == "README.md" {
			out = append(out, rel)
		}
		return nil
	})
	sort.Strings(out)
	return out, err
}

// loadPages parses every file of docFiles.
func loadPages(root string, files []string) (map[string]*page, error) {
	pages := map[string]*page{}
	for _, f := range files {
		p, err := readPage(filepath.Join(root, filepath.FromSlash(f)), f)
		if err != nil {
			return nil, err
		}
		pages[f] = p
	}
	return pages, nil
}

// checkLinks finds every relative link of pages that names no file, and
// every #anchor that names no heading of its Markdown target.
func checkLinks(root string, pages map[string]*page) []problem {
	var probs []problem
	for _, name := range sortedKeys(pages) {
		p := pages[name]
		for _, l := range p.links {
			if msg := checkLink(root, p, l.text, pages); msg != "" {
				probs = append(probs, problem{p.path, l.line, msg})
			}
		}
	}
	return probs
}

func checkLink(root string, p *page, target string, pages map[string]*page) string {
	if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
		return ""
	}
	file, anchor, _ := strings.Cut(target, "#")
	dest := p.path
	if file != "" {
		if strings.HasPrefix(file, "/") {
			return fmt.Sprintf("link %q is absolute; write it relative to %s (e.g. %q)", target, path.Dir(p.path), rel(p.path, strings.TrimPrefix(file, "/")))
		}
		dest = path.Clean(path.Join(path.Dir(p.path), file))
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(dest))); err != nil {
			return fmt.Sprintf("link %q: %s does not exist; fix the path (it is relative to %s) or add the file", target, dest, dirName(p.path))
		}
	}
	if anchor == "" || !strings.HasSuffix(dest, ".md") {
		return ""
	}
	tp := pages[dest]
	if tp == nil {
		var err error
		if tp, err = readPage(filepath.Join(root, filepath.FromSlash(dest)), dest); err != nil {
			return fmt.Sprintf("link %q: %v", target, err)
		}
		pages[dest] = tp
	}
	if !tp.anchors[anchor] {
		return fmt.Sprintf("link %q: %s has no heading with the anchor #%s; fix the anchor (GitHub's: the heading in lower case, punctuation dropped, spaces as -)%s", target, dest, anchor, near(anchor, tp.anchors))
	}
	return ""
}

// rel is target (relative to the repository) as seen from the page from.
func rel(from, target string) string {
	r, err := filepath.Rel(filepath.Dir(filepath.FromSlash(from)), filepath.FromSlash(target))
	if err != nil {
		return target
	}
	return filepath.ToSlash(r)
}

// near names the anchors that share a word with a, as a hint.
func near(a string, anchors map[string]bool) string {
	var out []string
	for _, k := range sortedKeys(anchors) {
		for _, w := range strings.Split(a, "-") {
			if len(w) > 3 && strings.Contains(k, w) {
				out = append(out, "#"+k)
				break
			}
		}
	}
	if len(out) == 0 {
		return ""
	}
	if len(out) > 5 {
		out = out[:5]
	}
	return "; did you mean " + strings.Join(out, ", ") + "?"
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// dirName is the directory links of the page at p are relative to, in words.
func dirName(p string) string {
	if d := path.Dir(p); d != "." {
		return d + "/"
	}
	return "the repository's root"
}

// unreachable lists the pages under docs/ that no chain of links from the
// index reaches.
func unreachable(pages map[string]*page, index string) []problem {
	seen := map[string]bool{index: true}
	queue := []string{index}
	for len(queue) > 0 {
		p := pages[queue[0]]
		queue = queue[1:]
		if p == nil {
			continue
		}
		for _, l := range p.links {
			file, _, _ := strings.Cut(l.text, "#")
			if file == "" || strings.Contains(file, "://") || !strings.HasSuffix(file, ".md") {
				continue
			}
			dest := path.Clean(path.Join(path.Dir(p.path), file))
			if !seen[dest] {
				seen[dest] = true
				queue = append(queue, dest)
			}
		}
	}
	var probs []problem
	for _, name := range sortedKeys(pages) {
		if strings.HasPrefix(name, "docs/") && !seen[name] {
			probs = append(probs, problem{name, 1, fmt.Sprintf("no link from %s reaches this page; link it from the index (or from a page the index links)", index)})
		}
	}
	return probs
}
