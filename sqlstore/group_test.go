package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/internal/batch"
)

// groupDialect is plainDialect on an engine that commits posts together.
type groupDialect struct{ plainDialect }

func (groupDialect) GroupsCommits() bool { return true }

// mustGroupStore is mustBareStore with group commit, whose first leader
// waits until n operations are queued, so that they make one batch.
func mustGroupStore(t *testing.T, n int) *Store {
	t.Helper()
	s := mustBareStore(t, groupDialect{})
	if _, err := s.write.ExecContext(context.Background(), `CREATE UNIQUE INDEX t_v ON t (v)`); err != nil {
		t.Fatal(err)
	}
	s.group = &batch.Queue[*groupOp]{}
	var once sync.Once
	s.group.Hold = func() {
		once.Do(func() {
			for s.group.Queued() < n {
				runtime.Gosched()
			}
		})
	}
	return s
}

// insertOp is a post that inserts v into t, failing with a coded error
// (ECONFLICT, as a post's constraint errors are) when v is there already,
// and then does what then says, if anything: fail, or panic.
func insertOp(v string, then func() error) *groupOp {
	return &groupOp{fn: func(ctx context.Context, tx *Store) error {
		_, err := tx.write.ExecContext(ctx, `INSERT INTO t (v) VALUES ($1)`, v)
		if err != nil && strings.Contains(err.Error(), "UNIQUE constraint failed") {
			return mcpgate.Errorf(mcpgate.ECONFLICT, "%s is taken", v)
		} else if err != nil || then == nil {
			return err
		}
		return then()
	}}
}

// runBatch runs ops as one batch of s, a mustGroupStore of len(ops), and
// returns each one's error and panic.
func runBatch(t *testing.T, s *Store, ops []*groupOp) ([]error, []any) {
	t.Helper()
	errs, panics := make([]error, len(ops)), make([]any, len(ops))
	var wg sync.WaitGroup
	for i, op := range ops {
		wg.Go(func() {
			defer func() { panics[i] = recover() }()
			errs[i] = s.runPost(context.Background(), op)
		})
	}
	wg.Wait()
	if n, _ := s.group.Batches(); n != 1 {
		t.Errorf("%d transactions, want 1 for the whole batch", n)
	}
	return errs, panics
}

// stored returns the values of t that s's readers see, sorted and joined
// by commas.
func stored(t *testing.T, s *Store) string {
	t.Helper()
	var got sql.NullString
	err := s.read.QueryRowContext(context.Background(), `SELECT group_concat(v, ',') FROM (SELECT v FROM t ORDER BY v)`).Scan(&got)
	if err != nil {
		t.Fatal(err)
	}
	return got.String
}

// TestGroupCommit: operations queued while the writer is busy run in one
// transaction, with no savepoints; one that fails with a coded error (a
// constraint, which SQLite backs out alone) gets its own error, and the
// others are committed.
func TestGroupCommit(t *testing.T) {
	s := mustGroupStore(t, 4)
	if _, err := s.write.ExecContext(context.Background(), `INSERT INTO t (v) VALUES ('taken')`); err != nil {
		t.Fatal(err)
	}
	values := []string{"a", "taken", "b", "c"}
	ops := make([]*groupOp, len(values))
	for i, v := range values {
		ops[i] = insertOp(v, nil)
	}
	errs, _ := runBatch(t, s, ops)
	for i, v := range values {
		if code := mcpgate.ErrorCode(errs[i]); (v == "taken") != (code == mcpgate.ECONFLICT) || v != "taken" && errs[i] != nil {
			t.Errorf("insert of %q: %v", v, errs[i])
		}
	}
	if got := stored(t, s); got != "a,b,c,taken" {
		t.Errorf("stored %q, want a,b,c,taken", got)
	}
}

