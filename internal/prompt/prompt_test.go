package prompt

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/board"
)

func sampleCard() board.Card {
	return board.Card{ID: "c1", Identifier: "DRV-4", Title: "Title", Body: "Body text", State: "ready", Priority: 2,
		Labels: []string{"a", "b"}, Spec: json.RawMessage(`{"plan":"ship it"}`)}
}

// problems compiles src and returns its problems on one line ("" when none).
func problems(src string) (*Template, string) {
	tmpl, probs := Compile(src, 3)
	msgs := make([]string, len(probs))
	for i, p := range probs {
		msgs[i] = p.Msg
	}
	return tmpl, strings.Join(msgs, "; ")
}

func TestTemplateStrictAtLoad(t *testing.T) {
	cases := []struct{ name, body, want string }{
		{"unknown root", "Hello {{ user.name }}", `unknown variable "user"`},
		{"unknown card field", "{{ card.titel }}", `unknown variable "card.titel" in {{ card.titel }} (did you mean "title"?)`},
		{"unknown issue field", "{{ issue.body }}", `unknown variable "issue.body"`},
		{"in a condition", "{% if card.priorty > 2 %}x{% endif %}", `unknown variable "card.priorty"`},
		{"in a loop", "{% for l in card.lables %}{{ l }}{% endfor %}", `"card.lables"`},
		{"in an else branch", "{% if attempt > 1 %}a{% else %}{{ nope }}{% endif %}", `unknown variable "nope"`},
		{"filter argument", "{{ card.title | append: suffix }}", `unknown variable "suffix"`},
		{"unknown filter", "{{ card.title | shout }}", `unknown filter "shout"`},
		{"unknown filter chained", "{{ card.labels | join: ', ' | frobnicate }}", `unknown filter "frobnicate"`},
		{"syntax", "{% if card.title %}unclosed", "template does not compile"},
		{"unknown tag", "{% render 'x' %}", "template does not compile"},
		{"include", "{% include 'other.md' %}", "include"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tmpl, err := problems(tc.body + "\n")
			if err == "" || tmpl != nil {
				t.Fatalf("accepted %q", tc.body)
			}
			if !strings.Contains(err, tc.want) {
				t.Errorf("error %q\nlacks %q", err, tc.want)
			}
		})
	}
}

func TestTemplateAcceptsValid(t *testing.T) {
	body := `{% assign plan = card.spec.plan | default: "none" %}{% capture head %}{{ card.identifier }}{% endcapture %}
{{ head }} {{ plan }} {{ card.title | upcase }} {{ card.labels.size }} {{ run.id }} {{ workspace }}
{% for l in card.labels %}{{ forloop.index }}={{ l }}{% endfor %}
{% case card.state %}{% when "ready" %}r{% else %}o{% endcase %}
{% comment %}{{ anything.goes }}{% endcomment %}{% raw %}{{ not.checked }}{% endraw %}
{{ "a.b | c" }} {{ card.spec.deep.nested | default: 'x' }} {{ issue.description }}`
	tmpl, probs := problems(body + "\n")
	if probs != "" {
		t.Fatal(probs)
	}
	if _, err := tmpl.Render(Vars{Card: sampleCard(), Attempt: 1, RunID: "run-1", Workspace: "/w"}); err != nil {
		t.Fatal(err)
	}
}

func TestTemplateBounds(t *testing.T) {
	for _, body := range []string{
		"{% for i in (1..1000000000) %}{% endfor %}",
		"{% for i in (1..1000) %}{% for j in (1..1000) %}{% endfor %}{% endfor %}",
		"{{ (1..99999999999) | join: ',' }}",
	} {
		if tmpl, err := problems(body); err == "" || tmpl != nil {
			t.Errorf("%s: accepted", body)
		}
	}
	tmpl, probs := problems("{% for i in (1..10000) %}{{ card.body }}{{ card.body }}{{ card.body }}{{ card.body }}{{ card.body }}{% endfor %}")
	if probs != "" {
		t.Fatal(probs)
	}
	card := sampleCard()
	card.Body = strings.Repeat("x", 100)
	_, err := tmpl.Render(Vars{Card: card, Attempt: 1, RunID: "r", Workspace: "/w"})
	if err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("oversized prompt: %v", err)
	}
}

