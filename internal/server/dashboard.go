package server

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/drover-dev/drover/internal/board"
	"github.com/drover-dev/drover/internal/excerpt"
	"github.com/drover-dev/drover/internal/operator"
	"github.com/drover-dev/drover/internal/status"
	"github.com/drover-dev/drover/internal/store"
	"github.com/drover-dev/drover/internal/version"
)

//go:embed web
var webFS embed.FS

// ColumnCap is how many cards a board column renders; the rest are paged
// on /columns/{name}.
const ColumnCap = 100

var templates = template.Must(template.New("").Funcs(viewFuncs).Funcs(template.FuncMap{
	"dur":      func(s float64) string { return status.Dur(time.Duration(s * float64(time.Second))) },
	"since":    func(t time.Time) string { return status.Dur(time.Since(t)) },
	"iso":      func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"money":    func(f float64) string { return fmt.Sprintf("$%.2f", f) },
	"prio":     prioLabel,
	"clip":     excerpt.Line,
	"join":     strings.Join,
	"pct":      pct,
	"attempts": attemptsText,
	"json":     prettyJSON,
	"add":      func(a, b int) int { return a + b },
	"add64":    func(a, b int64) int64 { return a + b },
	"deref":    func(t *time.Time) time.Time { return *t },
	"exit": func(p *int) string {
		if p == nil {
			return "–"
		}
		return strconv.Itoa(*p)
	},
}).ParseFS(webFS, "web/templates/*.html"))

func (s *Server) static(w http.ResponseWriter, r *http.Request) {
	sub, _ := fs.Sub(webFS, "web")
	w.Header().Set("Cache-Control", "no-cache")
	http.FileServerFS(sub).ServeHTTP(w, r)
}

// page is what every dashboard template gets.
type page struct {
	Title    string
	CSRF     string
	Now      time.Time
	State    status.State
	Explain  bool
	Fragment bool
	Data     any
	// Build is the drover build serving the page (the footer).
	Build version.Info
}

