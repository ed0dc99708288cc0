package sqlstore

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"

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

// TestGroupCommit: operations queued while the writer is busy run in one
// transaction; one that fails is rolled back alone and gets its own error,
// one that panics panics in its caller, and the others are committed.
func TestGroupCommit(t *testing.T) {
	ctx := context.Background()
	s := mustGroupStore(t, 5)
	if _, err := s.write.ExecContext(ctx, `INSERT INTO t (v) VALUES ('taken')`); err != nil {
		t.Fatal(err)
	}
	values := []string{"a", "taken", "b", "panic", "c"}
	errs := make([]error, len(values))
	panics := make([]any, len(values))
	var wg sync.WaitGroup
	for i, v := range values {
		wg.Go(func() {
			defer func() { panics[i] = recover() }()
			errs[i] = s.runPost(ctx, &groupOp{fn: func(tx *Store) error {
				if _, err := tx.write.ExecContext(ctx, `INSERT INTO t (v) VALUES ($1)`, v); err != nil {
					return err
				}
				if v == "panic" {
					panic("boom")
				}
				return nil
			}})
		})
	}
	wg.Wait()
	if n, _ := s.group.Batches(); n != 1 {
		t.Errorf("%d transactions, want 1 for the whole batch", n)
	}
	for i, v := range values {
		wantErr, wantPanic := v == "taken", v == "panic"
		if (errs[i] != nil) != wantErr || (panics[i] != nil) != wantPanic {
			t.Errorf("insert of %q: error %v, panic %v", v, errs[i], panics[i])
		}
	}
	var got string
	err := s.read.QueryRowContext(ctx, `SELECT group_concat(v, ',') FROM (SELECT v FROM t ORDER BY v)`).Scan(&got)
	if err != nil || got != "a,b,c,taken" {
		t.Errorf("stored %q (%v), want a,b,c,taken", got, err)
	}
}

// TestGroupCommitAlone: an operation with no other queued runs in its own
// transaction, which a failure rolls back.
func TestGroupCommitAlone(t *testing.T) {
	ctx := context.Background()
	s := mustGroupStore(t, 1)
	err := s.runPost(ctx, &groupOp{fn: func(tx *Store) error {
		if _, err := tx.write.ExecContext(ctx, `INSERT INTO t (v) VALUES ('x')`); err != nil {
			return err
		}
		return fmt.Errorf("no")
	}})
	var n int
	if err2 := s.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM t`).Scan(&n); err == nil || err2 != nil || n != 0 {
		t.Errorf("failed operation: err %v, %d rows left (%v)", err, n, err2)
	}
	if err := s.runPost(ctx, &groupOp{fn: func(tx *Store) error {
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
// batch is queued; its own insert fails, and the others' still commit
// (the batch's transaction and savepoints are every post's, not the
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
		return s.runPost(ctx, &groupOp{fn: func(tx *Store) error {
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
