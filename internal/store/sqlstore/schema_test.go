package sqlstore

import "testing"

// TestSchemaVersionSameOnBothDialects: drover version reports one schema
// version, so both dialects must end at the same migration.
func TestSchemaVersionSameOnBothDialects(t *testing.T) {
	lite, pg := latestMigration("migrations/sqlite"), latestMigration("migrations/postgres")
	if lite < 1 || lite != pg {
		t.Fatalf("last migration: sqlite %d, postgres %d; want the same version (≥ 1) on both", lite, pg)
	}
	if SchemaVersion() != lite {
		t.Fatalf("SchemaVersion() = %d, want %d", SchemaVersion(), lite)
	}
}
