package sqlstore

import (
	"io/fs"
	"strings"
	"testing"
)

// TestMigrations checks that both engines get the same files, and that only
// PostgreSQL's keep the collation clause SQLite does not know.
func TestMigrations(t *testing.T) {
	pg, lite := Migrations("postgres"), Migrations("sqlite")
	names, err := fs.Glob(pg, "*.sql")
	if err != nil || len(names) == 0 {
		t.Fatalf("migrations: %v %v", names, err)
	}
	collated := 0
	for _, name := range names {
		p, err := fs.ReadFile(pg, name)
		if err != nil {
			t.Fatal(err)
		}
		l, err := fs.ReadFile(lite, name)
		if err != nil {
			t.Fatal(err)
		}
		collated += strings.Count(string(p), `COLLATE "C"`)
		if strings.Contains(string(l), "COLLATE") {
			t.Errorf("%s: the SQLite migration still has a COLLATE clause", name)
		}
		if got := strings.ReplaceAll(string(p), ` COLLATE "C"`, ""); got != string(l) {
			t.Errorf("%s: the SQLite migration differs beyond the collation", name)
		}
	}
	if collated == 0 {
		t.Error(`no COLLATE "C" in the PostgreSQL migrations`)
	}
	if got, err := fs.Glob(lite, "*.sql"); err != nil || len(got) != len(names) {
		t.Errorf("SQLite lists %d migrations, PostgreSQL %d (%v)", len(got), len(names), err)
	}
}
