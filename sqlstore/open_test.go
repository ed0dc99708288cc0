package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
)

// mustOpenStore is mustGroupStore(t, 1) whose open transaction commits by
// itself only after delay, and a second connection to its database, for
// seeing what is committed.
func mustOpenStore(t *testing.T, delay time.Duration) (*Store, *sql.DB) {
	t.Helper()
	s := mustGroupStore(t, 1)
	s.commitDelay = delay
	// As the sqlite package opens it: a reader never holds a commit up.
	if _, err := s.writeDB.Exec(`PRAGMA journal_mode = WAL`); err != nil {
		t.Fatal(err)
	}
	var seq int
	var name, path string
	if err := s.writeDB.QueryRow(`PRAGMA database_list`).Scan(&seq, &name, &path); err != nil {
		t.Fatal(err)
	}
	other, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = other.Close() })
	return s, other
}

// post inserts v into t in a post that returns early, or waits for its
// commit, and reports a lost one on lost.
func post(s *Store, v string, early bool, lost chan<- error) error {
	fn := func(tx *Store) error {
		_, err := tx.write.ExecContext(context.Background(), `INSERT INTO t (v) VALUES ($1)`, v)
		return err
	}
	op := &groupOp{fn: fn}
	if early {
		op.lost = func(err error) { lost <- err }
	}
	return s.runGroup(context.Background(), op)
}

// committed returns how many rows of t other sees.
func committed(t *testing.T, other *sql.DB) int {
	t.Helper()
	var n int
	if err := other.QueryRow(`SELECT COUNT(*) FROM t`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestEarlyPostCommitsWithNext: a post that may return early returns
// before its transaction commits; the next post that waits for its commit
// commits both.
func TestEarlyPostCommitsWithNext(t *testing.T) {
	s, other := mustOpenStore(t, time.Hour)
	lost := make(chan error, 2)
	if err := post(s, "early", true, lost); err != nil {
		t.Fatal(err)
	}
	if n := committed(t, other); n != 0 {
		t.Fatalf("%d rows committed after the early post, want 0", n)
	}
	if err := post(s, "waits", false, lost); err != nil {
		t.Fatal(err)
	}
	if n := committed(t, other); n != 2 {
		t.Fatalf("%d rows committed after the post that waits, want 2", n)
	}
	if n, _ := s.group.Batches(); n != 2 || s.unsettled.Load() {
		t.Errorf("%d batches, unsettled %v; want 2 and none open", n, s.unsettled.Load())
	}
}

// TestEarlyPostCommitsByItself: with no post after it, the open
// transaction commits after the delay.
func TestEarlyPostCommitsByItself(t *testing.T) {
	s, other := mustOpenStore(t, time.Millisecond)
	if err := post(s, "early", true, make(chan error, 1)); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for committed(t, other) != 1 {
		if time.Now().After(deadline) {
			t.Fatal("the early post is not committed after 10 s")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestEarlyPostSettledByWrite: a write outside the posts, a transaction
// and Close commit the open transaction first rather than wait for it.
func TestEarlyPostSettledByWrite(t *testing.T) {
	s, other := mustOpenStore(t, time.Hour)
	ctx := context.Background()
	writers := []struct {
		name  string
		write func() error
		rows  int // committed after it: each post, and the plain write
	}{
		{"a write", func() error {
			_, err := s.write.ExecContext(ctx, `INSERT INTO t (v) VALUES ('plain')`)
			return err
		}, 2},
		{"a transaction", func() error { return s.Tx(ctx, func(mcpgate.Store) error { return nil }) }, 3},
		{"Close", s.Close, 4},
	}
	lost := make(chan error, len(writers))
	for _, w := range writers {
		if err := post(s, "before "+w.name, true, lost); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- w.write() }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s waited 10 s for the open transaction", w.name)
		}
		if n := committed(t, other); n != w.rows {
			t.Fatalf("%d rows committed after %s, want %d", n, w.name, w.rows)
		}
	}
}

// TestEarlyPostLost: when the open transaction fails to commit, the posts
// that returned early are told, the post that committed it gets the
// error, and the store goes on.
func TestEarlyPostLost(t *testing.T) {
	s, other := mustOpenStore(t, time.Hour)
	ctx := context.Background()
	for _, q := range []string{
		`PRAGMA foreign_keys = ON`,
		`CREATE TABLE p (id INTEGER PRIMARY KEY)`,
		`CREATE TABLE c (pid INTEGER REFERENCES p (id) DEFERRABLE INITIALLY DEFERRED)`,
	} {
		if _, err := s.writeDB.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	lost := make(chan error, 2)
	orphan := func(tx *Store) error { // fails only at the commit
		_, err := tx.write.ExecContext(ctx, `INSERT INTO c (pid) VALUES (42)`)
		return err
	}
	if err := s.runGroup(ctx, &groupOp{fn: orphan, lost: func(err error) { lost <- err }}); err != nil {
		t.Fatal(err)
	}
	err := post(s, "waits", false, lost)
	if err == nil {
		t.Fatal("the post that committed a failing transaction returned no error")
	}
	select {
	case got := <-lost:
		if !errors.Is(got, err) {
			t.Errorf("lost told %v, the post returned %v", got, err)
		}
	default:
		t.Fatal("the early post was not told it was lost")
	}
	if err := post(s, "after", false, lost); err != nil {
		t.Fatal(err)
	}
	if n := committed(t, other); n != 1 {
		t.Errorf("%d rows committed, want 1 (only the post after the failure)", n)
	}
}
