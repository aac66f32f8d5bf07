package appserver

import (
	"testing"

	"github.com/drover-dev/drover/internal/policy"
)

// TestLogParserReplaysAParkedRun: the log of a run that parked reads as
// the live run did: the question, the thread, input_required.
func TestLogParserReplaysAParkedRun(t *testing.T) {
	p := NewLogParser()
	for _, l := range []string{
		`{"id":2,"result":{"thread":{"id":"thr-9"}}}`,
		`{"method":"turn/started","params":{"threadId":"thr-9","turn":{"id":"t1","status":"inProgress"}}}`,
		`{"method":"thread/tokenUsage/updated","params":{"threadId":"thr-9","turnId":"t1","tokenUsage":{"total":{"inputTokens":900,"outputTokens":12}}}}`,
		`{"method":"item/tool/requestUserInput","id":0,"params":{"threadId":"thr-9","turnId":"t1","questions":[{"id":"q","header":"Env","question":"Staging or production?","options":null}]}}`,
		`{"method":"turn/completed","params":{"threadId":"thr-9","turn":{"id":"t1","status":"interrupted","error":null}}}`,
		`[drover: exit code 0 after 1s]`,
	} {
		p.Feed([]byte(l))
	}
	st := p.Structured()
	c := policy.Classify(policy.Signals{ExitCode: 0, Structured: st}, nil)
	if c.Kind != policy.KindInputRequired || st.Question != "Env: Staging or production?" || st.TokensIn != 900 || st.Turns != 1 || st.SessionID != "thr-9" {
		t.Errorf("verdict %+v, structured %+v", c, st)
	}
}
