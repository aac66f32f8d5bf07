package server

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"strconv"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/store"
)

// RunList is a list of runs, newest first.
type RunList struct {
	Runs []board.Run `json:"runs"`
}

// listRuns serves GET /api/v1/runs?card=&open=true|false&limit=.
func (s *Server) listRuns(w http.ResponseWriter, r *http.Request) {
	limit, _, ok := pageParams(w, r, 100)
	if !ok {
		return
	}
	q := r.URL.Query()
	f := store.RunFilter{Newest: true, Limit: limit}
	if ref := q.Get("card"); ref != "" {
		c, err := s.ops().Get(r.Context(), ref)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		f.CardID = c.ID
	}
	if v := q.Get("open"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			writeFieldError(w, http.StatusBadRequest, "invalid_parameter", "open", "open: "+strconvQuote(v)+" is not true or false")
			return
		}
		f.Open = &b
	}
	runs, err := s.opts.Store.ListRuns(r.Context(), f)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if runs == nil {
		runs = []board.Run{}
	}
	writeJSON(w, http.StatusOK, RunList{Runs: runs})
}

func (s *Server) getRun(w http.ResponseWriter, r *http.Request) {
	run, err := s.opts.Store.GetRun(r.Context(), r.PathValue("id"))
	if errors.Is(err, store.ErrNotFound) {
		writeError(w, http.StatusNotFound, "run_not_found", "no run "+strconvQuote(r.PathValue("id"))+"; drover runs CARD lists a card's runs")
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, run)
}

// getRunLog serves a run's output. Ranges: a standard Range header
// (bytes=a-b, bytes=a-, bytes=-n) answered 206, or ?offset=&limit= (limit
// default 64 KiB, at most 1 MiB; a negative offset counts from the end).
// X-Log-Size carries the file's size and X-Next-Offset where to read next,
// so a client can tail a live log.
func (s *Server) getRunLog(w http.ResponseWriter, r *http.Request) {
	run, err := s.opts.Store.GetRun(r.Context(), r.PathValue("id"))
	if errors.Is(err, store.ErrNotFound) {
		writeError(w, http.StatusNotFound, "run_not_found", "no run "+strconvQuote(r.PathValue("id")))
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if run.LogPath == "" {
		writeError(w, http.StatusNotFound, "log_not_found", "run "+run.ID+" has no log yet (it has not started)")
		return
	}
	f, err := os.Open(run.LogPath)
	if errors.Is(err, fs.ErrNotExist) {
		writeError(w, http.StatusNotFound, "log_not_found", "run "+run.ID+"'s log "+run.LogPath+" is gone (workspace cleaned up?)")
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		s.fail(w, r, err)
		return
	}
	size := fi.Size()
	w.Header().Set("X-Log-Size", strconv.FormatInt(size, 10))
	w.Header().Set("Cache-Control", "no-store")
	q := r.URL.Query()
	if r.Header.Get("Range") != "" || (q.Get("offset") == "" && q.Get("limit") == "") {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		http.ServeContent(w, r, "", fi.ModTime(), f)
		return
	}
	offset, limit := int64(0), int64(64<<10)
	for name, dst := range map[string]*int64{"offset": &offset, "limit": &limit} {
		if v := q.Get(name); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || (name == "limit" && (n <= 0 || n > 1<<20)) {
				writeFieldError(w, http.StatusBadRequest, "invalid_parameter", name, fmt.Sprintf("%s: %q is not valid (offset: bytes, negative from the end; limit: 1-1048576)", name, v))
				return
			}
			*dst = n
		}
	}
	if offset < 0 {
		offset = max(size+offset, 0)
	}
	if offset > size {
		offset = size
	}
	n := min(limit, size-offset)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Next-Offset", strconv.FormatInt(offset+n, 10))
	w.Header().Set("Content-Length", strconv.FormatInt(n, 10))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		io.Copy(w, io.NewSectionReader(f, offset, n))
	}
}
