package board

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// checkInputErr: a refusal is an *InputError naming a field, with a message.
func checkInputErr(t *testing.T, err error, field string) {
	t.Helper()
	var ie *InputError
	if !errors.As(err, &ie) {
		t.Fatalf("error %T is not an *InputError: %v", err, err)
	}
	if !strings.HasPrefix(ie.Field, field) || ie.Msg == "" {
		t.Fatalf("error names field %q (want %q): %v", ie.Field, field, err)
	}
}

// FuzzValidateCard: title, body, labels, agent name and spec validation never
// panics; every refusal is an *InputError naming its field; every accepted
// value is valid UTF-8 without stray control characters and survives a JSON
// round trip unchanged (what the API and the store do to it); an accepted
// spec is a JSON object, nests at most MaxSpecNest deep, and NormalizeSpec is
// idempotent on it.
func FuzzValidateCard(f *testing.F) {
	f.Add("Fix the login page", "Steps:\n\t1. open /login\r\n", "needs-review", "claude", []byte(`{"plan": "ship it", "n": [1, 2]}`))
	f.Add("../../etc/passwd", "$(touch CANARY) `id` ${HOME}", "a,b", "../x", []byte(`{"a":`+strings.Repeat("[", 40)+strings.Repeat("]", 40)+`}`))
	f.Add("{{ card.spec.x }}", "{% include 'x' %}{% for i in (1..1000000000) %}{% endfor %}", "{{x}}", "Claude", []byte(`[1,2]`))
	f.Add("\xff\xfe", "nul\x00", "", "", []byte("{\"a\":\"\xff\"}"))
	f.Add("مرحبا \u202eevil\u202c", "ok", "x y", "a_b-c", []byte(`{"n":1e999999,"m":-0,"s":"\u0000\ud800"}`))
	f.Add(" ", strings.Repeat("x", MaxBody+1), strings.Repeat("l", MaxLabelLen+1), strings.Repeat("a", 41), []byte(`]]]]{"a":1}`))
	f.Fuzz(func(t *testing.T, title, body, label, agent string, spec []byte) {
		if err := ValidateTitle(title); err != nil {
			checkInputErr(t, err, "title")
		} else {
			if !utf8.ValidString(title) || strings.TrimSpace(title) == "" || utf8.RuneCountInString(title) > MaxTitle {
				t.Fatalf("accepted title %q", title)
			}
			roundTrip(t, title)
		}
		if err := ValidateBody(body); err != nil {
			checkInputErr(t, err, "body")
		} else {
			if !utf8.ValidString(body) || len(body) > MaxBody || strings.ContainsRune(body, 0) {
				t.Fatalf("accepted body %q", body)
			}
			roundTrip(t, body)
		}
		labels := []string{label}
		if err := ValidateLabels(labels); err != nil {
			checkInputErr(t, err, "labels")
		} else {
			if strings.ContainsAny(label, " ,\n\x00") || label == "" {
				t.Fatalf("accepted label %q", label)
			}
			roundTrip(t, label)
		}
		if err := ValidateAgentName(agent); err != nil {
			checkInputErr(t, err, "agent")
		} else if strings.ContainsAny(agent, "/. $`") {
			t.Fatalf("accepted agent %q", agent)
		}
		n, err := NormalizeSpec(spec)
		if err != nil {
			checkInputErr(t, err, "spec")
			return
		}
		var m map[string]any
		if err := json.Unmarshal(n, &m); err != nil || m == nil {
			t.Fatalf("accepted spec %q normalizes to %q, not an object: %v", spec, n, err)
		}
		if d := nesting(n); d > MaxSpecNest {
			t.Fatalf("accepted spec nests %d deep", d)
		}
		n2, err := NormalizeSpec(n)
		if err != nil || !bytes.Equal(n, n2) {
			t.Fatalf("NormalizeSpec not idempotent: %q -> %q (%v)", n, n2, err)
		}
		// Through the API's JSON and back, the normalized spec is unchanged.
		var c Card
		raw, err := json.Marshal(Card{Spec: n})
		if err != nil {
			t.Fatalf("marshal accepted spec %q: %v", n, err)
		}
		if err := json.Unmarshal(raw, &c); err != nil {
			t.Fatal(err)
		}
		var m2 map[string]any
		if err := json.Unmarshal(c.Spec, &m2); err != nil || !reflect.DeepEqual(m, m2) {
			t.Fatalf("spec round trip: %q -> %q (%v)", n, c.Spec, err)
		}
	})
}

func roundTrip(t *testing.T, s string) {
	t.Helper()
	raw, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var back string
	if err := json.Unmarshal(raw, &back); err != nil || back != s {
		t.Fatalf("JSON round trip of %q gives %q (%v)", s, back, err)
	}
}