// TestDefaultPromptCarriesTheAnswer: after a human answers a parked
// question, the default prompt quotes the question, the answer and the
// comments since the last attempt; without them it says nothing of them.
func TestDefaultPromptCarriesTheAnswer(t *testing.T) {
	tmpl, probs := Compile(DefaultPrompt, 0)
	if len(probs) > 0 {
		t.Fatalf("default prompt: %v", probs)
	}
	at := time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC)
	out, err := tmpl.Render(Vars{Card: sampleCard(), Attempt: 2, Workspace: "/w", Conversation: Conversation{
		Question: "Which environment should I deploy to?", Answer: "staging, never production",
		Comments: []Comment{{Author: "operator", At: at, Text: "the staging host is stg-2"}}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Question: Which environment should I deploy to?", "Answer: staging, never production",
		"- operator (2026-12-01T09:30:00Z): the staging host is stg-2"} {
		if !strings.Contains(out, want) {
			t.Errorf("prompt lacks %q:\n%s", want, out)
		}
	}
	plain, err := tmpl.Render(Vars{Card: sampleCard(), Attempt: 1, Workspace: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain, "Answer:") || strings.Contains(plain, "Comments from") {
		t.Errorf("a card nobody answered gets an answer block:\n%s", plain)
	}
}

// TestConversationVariables: question, answer and comments are known to the
// static checker and render in a template of the operator's own.
func TestConversationVariables(t *testing.T) {
	tmpl, err := problems("{{ question }}|{{ answer }}|{% for c in comments %}{{ c.author }}@{{ c.at }}:{{ c.text }};{% endfor %}{{ comments.size }}\n")
	if err != "" {
		t.Fatalf("refused: %s", err)
	}
	at := time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC)
	out, rerr := tmpl.Render(Vars{Card: sampleCard(), Conversation: Conversation{Question: "q?", Answer: "a.",
		Comments: []Comment{{Author: "ops", At: at, Text: "x"}, {Author: "api", At: at, Text: "y"}}}})
	if rerr != nil {
		t.Fatal(rerr)
	}
	if want := "q?|a.|ops@2026-12-01T09:30:00Z:x;api@2026-12-01T09:30:00Z:y;2\n"; out != want {
		t.Errorf("rendered %q, want %q", out, want)
	}
	if _, err := problems("{{ answr }}\n"); !strings.Contains(err, `did you mean "answer"`) {
		t.Errorf("a misspelt answer: %q", err)
	}
}

func TestResumeMessage(t *testing.T) {
	at := time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC)
	got := ResumeMessage("DRV-6", Conversation{Question: "Which?", Answer: "This one.", Comments: []Comment{{Author: "operator", At: at, Text: "hurry"}}})
	want := "You asked: Which?\n\nThe answer:\nThis one.\n\nComments since your last attempt:\n- operator (2026-12-01T09:30:00Z): hurry\n\nContinue the work on DRV-6 from where you stopped.\n"
	if got != want {
		t.Errorf("ResumeMessage =\n%q\nwant\n%q", got, want)
	}
}

// A card mirrored from a tracker issue renders Symphony's issue.* names as
// the tracker's: a Symphony prompt says "Linear ticket ENG-12" and links
// the issue, not drover's DRV-4 and its API address. A card of drover's
// own board keeps its own values there.
func TestIssueVariablesNameTheTrackerIssue(t *testing.T) {
	tmpl, err := problems("{{ issue.id }}|{{ issue.identifier }}|{{ issue.url }}|{{ card.identifier }}|{{ card.url }}\n")
	if err != "" {
		t.Fatalf("refused: %s", err)
	}
	tracked := sampleCard()
	tracked.External = &board.External{Tracker: "linear", ID: "9f1c-uuid", Key: "ENG-12", URL: "https://linear.app/acme/issue/ENG-12"}
	for _, c := range []struct {
		name string
		card board.Card
		want string
	}{
		{"linear issue", tracked, "9f1c-uuid|ENG-12|https://linear.app/acme/issue/ENG-12|DRV-4|http://api/cards/DRV-4\n"},
		{"drover card", sampleCard(), "c1|DRV-4|http://api/cards/DRV-4|DRV-4|http://api/cards/DRV-4\n"},
	} {
		out, rerr := tmpl.Render(Vars{Card: c.card, URL: "http://api/cards/DRV-4"})
		if rerr != nil {
			t.Fatal(rerr)
		}
		if out != c.want {
			t.Errorf("%s: rendered %q, want %q", c.name, out, c.want)
		}
	}
}
