package proc

import (
	"context"
	"io"
	"strings"
	"testing"
)

// TestStdinPipeConverses: with StdinPipe the caller answers what the
// program printed, line by line, and the program sees each answer; closing
// the pipe is the program's end of input.
func TestStdinPipeConverses(t *testing.T) {
	s := shSpec(t, `echo ask1; read a; echo "got:$a"; read b || echo eof; echo "last:$b"`)
	var w io.WriteCloser
	s.StdinPipe = func(pw io.WriteCloser) { w = pw }
	var lines []string
	s.OnStdoutLine = func(b []byte) {
		l := string(b)
		lines = append(lines, l)
		switch {
		case l == "ask1":
			io.WriteString(w, "answer one\n")
		case strings.HasPrefix(l, "got:"):
			w.Close()
		}
	}
	ex, err := Run(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if ex.Code != 0 {
		t.Fatalf("exit %d, stderr %q", ex.Code, ex.StderrTail)
	}
	want := "ask1|got:answer one|eof|last:"
	if got := strings.Join(lines, "|"); got != want {
		t.Errorf("stdout lines %q, want %q", got, want)
	}
}
