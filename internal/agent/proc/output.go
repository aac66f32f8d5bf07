package proc

import (
	"bytes"
	"fmt"
	"io"
	"sync"
	"unicode/utf8"
)

const (
	// TailBytes is how much of each stream's end Exit keeps for classification.
	TailBytes = 8 << 10
	// lineCap bounds one assembled line; longer lines reach the log in pieces
	// and reach OnStdoutLine cut to this length.
	lineCap = 4 << 20
	// StderrPrefix starts every stderr line in the log; stdout lines are
	// written as they are, so structured output stays machine-readable.
	StderrPrefix = "[stderr] "
	// NotePrefix starts every line drover itself writes into the log.
	NotePrefix = "[drover: "
)

// logSink writes agent output to the run log, whole lines at a time so the
// two streams never interleave mid-line, and stops at max bytes of agent
// output. drover's own notes bypass the cap (there are only a handful).
type logSink struct {
	mu        sync.Mutex
	w         io.Writer // nil: discard
	max       int64     // < 0: unlimited
	written   int64     // agent bytes written
	dropped   int64     // agent bytes not written because of the cap
	truncated bool
	atStart   bool // the last byte written was a newline (or nothing yet)
	err       error
}

func newLogSink(w io.Writer, max int64) *logSink {
	return &logSink{w: w, max: max, atStart: true}
}

// write logs prefix+data; prefix is only written when lineStart.
func (l *logSink) write(prefix string, data []byte, lineStart bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.w == nil || l.err != nil {
		return
	}
	var b []byte
	if lineStart {
		b = append(b, prefix...)
	}
	b = append(b, data...)
	if l.truncated {
		l.dropped += int64(len(b))
		return
	}
	if l.max >= 0 && l.written+int64(len(b)) > l.max {
		fit := l.max - l.written
		l.raw(b[:fit])
		l.written += fit
		l.dropped += int64(len(b)) - fit
		l.truncated = true
		l.noteLocked(fmt.Sprintf("log truncated after %d bytes; output is still drained and its tail kept for classification", l.max))
		return
	}
	l.raw(b)
	l.written += int64(len(b))
}

// note writes one "[drover: msg]" line, starting a new line if needed.
func (l *logSink) note(msg string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.noteLocked(msg)
}

func (l *logSink) noteLocked(msg string) {
	if l.w == nil || l.err != nil {
		return
	}
	if !l.atStart {
		l.raw([]byte{'\n'})
	}
	l.raw([]byte(NotePrefix + msg + "]\n"))
}

func (l *logSink) raw(b []byte) {
	if len(b) == 0 || l.err != nil {
		return
	}
	_, l.err = l.w.Write(b)
	l.atStart = b[len(b)-1] == '\n'
}

// tailBuf keeps the last TailBytes of a stream.
type tailBuf struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tailBuf) add(p []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*TailBytes {
		t.buf = append(t.buf[:0:0], t.buf[len(t.buf)-TailBytes:]...)
	}
}

// String returns the tail, starting at a rune boundary.
func (t *tailBuf) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.buf
	if len(b) > TailBytes {
		b = b[len(b)-TailBytes:]
		for i := 0; i < utf8.UTFMax && len(b) > 0 && !utf8.RuneStart(b[0]); i++ {
			b = b[1:]
		}
	}
	return string(b)
}

// stream reads one of the child's pipes to EOF: logs whole lines, keeps the
// tail, reports activity and (for stdout) hands each line to onLine.
type stream struct {
	prefix   string
	sink     *logSink
	tail     tailBuf
	activity func()       // called after every read
	onLine   func([]byte) // may be nil
}

func (s *stream) run(r io.Reader) {
	var line []byte
	lineStart := true // the next byte logged starts a log line
	overflow := false // the current line was already cut for onLine
	// A chunk starts small and grows while reads fill it: thousands of
	// agents printing a line now and then hold 4 KiB each, not 32; one that
	// streams has its 32 KiB after three full reads.
	chunk := make([]byte, 4<<10)
	emit := func(data []byte, complete bool) {
		s.sink.write(s.prefix, data, lineStart)
		lineStart = complete
		if s.onLine != nil && !overflow {
			s.onLine(bytes.TrimRight(bytes.Clone(data), "\r\n"))
		}
		overflow = !complete
	}
	for {
		n, err := r.Read(chunk)
		if n > 0 {
			data := chunk[:n]
			s.tail.add(data)
			for len(data) > 0 {
				i := bytes.IndexByte(data, '\n')
				if i < 0 {
					line = append(line, data...)
					if len(line) >= lineCap {
						emit(line, false)
						line = line[:0]
					}
					break
				}
				line = append(line, data[:i+1]...)
				data = data[i+1:]
				emit(line, true)
				line = line[:0]
			}
			if s.activity != nil {
				s.activity()
			}
			if n == len(chunk) && len(chunk) < 32<<10 {
				chunk = make([]byte, 2*len(chunk)) // what data held is copied: the line, the tail, the log
			}
		}
		if err != nil {
			break
		}
	}
	if len(line) > 0 {
		emit(append(line, '\n'), true)
	}
}
