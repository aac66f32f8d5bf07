package docs

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// page is one Markdown file as the checks read it: its headings' anchors,
// its links, and the shell text it quotes (inline code and the lines of
// shell code blocks), each with its line number.
type page struct {
	path    string // relative to the repository, slash-separated
	anchors map[string]bool
	links   []quote
	code    []quote // inline code spans and shell code block lines
}

type quote struct {
	line int
	text string
}

var (
	headingRe = regexp.MustCompile(`^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$`)
	// [text](target) or [text](target "title"); images too.
	linkRe    = regexp.MustCompile(`\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	refDefRe  = regexp.MustCompile(`^ {0,3}\[[^\]]+\]:\s+<?(\S+?)>?(?:\s+"[^"]*")?\s*$`)
	codeSpan  = regexp.MustCompile("(`+)(.+?)`+")
	fenceRe   = regexp.MustCompile("^ {0,3}(`{3,}|~{3,})\\s*([A-Za-z0-9_-]*)")
	mdLinkTxt = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
)

// shellLangs are the code blocks whose lines are commands.
var shellLangs = map[string]bool{"sh": true, "bash": true, "shell": true, "console": true}

func readPage(abs, rel string) (*page, error) {
	b, err := os.ReadFile(abs)
	if err != nil {
		return nil, err
	}
	return parsePage(rel, string(b)), nil
}

func parsePage(rel, text string) *page {
	p := &page{path: rel, anchors: map[string]bool{}}
	seen := map[string]int{}
	fence, lang := "", ""
	for i, l := range strings.Split(text, "\n") {
		n := i + 1
		if m := fenceRe.FindStringSubmatch(l); m != nil {
			switch {
			case fence == "":
				fence, lang = m[1], m[2]
				continue
			case m[1][0] == fence[0] && len(m[1]) >= len(fence) && m[2] == "":
				fence = ""
				continue
			}
		}
		if fence != "" {
			if shellLangs[lang] {
				p.code = append(p.code, quote{n, l})
			}
			continue
		}
		if m := headingRe.FindStringSubmatch(l); m != nil {
			s := slug(m[2])
			if k := seen[s]; k > 0 {
				p.anchors[s+"-"+strconv.Itoa(k)] = true
			} else {
				p.anchors[s] = true
			}
			seen[s]++
		}
		for _, m := range codeSpan.FindAllStringSubmatch(l, -1) {
			p.code = append(p.code, quote{n, m[2]})
		}
		bare := codeSpan.ReplaceAllString(l, "")
		for _, m := range linkRe.FindAllStringSubmatch(bare, -1) {
			p.links = append(p.links, quote{n, m[1]})
		}
		if m := refDefRe.FindStringSubmatch(bare); m != nil {
			p.links = append(p.links, quote{n, m[1]})
		}
	}
	return p
}

// slug is GitHub's anchor for a heading: the text of its links and code,
// lower case, punctuation dropped, spaces turned into hyphens.
func slug(h string) string {
	h = mdLinkTxt.ReplaceAllString(h, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case unicode.IsLetter(r), unicode.IsDigit(r), unicode.IsMark(r), r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}
