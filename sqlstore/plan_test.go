package sqlstore

import (
	"database/sql"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// mustMigratedDB opens a new SQLite database with the schema of every
// migration (the Up part of each file, in order).
func mustMigratedDB(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	m := Migrations("sqlite")
	names, err := fs.Glob(m, "*.sql")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		b, err := fs.ReadFile(m, name)
		if err != nil {
			t.Fatal(err)
		}
		up, _, _ := strings.Cut(string(b), "-- +goose Down")
		if _, err := db.Exec(up); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	return db
}

// plan returns SQLite's plan of q run with args, its steps joined by "; ".
func plan(t *testing.T, db *sql.DB, q string, args ...any) string {
	t.Helper()
	rows, err := db.Query("EXPLAIN QUERY PLAN "+q, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var steps []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		steps = append(steps, detail)
	}
	return strings.Join(steps, "; ")
}

// TestInboxQueriesSearchClaimable: the check of a post to an agent's
// workers (is an older message of the inbox claimable?) and a claim find
// the claimable messages by two searches of messages_claimable, and
// never walk the inbox, whose messages in flight may be many, nor the
// agent's messages in seq order.
func TestInboxQueriesSearchClaimable(t *testing.T) {
	db := mustMigratedDB(t)
	for _, c := range []struct {
		name, query string
		args        []any
	}{
		{"check", checkInboxQuery, []any{nil, "ch", "ag", 5, 7, ""}},
		{"claim", claimQuery(100), []any{9, "ag", 7, ""}},
	} {
		p := plan(t, db, c.query, c.args...)
		if strings.Count(p, "SEARCH messages USING INDEX messages_claimable (agent_id=? AND delivered_at") != 2 ||
			strings.Contains(p, "SCAN messages") || strings.Contains(p, "sqlite_autoindex_messages_2") {
			t.Errorf("%s: plan %s", c.name, p)
		}
	}
}

// TestSweepsSearchTheirRows: the periodic sweeps of files and of finished
// webhook deliveries reach the rows they delete through indexes, never by
// reading the whole of files, webhook_deliveries or webhook_events.
func TestSweepsSearchTheirRows(t *testing.T) {
	db := mustMigratedDB(t)
	for _, c := range []struct {
		name, query string
		args        []any
		want        []string
	}{
		{"files", sweepFilesQuery + "id", []any{1, 2, 3}, []string{
			"USING INDEX files_unready_expires_at (expires_at<?)", "USING INDEX files_created_at (status=? AND created_at<?)"}},
		{"deliveries", finishedDeliveriesQuery, []any{1, 2}, []string{"USING INDEX webhook_deliveries_finished (created_at<?)"}},
		{"events", orphanEventsQuery, []any{1}, []string{
			"USING INDEX webhook_events_created_at (created_at<?)", "USING COVERING INDEX webhook_deliveries_event (event_id=?)"}},
	} {
		p := plan(t, db, c.query, c.args...)
		for _, w := range c.want {
			if !strings.Contains(p, w) {
				t.Errorf("%s: plan %s, want %s", c.name, p, w)
			}
		}
		for _, table := range []string{"files", "webhook_deliveries", "webhook_events", " d"} {
			if strings.Contains(p, "SCAN "+strings.TrimSpace(table)) {
				t.Errorf("%s: plan %s reads the whole of %s", c.name, p, table)
			}
		}
	}
}