// render executes the page template name, or only its "live" block when
// ?fragment=1 (the dashboard's JS swaps that block in on every change).
func (s *Server) render(w http.ResponseWriter, r *http.Request, name string, p page) {
	p.CSRF, p.Now, p.Explain, p.Build = s.csrf, s.opts.Now(), s.opts.Explain != nil, version.Get()
	p.Fragment = r.URL.Query().Get("fragment") == "1"
	var buf bytes.Buffer
	tmpl := name
	if p.Fragment {
		tmpl = name + "/live"
	}
	if err := templates.ExecuteTemplate(&buf, tmpl, p); err != nil {
		s.opts.Log.Error("dashboard template failed", "template", tmpl, "err", err)
		http.Error(w, "dashboard: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'self'; script-src 'self'; img-src 'self' data:; frame-ancestors 'none'")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Write(buf.Bytes())
}

func (s *Server) pageError(w http.ResponseWriter, r *http.Request, err error) {
	code := http.StatusInternalServerError
	if c := operator.ErrorCode(err); c == operator.CodeCardNotFound || c == operator.CodeNotFound {
		code = http.StatusNotFound
	}
	s.opts.Log.Warn("dashboard page failed", "path", r.URL.Path, "err", err)
	http.Error(w, err.Error(), code)
}

// boardColumn is one rendered column.
type boardColumn struct {
	Name  string
	Role  board.Role
	Count int
	Cards []cardTile
	More  int
}

// cardTile is a card as the board shows it.
type cardTile struct {
	board.Card
	Running *status.Running
	Retry   *status.Retrying
}

type boardData struct {
	Columns   []boardColumn
	Attention attention
	Running   []status.Running
	Retrying  []status.Retrying
}

// attention is the "needs attention" lane.
type attention struct {
	Blocked []status.Blocked
	Parked  []status.Parked
	Agents  []status.Agent
	Errors  []status.Error
	Spend   bool
}

func (a attention) Empty() bool {
	return len(a.Blocked)+len(a.Parked)+len(a.Agents)+len(a.Errors) == 0 && !a.Spend
}

func (s *Server) pageBoard(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	st, err := status.Snapshot(ctx, s.opts.Store, s.cfg(), s.opts.Now())
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	run := map[string]*status.Running{}
	for i := range st.Running {
		run[st.Running[i].IssueID] = &st.Running[i]
	}
	retry := map[string]*status.Retrying{}
	for i := range st.Retrying {
		retry[st.Retrying[i].IssueID] = &st.Retrying[i]
	}
	d := boardData{Running: st.Running, Retrying: st.Retrying,
		Attention: attention{Blocked: st.Blocked, Parked: st.Parked, Errors: st.Errors, Spend: st.Spend.Paused}}
	for _, a := range st.Agents {
		if a.State != "closed" {
			d.Attention.Agents = append(d.Attention.Agents, a)
		}
	}
	for _, col := range st.Columns {
		cards, err := s.opts.Store.ListCards(ctx, store.CardFilter{States: []string{col.Name}, Limit: ColumnCap})
		if err != nil {
			s.pageError(w, r, err)
			return
		}
		bc := boardColumn{Name: col.Name, Role: col.Role, Count: col.Count, More: max(col.Count-len(cards), 0)}
		for _, c := range cards {
			bc.Cards = append(bc.Cards, cardTile{Card: c, Running: run[c.ID], Retry: retry[c.ID]})
		}
		d.Columns = append(d.Columns, bc)
	}
	s.render(w, r, "board", page{Title: "board", State: st, Data: d})
}

type columnData struct {
	Column     board.Column
	Count      int
	Cards      []board.Card
	Offset     int
	PrevOffset int
	NextOffset int
	Query      string
}

// pageColumn lists one column's cards, ColumnCap per page (?offset=, ?q=).
func (s *Server) pageColumn(w http.ResponseWriter, r *http.Request) {
	col, ok := s.board().Column(r.PathValue("name"))
	if !ok {
		http.Error(w, s.board().StateError("column", r.PathValue("name")).Error(), http.StatusNotFound)
		return
	}
	off, _ := strconv.Atoi(r.URL.Query().Get("offset"))
	off = max(off, 0)
	q := r.URL.Query().Get("q")
	cards, err := s.opts.Store.ListCards(r.Context(), store.CardFilter{States: []string{col.Name}, Query: q, Limit: ColumnCap + 1, Offset: off})
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	counts, err := s.opts.Store.CountByState(r.Context())
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	d := columnData{Column: col, Count: counts[col.Name], Cards: cards, Offset: off, PrevOffset: -1, NextOffset: -1, Query: q}
	if len(cards) > ColumnCap {
		d.Cards, d.NextOffset = cards[:ColumnCap], off+ColumnCap
	}
	if off > 0 {
		d.PrevOffset = max(off-ColumnCap, 0)
	}
	if q != "" && d.NextOffset < 0 { // filtered: the matches are the total
		d.Count = off + len(d.Cards)
	}
	s.render(w, r, "column", page{Title: col.Name, Data: d})
}

type cardData struct {
	CardDetail
	Role     board.Role
	Columns  []board.Column
	Issue    status.Issue
	Question string
	// Ask is the agent's ask report (its options become answer buttons).
	Ask      *board.AgentReport
	Explain  any
	ExplainE string
	Why      *explainView
}

// explainView is the part of an explanation the card page draws: each
// eligibility check, the budgets, and what happens next. Explain's value is
// read through JSON so any explainer with these fields renders.
type explainView struct {
	Checks []struct {
		Name  string `json:"name"`
		OK    bool   `json:"ok"`
		Hint  string `json:"hint"`
		Mark  string `json:"-"`
		Class string `json:"-"`
	} `json:"checks"`
	Budgets []struct {
		Name  string `json:"name"`
		Used  int    `json:"used"`
		Limit int    `json:"limit"`
		Left  int    `json:"left"`
	} `json:"budgets"`
	Next      string   `json:"next"`
	Agent     string   `json:"agent"`
	AgentBy   string   `json:"agent_by"`
	Fallback  []string `json:"fallback"`
	RunsOn    string   `json:"runs_on"`
	RunsOnWhy string   `json:"runs_on_why"`
}

func toExplainView(v any) *explainView {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var e explainView
	if json.Unmarshal(b, &e) != nil || len(e.Checks) == 0 {
		return nil
	}
	return &e
}

func (s *Server) pageCard(w http.ResponseWriter, r *http.Request) {
	d, err := s.cardDetail(r, r.PathValue("id"))
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	b := s.board()
	cd := cardData{CardDetail: d, Role: b.RoleOf(d.State), Columns: b.Columns}
	if cd.Issue, err = status.IssueDetail(r.Context(), s.opts.Store, s.cfg(), d.ID, s.opts.Now()); err != nil {
		s.pageError(w, r, err)
		return
	}
	if cd.Role == board.RoleParked {
		cd.Question, _ = status.Question(r.Context(), s.opts.Store, d.Card)
		if cd.Ask = askOf(d.Runs); cd.Ask != nil && cd.Ask.Question != "" {
			cd.Question = cd.Ask.Question
		}
	}
	if s.opts.Explain != nil {
		if v, err := s.opts.Explain(r.Context(), d.ID); err != nil {
			cd.ExplainE = err.Error()
		} else {
			cd.Explain, cd.Why = v, toExplainView(v)
			if cd.Why != nil {
				cd.Why.markChecks(cd.Role)
			}
		}
	}
	s.render(w, r, "card", page{Title: d.Identifier, Data: cd})
}

func prioLabel(p int) string {
	if p <= 0 {
		return ""
	}
	return "P" + strconv.Itoa(p)
}

func pct(a, b float64) int {
	if b <= 0 {
		return 0
	}
	return min(int(a/b*100+0.5), 100)
}

// attemptsText is attempt n against max_attempts; when earlier attempts
// did not count (interrupted, released) it says which counted one this is,
// so the dashboard never shows "attempt 3 of 2".
func attemptsText(n, counted, max int) string {
	switch {
	case max < 0:
		return fmt.Sprintf("attempt %d", n)
	case counted >= n-1:
		return fmt.Sprintf("attempt %d of %d", n, max)
	}
	return fmt.Sprintf("attempt %d (counted %d of %d)", n, counted+1, max)
}

func prettyJSON(v any) string {
	if raw, ok := v.(json.RawMessage); ok {
		var x any
		if json.Unmarshal(raw, &x) == nil {
			v = x
		}
	}
	if s, ok := v.(string); ok {
		return s
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
