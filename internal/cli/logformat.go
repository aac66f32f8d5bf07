package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"syscall"
)

// Log formats of drover serve (--log-format, else $DROVER_LOG_FORMAT):
// "text" and "json" are slog's, with a timestamp on every record;
// "journal" is for systemd's journal: one text line per record without a
// timestamp (journald stamps each line) and with an sd-daemon priority
// prefix (<3> error, <4> warn, <6> info, <7> debug) that journald turns into
// the entry's priority; "auto", the default, is journal when stderr is
// connected to the journal and text otherwise.
const (
	logAuto    = "auto"
	logText    = "text"
	logJSON    = "json"
	logJournal = "journal"
)

// logFormatEnv sets the log format when --log-format is not given.
const logFormatEnv = "DROVER_LOG_FORMAT"

// resolveLogFormat picks the format from the flag (when set), then the
// environment, then auto, and resolves auto for w.
func resolveLogFormat(flag string, flagSet bool, w io.Writer) (string, error) {
	format, from := flag, "--log-format"
	if !flagSet {
		if v := os.Getenv(logFormatEnv); v != "" {
			format, from = v, logFormatEnv
		}
	}
	switch format {
	case logText, logJSON, logJournal:
		return format, nil
	case logAuto, "":
		if underJournal(w, os.Getenv("JOURNAL_STREAM")) {
			return logJournal, nil
		}
		return logText, nil
	}
	return "", usagef("%s: %q is not auto, text, json or journal", from, format)
}

// underJournal reports whether w is the stream systemd connected to the
// journal: JOURNAL_STREAM holds that stream's "device:inode", which a child
// inherits even when its stderr was redirected elsewhere, so the file itself
// is compared (systemd.exec(5)).
func underJournal(w io.Writer, journalStream string) bool {
	f, ok := w.(*os.File)
	if !ok || journalStream == "" {
		return false
	}
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && journalStream == fmt.Sprintf("%d:%d", uint64(st.Dev), uint64(st.Ino))
}

// journalHandler writes each record as one line of slog's text form,
// without the time, behind its sd-daemon priority prefix.
type journalHandler struct {
	inner slog.Handler // a TextHandler writing into buf
	out   *journalOut
}

// journalOut is what the handlers derived by WithAttrs/WithGroup share: one
// buffer and the destination, behind one lock.
type journalOut struct {
	mu  sync.Mutex
	buf bytes.Buffer
	w   io.Writer
}

func newJournalHandler(w io.Writer, opts *slog.HandlerOptions) slog.Handler {
	out := &journalOut{w: w}
	o := *opts
	next := o.ReplaceAttr
	o.ReplaceAttr = func(groups []string, a slog.Attr) slog.Attr {
		if len(groups) == 0 && a.Key == slog.TimeKey {
			return slog.Attr{} // journald stamps every line itself
		}
		if next != nil {
			return next(groups, a)
		}
		return a
	}
	return &journalHandler{inner: slog.NewTextHandler(&out.buf, &o), out: out}
}

func (h *journalHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.inner.Enabled(ctx, l)
}

func (h *journalHandler) Handle(ctx context.Context, r slog.Record) error {
	h.out.mu.Lock()
	defer h.out.mu.Unlock()
	h.out.buf.Reset()
	if err := h.inner.Handle(ctx, r); err != nil {
		return err
	}
	// A value with a newline is quoted by the text handler, so the record is
	// one line; the prefix makes it one journal entry at its priority.
	line := strings.TrimRight(h.out.buf.String(), "\n")
	_, err := io.WriteString(h.out.w, priority(r.Level)+line+"\n")
	return err
}

func (h *journalHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &journalHandler{inner: h.inner.WithAttrs(as), out: h.out}
}

func (h *journalHandler) WithGroup(name string) slog.Handler {
	return &journalHandler{inner: h.inner.WithGroup(name), out: h.out}
}

// priority is the sd-daemon(3) prefix for a slog level.
func priority(l slog.Level) string {
	switch {
	case l >= slog.LevelError:
		return "<3>"
	case l >= slog.LevelWarn:
		return "<4>"
	case l >= slog.LevelInfo:
		return "<6>"
	}
	return "<7>"
}
