package appserver

import (
	"encoding/json"

	"github.com/drover-dev/drover/internal/policy"
)

// LogParser reads what an app-server printed (a run log's stdout lines:
// the server's messages) as the live conversation did, for `drover
// classify` and for a run recovered from its log after its owner died.
// It replays every message through the session's own handling, answering
// nothing: its session has no connection.
type LogParser struct{ s *session }

// NewLogParser returns an empty LogParser.
func NewLogParser() *LogParser { return &LogParser{s: newSession(nil, nil, Options{})} }

// Feed reads one stdout line; it never panics.
func (p *LogParser) Feed(line []byte) {
	defer func() {
		if r := recover(); r != nil {
			p.s.st.bad.Add("parser panic", line)
		}
	}()
	m, ok, why := decode(line)
	if !ok {
		if why != "" {
			p.s.st.bad.Add(why, line)
		}
		return
	}
	p.s.st.s.Present = true
	if m.isResponse() {
		// The thread/start or thread/resume answer names the thread.
		var r struct {
			Thread struct {
				ID string `json:"id"`
			} `json:"thread"`
		}
		if json.Unmarshal(m.Result, &r) == nil && r.Thread.ID != "" {
			p.s.tid, p.s.st.s.SessionID = r.Thread.ID, r.Thread.ID
		}
		return
	}
	p.s.handle(m)
}

// Structured returns what was read so far.
func (p *LogParser) Structured() policy.Structured { return p.s.st.Structured() }

// Progress is the last thing the agent said or did and its tokens.
func (p *LogParser) Progress() (lastLine string, tokensIn, tokensOut int64, costUSD float64) {
	in, out := p.s.st.tokens()
	return p.s.st.lastLine, in, out, 0
}

// IsMessage reports whether a JSON object line is a JSON-RPC message of
// the app-server (it has a method or an id) rather than an exec --json
// event (which has a type).
func IsMessage(line []byte) bool {
	m, ok, _ := decode(line)
	return ok && (m.Method != "" || len(m.ID) > 0)
}
