package e2e_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"

	"github.com/drover-dev/drover/internal/testkit"
)

// `drover card edit --blocked-by` and the API's PATCH, at the same moment,
// making two cards wait on each other: never both written, on either
// backend; the refused one says why.
func TestParallelBlockedByEditsNeverLeaveACycle(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		e := newEnv(t, wf{Default: "sim", Port: freePort(t)}, "", b)
		e.start()
		addr := serveAddr(t, e)
		for round := range 20 {
			x := e.addCard(fmt.Sprint("x", round), "--state", "backlog")
			y := e.addCard(fmt.Sprint("y", round), "--state", "backlog")
			var wg sync.WaitGroup
			var cliCode, apiStatus int
			var cliErr, apiBody string
			wg.Add(2)
			go func() {
				defer wg.Done()
				_, cliErr, cliCode = e.drover(nil, "card", "edit", x.Identifier, "--blocked-by", y.Identifier)
			}()
			go func() {
				defer wg.Done()
				req, _ := http.NewRequest("PATCH", addr+"/api/v1/cards/"+y.Identifier, bytes.NewReader([]byte(`{"blocked_by":["`+x.Identifier+`"]}`)))
				req.Header.Set("Content-Type", "application/json")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				apiStatus, apiBody = resp.StatusCode, string(body)
			}()
			wg.Wait()
			if cliCode == 0 && apiStatus == http.StatusOK {
				t.Fatalf("round %d: %s and %s now wait on each other: both edits were written", round, x.Identifier, y.Identifier)
			}
			if cliCode != 0 && apiStatus != http.StatusOK {
				t.Fatalf("round %d: both edits refused (cli exit %d: %s; api %d: %s); one alone closes no cycle", round, cliCode, cliErr, apiStatus, apiBody)
			}
			refusal := cliErr
			if apiStatus != http.StatusOK {
				refusal = apiBody
			}
			if !bytes.Contains([]byte(refusal), []byte("wait on each other")) || !bytes.Contains([]byte(refusal), []byte("blocked_by")) {
				t.Fatalf("round %d: the refusal %q does not name blocked_by and the cycle", round, refusal)
			}
		}
	})
}
