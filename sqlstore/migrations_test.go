package sqlstore

import (
	"io/fs"
	"strings"
	"testing"
)

// TestMigrations checks that both engines get the same files, that only
// PostgreSQL's keep the collation clause SQLite does not know, and that
// each engine's blocks reach that engine only.
func TestMigrations(t *testing.T) {
	pg, lite := Migrations("postgres"), Migrations("sqlite")
	names, err := fs.Glob(pg, "*.sql")
	if err != nil || len(names) == 0 {
		t.Fatalf("migrations: %v %v", names, err)
	}
	collated, blocks := 0, 0
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
		blocks += strings.Count(string(l), "-- +mcpgate sqlite")
		if strings.Contains(string(l), "COLLATE") {
			t.Errorf("%s: the SQLite migration still has a COLLATE clause", name)
		}
		if strings.Contains(string(p), "-- +mcpgate sqlite") || strings.Contains(string(l), "-- +mcpgate postgres") {
			t.Errorf("%s: a block of one engine is in the other's migration", name)
		}
		common := func(b []byte) string { return string(withoutBlocks(withoutBlocks(b, "sqlite"), "postgres")) }
		if got := strings.ReplaceAll(common(p), ` COLLATE "C"`, ""); got != common(l) {
			t.Errorf("%s: the SQLite migration differs beyond the collation and the engines' blocks", name)
		}
	}
	if blocks == 0 {
		t.Error("no block for SQLite alone in its migrations")
	}
	if collated == 0 {
		t.Error(`no COLLATE "C" in the PostgreSQL migrations`)
	}
	if got, err := fs.Glob(lite, "*.sql"); err != nil || len(got) != len(names) {
		t.Errorf("SQLite lists %d migrations, PostgreSQL %d (%v)", len(got), len(names), err)
	}
}

// TestWithoutBlocks: an engine's blocks are taken out whole, markers
// included; the other engine's blocks and the lines around stay.
func TestWithoutBlocks(t *testing.T) {
	in := "a;\n-- +mcpgate sqlite\nb;\n  -- +mcpgate end\nc;\n-- +mcpgate postgres\nd;\n-- +mcpgate end\ne;"
	if got, want := string(withoutBlocks([]byte(in), "sqlite")), "a;\nc;\n-- +mcpgate postgres\nd;\n-- +mcpgate end\ne;"; got != want {
		t.Errorf("without sqlite:\n%s\nwant\n%s", got, want)
	}
	if got, want := string(withoutBlocks([]byte(in), "postgres")), "a;\n-- +mcpgate sqlite\nb;\n  -- +mcpgate end\nc;\ne;"; got != want {
		t.Errorf("without postgres:\n%s\nwant\n%s", got, want)
	}
}
