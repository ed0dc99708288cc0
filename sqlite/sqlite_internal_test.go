package sqlite

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpgate/mcpgate/sqlstore"
)

func mustDB(tb testing.TB, open func(context.Context, string) (*sql.DB, error), path string) *sql.DB {
	tb.Helper()
	db, err := open(context.Background(), path)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = db.Close() })
	return db
}

func pragma(tb testing.TB, db *sql.DB, name string) string {
	tb.Helper()
	var v string
	if err := db.QueryRow("PRAGMA " + name).Scan(&v); err != nil {
		tb.Fatal(err)
	}
	return v
}

func TestPragmas(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	w := mustDB(t, openWriter, path)
	r := mustDB(t, openReader, path)
	for _, tc := range []struct {
		db           *sql.DB
		pragma, want string
	}{
		{w, "journal_mode", "wal"},
		{w, "foreign_keys", "1"},
		{w, "busy_timeout", "5000"},
		{w, "synchronous", "1"}, // NORMAL
		{w, "wal_autocheckpoint", "10000"},
		{w, "query_only", "0"},
		{r, "journal_mode", "wal"},
		{r, "foreign_keys", "1"},
		{r, "busy_timeout", "5000"},
		{r, "query_only", "1"},
	} {
		if got := pragma(t, tc.db, tc.pragma); got != tc.want {
			t.Errorf("PRAGMA %s = %q, want %q", tc.pragma, got, tc.want)
		}
	}
	if got := w.Stats().MaxOpenConnections; got != 1 {
		t.Errorf("writer MaxOpenConnections = %d, want 1", got)
	}
}

func TestReaderRefusesWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	mustDB(t, openWriter, path)
	r := mustDB(t, openReader, path)
	_, err := r.Exec(`UPDATE meta SET value = value + 1`)
	if err == nil || !strings.Contains(err.Error(), "readonly") {
		t.Fatalf("write on the reader: %v, want a read-only error", err)
	}
}

func TestViolation(t *testing.T) {
	w := mustDB(t, openWriter, filepath.Join(t.TempDir(), "db"))
	exec := func(q string) error { _, err := w.Exec(q); return err }
	if err := exec(`INSERT INTO users VALUES ('u1', 'alice', '', 0, '', 0, 0)`); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, stmt string
		want       sqlstore.Violation
	}{
		{"unique", `INSERT INTO users VALUES ('u2', 'alice', '', 0, '', 0, 0)`,
			sqlstore.Violation{Kind: sqlstore.UniqueViolation, Columns: []string{"name"}}},
		{"primary key", `INSERT INTO users VALUES ('u1', 'bob', '', 0, '', 0, 0)`,
			sqlstore.Violation{Kind: sqlstore.UniqueViolation, Columns: []string{"id"}}},
		{"foreign key", `INSERT INTO agents VALUES ('a', '', '', 'nobody', 1, '', 0, 0)`,
			sqlstore.Violation{Kind: sqlstore.ForeignKeyViolation}},
		{"other", `INSERT INTO nowhere VALUES (1)`, sqlstore.Violation{}},
		{"none", `SELECT 1`, sqlstore.Violation{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := dialect{}.Violation(exec(tc.stmt))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Violation (-want +got):\n%s", diff)
			}
		})
	}
}

func TestUniqueColumns(t *testing.T) {
	for msg, want := range map[string][]string{
		"constraint failed: UNIQUE constraint failed: tools.agent_id, tools.skill_name, tools.name (2067)": {"agent_id", "skill_name", "name"},
		"UNIQUE constraint failed: users.name": {"name"},
		"something else":                       nil,
	} {
		if diff := cmp.Diff(want, uniqueColumns(msg)); diff != "" {
			t.Errorf("uniqueColumns(%q) (-want +got):\n%s", msg, diff)
		}
	}
}

// TestQueryPlans checks that the hot lookups and the filtered lists use an
// index instead of scanning their table.
func TestQueryPlans(t *testing.T) {
	w := mustDB(t, openWriter, filepath.Join(t.TempDir(), "db"))
	for _, q := range []string{
		`SELECT id FROM api_keys WHERE hash = 'h'`,
		`SELECT id FROM sessions WHERE id = 's'`,
		`SELECT id FROM agents WHERE owner_id = 'u'`,
		`SELECT id FROM api_keys WHERE user_id = 'u' ORDER BY created_at DESC`,
		`SELECT name FROM skills WHERE agent_id = 'a' ORDER BY agent_id, position`,
		`SELECT spec FROM tools WHERE agent_id = 'a' AND skill_name = 's' ORDER BY position`,
		`SELECT id FROM sessions WHERE last_seen_at < 5`,
		// The dashboard's overview: calls in the last hour, every agent's
		// or a user's own.
		`SELECT COUNT(*) FROM calls WHERE at >= 5`,
		`SELECT COUNT(*) FROM calls WHERE agent_id IN (SELECT id FROM agents WHERE owner_id = 'u') AND at >= 5`,
	} {
		rows, err := w.Query("EXPLAIN QUERY PLAN " + q)
		if err != nil {
			t.Fatal(err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		text := strings.Join(plan, "; ")
		if !strings.HasPrefix(text, "SEARCH") || strings.Contains(text, "TEMP B-TREE") {
			t.Errorf("%s\n\tplan: %s", q, text)
		}
	}
}

func TestOpenCreatesPrivateFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "data", "mcpgate.db")
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if mode := fi.Mode().Perm(); mode&0o077 != 0 {
			t.Errorf("%s has mode %v; want no access for group and others", filepath.Base(p), mode)
		}
	}
}

// TestCheckpointerCopiesLog: what the store writes reaches the database
// file while it is open. The writer alone leaves it in the -wal file until
// the log is walBackstopPages long, or the last connection closes.
func TestCheckpointerCopiesLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r := mustDB(t, openReader, path)
	var pages, size int64
	if err := r.QueryRow(`SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()`).Scan(&pages); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for ; size < pages; time.Sleep(10 * time.Millisecond) {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		size = fi.Size()
		if time.Now().After(deadline) {
			t.Fatalf("the database file holds %d bytes of the schema's %d after 10 s", size, pages)
		}
	}
}
