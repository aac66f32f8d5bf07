package policy

import (
	"regexp"
	"strings"
)

// Phrase is one row of the built-in phrase table: a family of stems for one
// kind of failure, the way agent CLIs word it. Cite is one real message the
// row was written for, verbatim; Evidence names the public corpus entries
// (testdata/corpus.jsonl ids) and captured fixtures the row decides. Every
// row has a test that feeds Cite to Classify and one that checks each
// evidence entry is matched by the row.
type Phrase struct {
	Name     string
	Re       *regexp.Regexp
	Kind     Kind
	Cite     string
	Evidence []string
}

func phrase(name, re string, kind Kind, cite string, evidence ...string) Phrase {
	return Phrase{Name: name, Re: regexp.MustCompile(re), Kind: kind, Cite: cite, Evidence: evidence}
}

// matchPhrase returns the first row of Phrases that matches text.
func matchPhrase(text string) (Phrase, bool) {
	return matchPhraseIn(text, nil)
}

// matchPhraseIn returns the first row that matches text and whose kind is
// one of allowed (any kind when allowed is empty). A row matches the text as
// it is or with its runs of white space (line breaks included) made one
// space: terminals and JSON-in-a-log wrap a message anywhere ("Resource\nhas
// been exhausted"), and the stems are words, not layout.
func matchPhraseIn(text string, allowed []Kind) (Phrase, bool) {
	if text == "" {
		return Phrase{}, false
	}
	flat := flatten(text)
	for _, p := range Phrases {
		if len(allowed) > 0 && !hasKind(allowed, p.Kind) {
			continue
		}
		if p.Re.MatchString(text) || p.Re.MatchString(flat) {
			return p, true
		}
	}
	return Phrase{}, false
}

// flatten makes every run of white space, and the two-character escapes
// \n, \t and \r of JSON embedded in a log line, one space.
func flatten(text string) string {
	return strings.Join(strings.Fields(jsonEscapes.Replace(text)), " ")
}

var jsonEscapes = strings.NewReplacer(`\n`, " ", `\t`, " ", `\r`, " ")
