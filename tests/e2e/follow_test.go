package e2e_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/drover-dev/drover/internal/store"
	"github.com/drover-dev/drover/internal/testkit"
)

// Three drover serve on one PostgreSQL database, cards added by parallel
// `drover card add` loops and dispatched by all three: a client paging
// /api/v1/events?since=N by next_since and one on the SSE stream (each on
// another serve) both see every event of the table exactly once, in order.
func TestEventFollowersSeeEveryEventOnceAcrossThreeServes(t *testing.T) {
	dsn := testkit.DSN(t, testkit.Postgres)
	var envs []*env
	for i := 1; i <= 3; i++ {
		e := newEnv(t, wf{Default: "sim", Node: fmt.Sprint("n", i), MaxConcurrent: 4, Port: freePort(t)}, "", testkit.SQLite)
		e.dsn = dsn
		envs = append(envs, e)
	}
	testkit.Open(t, dsn) // migrated before the serves race to it
	var addrs []string
	for _, e := range envs {
		e.start()
		addrs = append(addrs, serveAddr(t, e))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Second)
	defer cancel()

	var paged, streamed []int64
	var followers sync.WaitGroup
	stop := make(chan struct{})
	followers.Add(2)
	go func() { defer followers.Done(); paged = pageEvents(ctx, t, addrs[0], stop) }()
	go func() { defer followers.Done(); streamed = streamEvents(ctx, t, addrs[1], stop) }()

	var writers sync.WaitGroup
	for w := range 3 {
		writers.Add(1)
		go func() {
			defer writers.Done()
			for i := range 12 {
				if ctx.Err() != nil {
					return
				}
				e := envs[(w+i)%3]
				if _, errOut, code := e.drover(nil, "card", "add", "--title", fmt.Sprintf("w%d-%d", w, i), "--spec", `{"sim":["succeeded"]}`); code != 0 {
					t.Errorf("card add: exit %d: %s", code, errOut)
					return
				}
			}
		}()
	}
	writers.Wait()
	st := testkit.Open(t, dsn)
	eventually(t, 40*time.Second, "every card to be run", func() bool {
		counts, err := st.CountByState(ctx)
		return err == nil && counts["review"] == 36
	})
	all, err := st.ListEvents(ctx, store.EventFilter{})
	if err != nil {
		t.Fatal(err)
	}
	last := all[len(all)-1].Seq
	eventually(t, 15*time.Second, "both followers to reach the last event", func() bool {
		followMu.Lock()
		defer followMu.Unlock()
		return followCaughtUp[addrs[0]] >= last && followCaughtUp[addrs[1]] >= last
	})
	close(stop)
	followers.Wait()
	want := make([]int64, len(all))
	for i, e := range all {
		want[i] = e.Seq
	}
	for name, got := range map[string][]int64{"paging /api/v1/events": paged, "the SSE stream": streamed} {
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s saw %d events, the table holds %d; missing %v, doubled or out of order: %v",
				name, len(got), len(want), missingSeqs(want, got), seqsOutOfOrder(got))
		}
	}
}

var (
	followMu       sync.Mutex
	followCaughtUp = map[string]int64{} // follower address → last seq seen
)

func followSeen(addr string, seq int64) {
	followMu.Lock()
	followCaughtUp[addr] = seq
	followMu.Unlock()
}

func freePort(t *testing.T) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

var listening = regexp.MustCompile(`listening.*addr=(http://[0-9.:]+)`)

// serveAddr waits for serve's "listening" log line and returns its address.
func serveAddr(t *testing.T, e *env) string {
	t.Helper()
	var addr string
	eventually(t, 20*time.Second, "serve to listen", func() bool {
		b, _ := os.ReadFile(e.serve.log)
		if m := listening.FindSubmatch(b); m != nil {
			addr = string(m[1])
		}
		return addr != ""
	})
	return addr
}

// pageEvents pages GET /api/v1/events?since=N by next_since until stop.
func pageEvents(ctx context.Context, t *testing.T, addr string, stop <-chan struct{}) []int64 {
	var got []int64
	var since int64
	for {
		select {
		case <-stop:
			return got
		case <-ctx.Done():
			return got
		default:
		}
		req, _ := http.NewRequestWithContext(ctx, "GET", addr+"/api/v1/events?since="+strconv.FormatInt(since, 10)+"&limit=7", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			continue
		}
		var page struct {
			Events []struct {
				Seq int64 `json:"seq"`
			} `json:"events"`
			NextSince int64 `json:"next_since"`
		}
		err = json.NewDecoder(resp.Body).Decode(&page)
		resp.Body.Close()
		if err != nil {
			t.Errorf("events page: %v", err)
			return got
		}
		for _, e := range page.Events {
			got = append(got, e.Seq)
		}
		since = page.NextSince
		followSeen(addr, since)
		if len(page.Events) == 0 {
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// streamEvents reads /api/v1/events/stream?since=0 until stop.
func streamEvents(ctx context.Context, t *testing.T, addr string, stop <-chan struct{}) []int64 {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-stop:
		case <-sctx.Done():
		}
		cancel()
	}()
	req, _ := http.NewRequestWithContext(sctx, "GET", addr+"/api/v1/events/stream?since=0", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Errorf("event stream: %v", err)
		return nil
	}
	defer resp.Body.Close()
	var got []int64
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if id, ok := strings.CutPrefix(sc.Text(), "id: "); ok {
			n, _ := strconv.ParseInt(id, 10, 64)
			got = append(got, n)
			followSeen(addr, n)
		}
	}
	return got
}

func missingSeqs(want, got []int64) []int64 {
	have := map[int64]bool{}
	for _, s := range got {
		have[s] = true
	}
	var out []int64
	for _, s := range want {
		if !have[s] {
			out = append(out, s)
		}
	}
	return out
}

func seqsOutOfOrder(got []int64) []int64 {
	var out []int64
	for i := 1; i < len(got); i++ {
		if got[i] <= got[i-1] {
			out = append(out, got[i])
		}
	}
	return out
}
