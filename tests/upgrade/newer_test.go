package upgrade

import (
	"fmt"
	"strings"
	"testing"

	"github.com/drover-dev/drover/internal/store/sqlstore"
	"github.com/drover-dev/drover/internal/testkit"
)

// TestNewerSchemaIsRefused: a store a newer drover migrated is left alone,
// and the error names both versions and the fix.
func TestNewerSchemaIsRefused(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, backend testkit.Backend) {
		dsn := ""
		if backend == testkit.Postgres {
			dsn = testkit.DSN(t, backend)
		}
		b := newBoard(t, dsn, deadHook, "upgrade-test")
		b.ok("card", "add", "--title", "Written by today's drover")
		future := sqlstore.SchemaVersion() + 7
		db := rawDB(t, b.dsn)
		if _, err := db.Exec(fmt.Sprintf(`INSERT INTO goose_db_version (version_id, is_applied) VALUES (%d, TRUE)`, future)); err != nil {
			t.Fatal(err)
		}
		db.Close()

		for _, args := range [][]string{{"card", "ls"}, {"serve"}} {
			out, errs, code := b.drover(args...)
			want := []string{
				fmt.Sprintf("schema version %d", future),
				fmt.Sprintf("knows up to %d", sqlstore.SchemaVersion()),
				"upgrade drover",
			}
			for _, w := range want {
				if !strings.Contains(errs, w) {
					t.Errorf("drover %s: stderr %q lacks %q", strings.Join(args, " "), errs, w)
				}
			}
			if code != 1 || out != "" {
				t.Errorf("drover %s: exit %d, stdout %q; want exit 1 and nothing printed", strings.Join(args, " "), code, out)
			}
		}
		_, errs, _ := b.drover("card", "ls", "--json")
		if !strings.Contains(errs, `"code":"schema_too_new"`) {
			t.Errorf("drover card ls --json: stderr %q lacks code schema_too_new", errs)
		}
		if v := schemaOf(t, b.dsn); v != future {
			t.Errorf("the refused store is at schema %d now, want it untouched at %d", v, future)
		}
	})
}
