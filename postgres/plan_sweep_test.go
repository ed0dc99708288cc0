package postgres_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/postgres/pgtest"
)

// TestSweepPlansAnalyzed: once the tables have statistics, the sweeps
// that TestStorePlansReadNoRange lets scan on a new database (files, and
// the webhook retention sweep's old events) reach their rows through
// indexes: the files that never became ready by their expiry, ready ones
// by age, old events by age and each event's deliveries by the event.
// Before migration 00023 no index led to the first or to the last two,
// and each run read the whole table, however large it grew.
//
// The plans checked are the custom ones, made with the arguments' values:
// a generic plan guesses that a third of the rows are older than the
// cutoff and scans, and PostgreSQL (plan_cache_mode auto) keeps making
// custom plans for a statement whose generic plan costs more than they
// did.
func TestSweepPlansAnalyzed(t *testing.T) {
	dsn := pgtest.Database(t, pgtest.Admin(t))
	s, log := openTraced(t, dsn, func(q string) bool {
		return strings.HasPrefix(strings.TrimSpace(q), "DELETE FROM files") || strings.Contains(q, "DELETE FROM webhook_events")
	})
	ctx := context.Background()
	now := time.Now()
	fillSweptTables(t, dsn, now)
	log.during("sweeps")
	_, err := s.SweepFiles(ctx, now.Add(-48*time.Hour), now.Add(-48*time.Hour), 10)
	mustDo(t, err)
	_, err = s.DeleteDeliveriesBefore(ctx, now.Add(-48*time.Hour), 10)
	mustDo(t, err)
	log.during("")
	traced := log.statements()
	if len(traced) != 2 {
		t.Fatalf("traced %d statements, want the file sweep's and the events' delete", len(traced))
	}
	for q, tr := range traced {
		plan := explain(t, dsn, "force_custom_plan", q, tr.args)
		for _, table := range []string{"files", "webhook_events", "webhook_deliveries"} {
			if strings.Contains(plan, "Seq Scan on "+table) {
				t.Errorf("the plan of\n%s\nreads the whole of %s:\n%s", q, table, plan)
			}
		}
		for _, index := range sweepIndexes(q) {
			if !strings.Contains(plan, " on "+index+" ") && !strings.Contains(plan, " using "+index+" ") {
				t.Errorf("the plan of\n%s\ndoes not use %s:\n%s", q, index, plan)
			}
		}
	}
}

// sweepIndexes are the indexes that lead sweep q to its rows. Without
// files_unready_expires_at, the file sweep read the whole of
// files_expires_at, whose range starts with the status.
func sweepIndexes(q string) []string {
	if strings.Contains(q, "DELETE FROM files") {
		return []string{"files_unready_expires_at", "files_created_at"}
	}
	return []string{"webhook_events_created_at", "webhook_deliveries_event"}
}

// fillSweptTables writes 20,000 files (one in ten not ready), as many
// webhook events and one finished delivery of each, all but the first
// event and its delivery newer than the sweeps reach, and analyzes the
// three tables.
func fillSweptTables(t *testing.T, dsn string, now time.Time) {
	t.Helper()
	ctx := context.Background()
	db := pgtest.Open(t, dsn)
	at, expires := now.UnixMicro(), now.Add(time.Hour).UnixMicro()
	for _, st := range []struct {
		q    string
		args []any
	}{
		{`INSERT INTO files (id, user_id, filename, content_type, size, sha256, status, created_at, expires_at)
			SELECT 'file_' || i, 'usr_1', 'a.txt', 'text/plain', 1, 'sum' || i,
				CASE WHEN i % 10 = 0 THEN '` + mcpgate.FilePending + `' ELSE '` + mcpgate.FileReady + `' END, $1::bigint + i, $2::bigint + i
			FROM generate_series(1, 20000) AS i`, []any{at, expires}},
		{`INSERT INTO webhook_events (id, type, user_id, agent_id, body, created_at)
			SELECT 'evt_' || i, 'call.completed', 'usr_1', 'weather', '{}', CASE WHEN i = 1 THEN 0 ELSE $1::bigint + i END FROM generate_series(1, 20000) AS i`, []any{at}},
		{`INSERT INTO webhook_deliveries (id, webhook_id, event_id, event_type, state, attempts, next_at, created_at, give_up_at)
			SELECT 'dlv_' || i, 'whk_1', 'evt_' || i, 'call.completed', 'succeeded', 1, $1::bigint, CASE WHEN i = 1 THEN 0 ELSE $1::bigint + i END, $2::bigint FROM generate_series(1, 20000) AS i`, []any{at, expires}},
		{`ANALYZE files, webhook_events, webhook_deliveries`, nil},
	} {
		_, err := db.ExecContext(ctx, st.q, st.args...)
		mustDo(t, err)
	}
}
