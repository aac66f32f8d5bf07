package policy

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"text/tabwriter"
)

// corpusEntry is one verbatim error excerpt a user posted in a public issue
// thread of an agent CLI (testdata/corpus.jsonl; README.md there says how it
// was gathered).
type corpusEntry struct {
	ID     string `json:"id"`
	Source string `json:"source"` // owner/repo#number
	Stream string `json:"stream"` // stdout, stderr, json:error, json:result
	Kind   Kind   `json:"kind"`
	Why    string `json:"why"`
	Text   string `json:"text"`
}

func loadCorpus(t *testing.T) []corpusEntry {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "corpus.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []corpusEntry
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		var e corpusEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("corpus.jsonl:%d: %v", n, err)
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

var sourceRe = regexp.MustCompile(`^[\w.-]+/[\w.-]+#\d+$`)

// agentOf names the agent kind an excerpt's tracker belongs to.
func agentOf(source string) string {
	switch repo := strings.ToLower(source[:strings.IndexByte(source, '#')]); {
	case strings.HasPrefix(repo, "anthropics/"):
		return "claude"
	case repo == "openai/codex":
		return "codex"
	case repo == "google-gemini/gemini-cli":
		return "gemini"
	case strings.HasSuffix(repo, "/opencode"):
		return "opencode"
	}
	return "command"
}

// corpusSignals builds the Signals an adapter would from the excerpt on its
// stream: a JSON error field takes the structured path, free text the text
// path of a failed run.
func corpusSignals(e corpusEntry) Signals {
	s := Signals{AgentKind: agentOf(e.Source), ExitCode: 1}
	switch e.Stream {
	case "stdout":
		s.Stdout = e.Text
	case "stderr":
		s.Stderr = e.Text
	case "json:error":
		s.Structured = Structured{Present: true, IsError: true, Finished: true, ErrorMessages: []string{e.Text}}
	case "json:result":
		s.Structured = Structured{Present: true, IsError: true, Finished: true, ResultText: e.Text, ErrorMessages: []string{e.Text}}
	}
	return s
}

// TestPublicCorpus scores Classify on the public error corpus and prints a
// confusion table per kind. It fails below 93% right (94% until the hn
// batch, 95% until the hk and hl batches: held-out batches go in whole,
// their misses included, and their gatherers take some labels from what
// the thread established, which the text alone does not show; see
// testdata/README.md), or when an excerpt
// whose kind pauses the profile (auth, quota, usage window, config) comes
// out unknown: such a run would be retried to the cap instead of pausing.
func TestPublicCorpus(t *testing.T) {
	entries := loadCorpus(t)
	if len(entries) < 200 {
		t.Errorf("corpus has %d excerpts; want at least 200", len(entries))
	}
	ids := map[string]bool{}
	confusion := map[Kind]map[Kind]int{}
	right := 0
	heldOut, heldOutRight := map[string]int{}, map[string]int{} // by set: the id's letters (ho, hb, hc)
	for _, e := range entries {
		if ids[e.ID] {
			t.Errorf("%s: duplicate id", e.ID)
		}
		ids[e.ID] = true
		if !sourceRe.MatchString(e.Source) || e.Why == "" || strings.TrimSpace(e.Text) == "" || !e.Kind.Valid() {
			t.Errorf("%s: needs a source owner/repo#N, a why, a text and a valid kind: %+v", e.ID, e)
			continue
		}
		switch e.Stream {
		case "stdout", "stderr", "json:error", "json:result":
		default:
			t.Errorf("%s: stream %q is not stdout, stderr, json:error or json:result", e.ID, e.Stream)
		}
		c := Classify(corpusSignals(e), nil)
		if confusion[e.Kind] == nil {
			confusion[e.Kind] = map[Kind]int{}
		}
		confusion[e.Kind][c.Kind]++
		set := heldOutSet(e.ID)
		if set != "" {
			heldOut[set]++
		}
		if c.Kind == e.Kind {
			right++
			if set != "" {
				heldOutRight[set]++
			}
			continue
		}
		t.Logf("miss %s (%s): want %s, got %s (%s): %q", e.ID, e.Source, e.Kind, c.Kind, c.Source, excerptOf(e.Text))
		if c.Kind == KindUnknown && Spec(e.Kind).Profile >= ProfileUntilReset {
			t.Errorf("%s (%s): %s pauses the profile but came out unknown: %q", e.ID, e.Source, e.Kind, excerptOf(e.Text))
		}
	}
	t.Log("\n" + confusionTable(confusion))
	score := float64(right) / float64(len(entries))
	t.Logf("public corpus: %d/%d right (%.1f%%)", right, len(entries), 100*score)
	// The held-out sets were each gathered after the rules, and scored
	// before any rule changed for them (testdata/README.md has the score
	// each got then): ho (issue 10), hb, hc, hd, he, hf, hg, hh, hi, hj, hk, hl, hm and hn (issue 21).
	for _, set := range []string{"ho", "hb", "hc", "hd", "he", "hf", "hg", "hh", "hi", "hj", "hk", "hl", "hm", "hn"} {
		t.Logf("held-out excerpts (%s*): %d/%d right now", set, heldOutRight[set], heldOut[set])
	}
	for _, set := range []string{"hb", "hc", "hd", "he", "hf", "hg", "hh", "hi", "hj", "hk", "hl", "hm", "hn"} {
		if heldOut[set] < 90 {
			t.Errorf("the corpus has %d %s held-out excerpts; want at least 90", heldOut[set], set)
		}
	}
	if heldOut["ho"] < 40 {
		t.Errorf("the corpus has %d ho held-out excerpts; want at least 40", heldOut["ho"])
	}
	if score < 0.93 {
		t.Errorf("classifier gets %.1f%% of the public corpus right; want at least 93%%", 100*score)
	}
}

// heldOutSet is the held-out set an id belongs to ("ho", "hb", …), or ""
// for an entry the rules were written from (pc).
func heldOutSet(id string) string {
	if len(id) > 2 && id[0] == 'h' {
		return id[:2]
	}
	return ""
}

// confusionTable prints one row per expected kind: how many excerpts, how
// many came out right, and what the others came out as.
func confusionTable(m map[Kind]map[Kind]int) string {
	var kinds []string
	for k := range m {
		kinds = append(kinds, string(k))
	}
	sort.Strings(kinds)
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "EXPECTED\tN\tRIGHT\tCLASSIFIED AS")
	for _, k := range kinds {
		got := m[Kind(k)]
		n, wrong := 0, []string{}
		for g, c := range got {
			n += c
			if g != Kind(k) {
				wrong = append(wrong, fmt.Sprintf("%s×%d", g, c))
			}
		}
		sort.Strings(wrong)
		fmt.Fprintf(w, "%s\t%d\t%d\t%s\n", k, n, got[Kind(k)], strings.Join(wrong, " "))
	}
	w.Flush()
	return b.String()
}

func excerptOf(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 160 {
		return s[:160] + "…"
	}
	return s
}

// TestPhraseEvidence: every corpus id a phrase row cites is in the corpus
// and decided by that row; every fixture it cites exists.
func TestPhraseEvidence(t *testing.T) {
	byID := map[string]corpusEntry{}
	for _, e := range loadCorpus(t) {
		byID[e.ID] = e
	}
	for _, p := range Phrases {
		for _, ev := range p.Evidence {
			if agent, name, ok := strings.Cut(ev, ":"); ok {
				if _, err := os.Stat(filepath.Join("..", "agent", agent, "testdata", name)); err != nil {
					t.Errorf("%s cites fixture %s: %v", p.Name, ev, err)
				}
				continue
			}
			e, ok := byID[ev]
			if !ok {
				t.Errorf("%s cites %s, which is not in the corpus", p.Name, ev)
				continue
			}
			c := Classify(corpusSignals(e), nil)
			if !strings.Contains(c.Source, "phrase:"+p.Name) {
				t.Errorf("%s cites %s, decided by %s (%s)", p.Name, ev, c.Source, c.Kind)
			}
		}
	}
}
