package sqlstore

import (
	"io/fs"
	"strconv"
	"strings"
)

// SchemaVersion is the store schema this drover expects: the version of the
// last embedded migration. A database at a lower version is migrated up to it
// on Open; one at a higher version is refused with store.ErrSchemaTooNew.
// Both dialects carry the same versions (a test checks it).
func SchemaVersion() int64 { return latestMigration("migrations/sqlite") }

// latestMigration is the highest NNNNN_ prefix among the .sql files in dir.
func latestMigration(dir string) int64 {
	entries, err := fs.ReadDir(migrations, dir)
	if err != nil {
		panic("sqlstore: embedded migrations: " + err.Error())
	}
	var latest int64
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		if !ok || !strings.HasSuffix(e.Name(), ".sql") {
			continue
		}
		if v, err := strconv.ParseInt(num, 10, 64); err == nil && v > latest {
			latest = v
		}
	}
	return latest
}
