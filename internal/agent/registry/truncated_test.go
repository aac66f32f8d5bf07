package registry

import (
	"strings"
	"testing"

	"github.com/drover-dev/drover/internal/policy"
)

// TestTruncatedStreamIsNotASuccess: a CLI whose JSON stream began but was
// cut before its own end-of-run event, and which still exited 0, did not
// succeed: drover cannot tell finished work from a broken stream, so the
// run is unknown (counted, retried) with what the agent had said. The same
// stream with its final event is a success.
func TestTruncatedStreamIsNotASuccess(t *testing.T) {
	cases := []struct {
		kind      string
		cut, rest []string // the stream up to the cut, and its end
		keep      int      // lines of cut the whole stream has (gemini's last is half a line)
	}{
		{"claude", []string{`{"type":"system","subtype":"init","session_id":"s1"}`, `{"type":"assistant","message":{"content":[{"type":"text","text":"I will edit"}]}}`},
			[]string{`{"type":"result","subtype":"success","is_error":false,"result":"done","session_id":"s1"}`}, 2},
		{"codex", []string{`{"type":"thread.started","thread_id":"t1"}`, `{"type":"turn.started"}`, `{"type":"item.completed","item":{"type":"agent_message","text":"I will edit"}}`},
			[]string{`{"type":"turn.completed","usage":{"input_tokens":1,"output_tokens":1}}`}, 3},
		{"gemini", []string{`{"type":"init","session_id":"s1","model":"g"}`, `{"type":"message","role":"assistant","content":"I will edit","delta":true}`, `{"type":"message","role":"assis`},
			[]string{`{"type":"result","status":"success","stats":{"input_tokens":1,"output_tokens":1}}`}, 2},
		{"opencode", []string{`{"type":"step_start","sessionID":"ses_1","part":{}}`, `{"type":"text","sessionID":"ses_1","part":{"text":"I will edit"}}`},
			[]string{`{"type":"step_finish","sessionID":"ses_1","part":{"reason":"stop","tokens":{"input":1,"output":1}}}`}, 2},
	}
	for _, c := range cases {
		t.Run(c.kind, func(t *testing.T) {
			classify := func(lines []string) policy.Classification {
				reg, _ := Lookup(c.kind)
				p := reg.NewParser()
				for _, l := range lines {
					p.Feed([]byte(l))
				}
				return policy.Classify(policy.Signals{AgentKind: c.kind, ExitCode: 0, Structured: p.Structured()}, nil)
			}
			if got := classify(c.cut); got.Kind != policy.KindUnknown || !strings.Contains(got.Message, "ended before its final event") {
				t.Errorf("cut stream, exit 0: %s (%s) %q; want unknown saying the stream ended early", got.Kind, got.Source, got.Message)
			}
			if got := classify(append(append([]string{}, c.cut[:c.keep]...), c.rest...)); got.Kind != policy.KindSucceeded {
				t.Errorf("whole stream, exit 0: %s (%s) %q; want succeeded", got.Kind, got.Source, got.Message)
			}
		})
	}
}
