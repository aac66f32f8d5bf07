package testkit

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/drover-dev/drover/internal/excerpt"
	"github.com/drover-dev/drover/internal/store/sqlstore"
)

// BoardDump is every row of every board table of one store (the tables
// `drover store copy` moves), by table name, each table in primary-key
// order with its columns encoded as the copy's checksum encodes them.
type BoardDump map[string][]string

// DumpBoard opens the store at dsn and dumps every board table.
func DumpBoard(t testing.TB, dsn string) BoardDump {
	t.Helper()
	st, err := sqlstore.Open(context.Background(), dsn)
	if err != nil {
		t.Fatalf("testkit: opening store %s: %v", dsn, err)
	}
	defer st.Close()
	out := BoardDump{}
	for _, tb := range sqlstore.BoardTables() {
		if out[tb], err = st.DumpTable(context.Background(), tb); err != nil {
			t.Fatalf("testkit: dumping %s of %s: %v", tb, dsn, err)
		}
	}
	return out
}

// SameBoard fails t, naming the table, for every board table whose rows
// differ between want (the source) and got (the copy), and for every table
// empty on the source, where the comparison would prove nothing.
func SameBoard(t testing.TB, what string, want, got BoardDump) {
	t.Helper()
	for _, tb := range sqlstore.BoardTables() {
		if len(want[tb]) == 0 {
			t.Errorf("%s: table %s is empty on the source; the comparison proves nothing for it", what, tb)
		}
		if !slices.Equal(want[tb], got[tb]) {
			t.Errorf("%s: table %s differs: %d rows on the source, %d on the copy (first difference: %s)", what, tb, len(want[tb]), len(got[tb]), firstDiff(want[tb], got[tb]))
		}
	}
}

// firstDiff describes the first row where a and b differ, clipped.
func firstDiff(a, b []string) string {
	return excerpt.Clip(diffAt(a, b), 400)
}

func diffAt(a, b []string) string {
	for i := range max(len(a), len(b)) {
		at := fmt.Sprintf("row %d: ", i+1)
		switch {
		case i >= len(a):
			return at + "only on the copy " + b[i]
		case i >= len(b):
			return at + "only on the source " + a[i]
		case a[i] != b[i]:
			return at + "source " + a[i] + " / copy " + b[i]
		}
	}
	return "none"
}
