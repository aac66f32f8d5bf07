package server

import (
	"net/http"
	"strconv"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/store"
)

// RunsPage is how many runs the runs page lists at a time.
const RunsPage = 50

type runData struct {
	Run  board.Run
	Card board.Card
}

func (s *Server) pageRun(w http.ResponseWriter, r *http.Request) {
	run, err := s.opts.Store.GetRun(r.Context(), r.PathValue("id"))
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	c, err := s.opts.Store.GetCard(r.Context(), run.CardID)
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	s.render(w, r, "run", page{Title: "run " + run.ID, Data: runData{Run: run, Card: c}})
}

// runRow is a run with the card it ran.
type runRow struct {
	board.Run
	Card board.Card
}

type runsData struct {
	Runs       []runRow
	Offset     int
	PrevOffset int
	NextOffset int
}

// pageRuns lists every run, newest first, RunsPage per page (?offset=).
func (s *Server) pageRuns(w http.ResponseWriter, r *http.Request) {
	off, _ := strconv.Atoi(r.URL.Query().Get("offset"))
	off = max(off, 0)
	runs, err := s.opts.Store.ListRuns(r.Context(), store.RunFilter{Newest: true, Limit: RunsPage + 1, Offset: off})
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	d := runsData{Offset: off, PrevOffset: -1, NextOffset: -1}
	if len(runs) > RunsPage {
		runs, d.NextOffset = runs[:RunsPage], off+RunsPage
	}
	if off > 0 {
		d.PrevOffset = max(off-RunsPage, 0)
	}
	cards, err := s.cardsOf(r, runs)
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	for _, run := range runs {
		d.Runs = append(d.Runs, runRow{Run: run, Card: cards[run.CardID]})
	}
	s.render(w, r, "runs", page{Title: "runs", Data: d})
}

// cardsOf reads the cards of runs in one query, by id.
func (s *Server) cardsOf(r *http.Request, runs []board.Run) (map[string]board.Card, error) {
	out := map[string]board.Card{}
	var ids []string
	for _, run := range runs {
		if _, seen := out[run.CardID]; !seen {
			out[run.CardID] = board.Card{Identifier: run.CardID}
			ids = append(ids, run.CardID)
		}
	}
	if len(ids) == 0 {
		return out, nil
	}
	cards, err := s.opts.Store.ListCards(r.Context(), store.CardFilter{IDs: ids})
	for _, c := range cards {
		out[c.ID] = c
	}
	return out, err
}
