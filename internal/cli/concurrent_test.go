package cli

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/drover-dev/drover/internal/testkit"
)

// Two real drover processes (shell-loop style: each stream runs 25 `drover
// card add` one after another) add cards to one store at the same time:
// nothing is lost and no identifier is handed out twice.
func TestConcurrentProcessesSQLite(t *testing.T) { concurrentAdds(t, newEnv(t, "")) }

func TestConcurrentProcessesPostgres(t *testing.T) {
	concurrentAdds(t, newEnv(t, testkit.DSN(t, testkit.Postgres)))
}

// TestConcurrentFirstOpenSQLite: the processes race on a store nobody has
// created yet (migrations run concurrently too).
func TestConcurrentFirstOpenSQLite(t *testing.T) {
	e := newEnv(t, "")
	e.dsn = "sqlite:" + e.dir + "/.drover/fresh.db"
	concurrentAdds(t, e)
}

func concurrentAdds(t *testing.T, e *env) {
	const streams, perStream = 2, 25
	bin := testkit.Binary(t)
	var wg sync.WaitGroup
	errs := make(chan string, streams*perStream)
	for s := 0; s < streams; s++ {
		wg.Add(1)
		go func(s int) {
			defer wg.Done()
			for i := 0; i < perStream; i++ {
				title := fmt.Sprintf("stream %d card %d", s, i)
				cmd := exec.Command(bin, "--config", e.cfg, "--store", e.dsn, "--json", "card", "add", "--title", title)
				out, err := cmd.CombinedOutput()
				if err != nil {
					errs <- fmt.Sprintf("%s: %v: %s", title, err, out)
				}
			}
		}(s)
	}
	wg.Wait()
	close(errs)
	for msg := range errs {
		t.Error(msg)
	}

	var cards []cardJSON
	e.okJSON(&cards, "card", "ls")
	if len(cards) != streams*perStream {
		t.Fatalf("%d cards, want %d", len(cards), streams*perStream)
	}
	seenIdent := map[string]int{}
	seenTitle := map[string]int{}
	for _, c := range cards {
		seenIdent[c.Identifier]++
		seenTitle[c.Title]++
	}
	for i := 1; i <= streams*perStream; i++ {
		id := fmt.Sprintf("DRV-%d", i)
		if seenIdent[id] != 1 {
			t.Errorf("%s appears %d times", id, seenIdent[id])
		}
	}
	for s := 0; s < streams; s++ {
		for i := 0; i < perStream; i++ {
			title := fmt.Sprintf("stream %d card %d", s, i)
			if seenTitle[title] != 1 {
				t.Errorf("%q appears %d times", title, seenTitle[title])
			}
		}
	}
	if t.Failed() {
		var ids []string
		for id := range seenIdent {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		t.Logf("identifiers: %s", strings.Join(ids, " "))
	}
	// One created event per card, too.
	var evs []json.RawMessage
	e.okJSON(&evs, "events")
	if len(evs) != streams*perStream {
		t.Errorf("%d events, want %d created events", len(evs), streams*perStream)
	}
}