// TestGroupCommitInDoubt: an operation that fails with an error of no
// code after it wrote, or panics, leaves the transaction in doubt: the
// whole batch is rolled back, each operation fails (the panic in its
// caller), and the store goes on.
func TestGroupCommitInDoubt(t *testing.T) {
	for _, tc := range []struct {
		name string
		then func() error
	}{
		{"error", func() error { return errors.New("no") }},
		{"panic", func() error { panic("boom") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := mustGroupStore(t, 3)
			errs, panics := runBatch(t, s, []*groupOp{insertOp("a", nil), insertOp("doubt", tc.then), insertOp("b", nil)})
			if tc.name == "panic" && (panics[1] == nil || errs[0] == nil || errs[2] == nil) ||
				tc.name == "error" && (errs[1] == nil || errs[1].Error() != "no" || !errors.Is(errs[0], errs[1]) || !errors.Is(errs[2], errs[1])) {
				t.Errorf("errors %v, panics %v; want every operation failed, the one in doubt with its own", errs, panics)
			}
			if got := stored(t, s); got != "" {
				t.Errorf("stored %q, want nothing", got)
			}
			if err := s.runPost(context.Background(), insertOp("after", nil)); err != nil || stored(t, s) != "after" {
				t.Errorf("the post after the batch: %v, stored %q", err, stored(t, s))
			}
		})
	}
}

// TestGroupCommitAlone: an operation with no other queued runs in its own
// transaction, which a failure rolls back.
func TestGroupCommitAlone(t *testing.T) {
	ctx := context.Background()
	s := mustGroupStore(t, 1)
	err := s.runPost(ctx, &groupOp{fn: func(ctx context.Context, tx *Store) error {
		if _, err := tx.write.ExecContext(ctx, `INSERT INTO t (v) VALUES ('x')`); err != nil {
			return err
		}
		return fmt.Errorf("no")
	}})
	var n int
	if err2 := s.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM t`).Scan(&n); err == nil || err2 != nil || n != 0 {
		t.Errorf("failed operation: err %v, %d rows left (%v)", err, n, err2)
	}
	if err := s.runPost(ctx, &groupOp{fn: func(ctx context.Context, tx *Store) error {
		_, err := tx.write.ExecContext(ctx, `INSERT INTO t (v) VALUES ('y')`)
		return err
	}}); err != nil {
		t.Fatal(err)
	}
	if n, leading := s.group.Batches(); n != 2 || leading {
		t.Errorf("%d batches, leading %v; want 2, and the lead given up", n, leading)
	}
}

// TestGroupCommitLeaderCanceled: the leader's context is canceled once the
// batch is queued; its own insert fails, before it ran, and the others'
// still commit (the batch's transaction is every post's, not the
// leader's).
func TestGroupCommitLeaderCanceled(t *testing.T) {
	s := mustGroupStore(t, 1)
	leaderCtx, cancel := context.WithCancel(context.Background())
	s.group.Hold = func() {
		for s.group.Queued() < 3 {
			runtime.Gosched()
		}
		cancel()
		s.group.Hold = nil
	}
	insert := func(ctx context.Context, v string) error {
		return s.runPost(ctx, &groupOp{fn: func(ctx context.Context, tx *Store) error {
			_, err := tx.write.ExecContext(ctx, `INSERT INTO t (v) VALUES ($1)`, v)
			return err
		}})
	}
	var wg sync.WaitGroup
	var leaderErr error
	wg.Go(func() { leaderErr = insert(leaderCtx, "leader") })
	for s.group.Queued() < 1 { // the leader is queued first, so it leads
		runtime.Gosched()
	}
	errs := make([]error, 2)
	for i, v := range []string{"b", "c"} {
		wg.Go(func() { errs[i] = insert(context.Background(), v) })
	}
	wg.Wait()
	if leaderErr == nil || errs[0] != nil || errs[1] != nil {
		t.Fatalf("leader: %v (want canceled); others: %v", leaderErr, errs)
	}
	var got string
	err := s.read.QueryRowContext(context.Background(), `SELECT group_concat(v, ',') FROM (SELECT v FROM t ORDER BY v)`).Scan(&got)
	if err != nil || got != "b,c" {
		t.Errorf("stored %q (%v), want b,c", got, err)
	}
}
