package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/internal/batch"
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
	fn := func(_ context.Context, tx *Store) error {
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

// TestEarlyPostSettledByWrite: every way of writing outside the posts
// commits the open transaction first rather than wait for it: a write
// through the statement cache, one through a prepared statement, a
// transaction, the audit log's rows on their own connection, Ping (which
// takes a connection of the writer) and Close.
func TestEarlyPostSettledByWrite(t *testing.T) {
	s, other := mustOpenStore(t, time.Hour)
	ctx := context.Background()
	const hot = `INSERT INTO t (v) VALUES ('prepared')`
	var err error
	if s.hotWrite, err = prepareHot(ctx, s.writeDB, []string{hot}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.writeDB.Exec(`CREATE TABLE calls (` + callColumns + `)`); err != nil {
		t.Fatal(err)
	}
	record := []*mcpgate.CallRecord{{ID: "call_1", Time: time.Now()}}
	writers := []struct {
		name  string
		write func() error
		adds  int // rows of t it inserts itself
	}{
		{"a write", func() error {
			_, err := s.write.ExecContext(ctx, `INSERT INTO t (v) VALUES ('plain')`)
			return err
		}, 1},
		{"a prepared write", func() error { _, err := s.exec(ctx, hot); return err }, 1},
		{"a transaction", func() error { return s.Tx(ctx, func(mcpgate.Store) error { return nil }) }, 0},
		{"the audit log", func() error { return s.insertCallsByRow(ctx, record) }, 0},
		{"Ping", func() error { return s.Ping(ctx) }, 0},
		{"Close", s.Close, 0},
	}
	lost := make(chan error, len(writers))
	want := 0
	for _, w := range writers {
		if err := post(s, "before "+w.name, true, lost); err != nil {
			t.Fatal(err)
		}
		want += 1 + w.adds
		done := make(chan error, 1)
		go func() { done <- w.write() }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("%s: %v", w.name, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s waited 10 s for the open transaction", w.name)
		}
		if n := committed(t, other); n != want {
			t.Fatalf("%d rows committed after %s, want %d", n, w.name, want)
		}
	}
}

// mustDeferredKey adds to s's database a table c whose rows need a row
// of p, checked only at the commit: a transaction that inserts a row of
// c alone runs, then fails to commit.
func mustDeferredKey(t *testing.T, s *Store) {
	t.Helper()
	for _, q := range []string{
		`PRAGMA foreign_keys = ON`,
		`CREATE TABLE p (id INTEGER PRIMARY KEY)`,
		`CREATE TABLE c (pid INTEGER REFERENCES p (id) DEFERRABLE INITIALLY DEFERRED)`,
	} {
		if _, err := s.writeDB.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
}

// orphan inserts a row of mustDeferredKey's table c without its row of
// p: it runs, then fails its transaction's commit.
func orphan(_ context.Context, tx *Store) error {
	_, err := tx.write.ExecContext(context.Background(), `INSERT INTO c (pid) VALUES (42)`)
	return err
}

// TestEarlyPostLost: when the open transaction fails to commit, the posts
// that returned early are told, the post that committed it gets the
// error, and the store goes on.
func TestEarlyPostLost(t *testing.T) {
	s, other := mustOpenStore(t, time.Hour)
	ctx := context.Background()
	mustDeferredKey(t, s)
	lost := make(chan error, 2)
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

// TestFailedCommitLeavesWriterClean: a transaction whose COMMIT fails
// (SQLite then keeps the transaction open on the connection) gets the
// error, and the writer's one connection takes the next write, which the
// driver allows by rolling the failed transaction back.
func TestFailedCommitLeavesWriterClean(t *testing.T) {
	s, other := mustOpenStore(t, time.Hour)
	ctx := context.Background()
	mustDeferredKey(t, s)
	err := s.withTx(ctx, func(tx *Store) error {
		_, err := tx.write.ExecContext(ctx, `INSERT INTO t (v) VALUES ('rolled back'); INSERT INTO c (pid) VALUES (42)`)
		return err
	})
	if err == nil {
		t.Fatal("a transaction whose commit failed returned no error")
	} else if !strings.HasPrefix(err.Error(), "commit: ") {
		t.Fatalf("the transaction failed before its commit: %v", err)
	}
	if _, err := s.write.ExecContext(ctx, `INSERT INTO t (v) VALUES ('after')`); err != nil {
		t.Fatalf("the write after a failed commit: %v", err)
	}
	if n := committed(t, other); n != 1 {
		t.Errorf("%d rows committed, want 1 (only the write after the failure)", n)
	}
}

// TestWaitCommitted: waitCommitted commits the open transaction holding a
// post that returned early, and returns the error of a commit that lost
// it: its own commit's, or that of a commit another post ran first.
func TestWaitCommitted(t *testing.T) {
	s, other := mustOpenStore(t, time.Hour)
	ctx := context.Background()
	var lost atomic.Pointer[error]
	early := func(fn func(context.Context, *Store) error) {
		t.Helper()
		if err := s.runGroup(ctx, &groupOp{fn: fn, lost: func(err error) { lost.Store(&err) }}); err != nil {
			t.Fatal(err)
		}
	}
	early(func(_ context.Context, tx *Store) error {
		_, err := tx.write.ExecContext(ctx, `INSERT INTO t (v) VALUES ('early')`)
		return err
	})
	if n := committed(t, other); n != 0 {
		t.Fatalf("%d rows committed after the early post, want 0", n)
	}
	if err := s.waitCommitted(ctx, &lost); err != nil {
		t.Fatal(err)
	}
	if n := committed(t, other); n != 1 {
		t.Fatalf("%d rows committed after the wait, want 1", n)
	}

	mustDeferredKey(t, s)
	early(orphan)
	if err := s.waitCommitted(ctx, &lost); err == nil || lost.Load() == nil {
		t.Fatalf("waiting for a failing commit returned %v (lost told: %v), want its error", err, lost.Load() != nil)
	}
	lost.Store(nil)
	early(orphan)
	if err := post(s, "commits first", false, make(chan error, 1)); err == nil {
		t.Fatal("the post that committed a failing transaction returned no error")
	}
	if err := s.waitCommitted(ctx, &lost); err == nil || lost.Load() == nil || !errors.Is(err, *lost.Load()) {
		t.Fatalf("waiting after another post's failed commit returned %v, want the error lost was told", err)
	}
}

// TestSettleWaitsForCommitInProgress: a read that settles while the open
// transaction is being committed waits for that commit, rather than read
// before it: a post that returned early may already have woken its reader
// (a reply handed to its call), which must then find it.
func TestSettleWaitsForCommitInProgress(t *testing.T) {
	s, other := mustOpenStore(t, time.Hour)
	if err := post(s, "early", true, make(chan error, 1)); err != nil {
		t.Fatal(err)
	}
	committing, release := make(chan struct{}), make(chan struct{})
	commit := s.open.commit
	s.open.commit = func() error {
		close(committing)
		<-release
		return commit()
	}
	go s.flushOpen()
	<-committing
	seen := make(chan int, 1)
	go func() {
		s.settle()
		var n int
		if err := other.QueryRow(`SELECT COUNT(*) FROM t`).Scan(&n); err != nil {
			n = -1
		}
		seen <- n
	}()
	select {
	case n := <-seen:
		t.Fatalf("settle returned during the commit, seeing %d rows", n)
	case <-time.After(200 * time.Millisecond): // settle waits, as it should
	}
	close(release)
	if n := <-seen; n != 1 {
		t.Errorf("settle returned, seeing %d rows; want the early post's", n)
	}
}

// failingPost inserts v into t and then fails with an error of no code,
// in a post that returns early; a loss is reported on lost.
func failingPost(s *Store, v string, lost chan<- error) error {
	op := insertOp(v, func() error { return errors.New("no") })
	op.lost = func(err error) { lost <- err }
	return s.runGroup(context.Background(), op)
}

// mustCommitted checks that other sees the values of t want (sorted,
// joined by commas), and that no post was told it was lost.
func mustCommitted(t *testing.T, other *sql.DB, want string, lost <-chan error) {
	t.Helper()
	var got string
	if err := other.QueryRow(`SELECT group_concat(v, ',') FROM (SELECT v FROM t ORDER BY v)`).Scan(&got); err != nil || got != want {
		t.Errorf("committed %q (%v), want %s", got, err, want)
	}
	if len(lost) != 0 {
		t.Errorf("a post was told it was lost: %v", <-lost)
	}
}

// TestEarlyPostAloneFails: a post that returns early, alone in the
// transaction begun for it, fails after a write with an error of no code:
// the transaction is rolled back whole, nobody is told of a loss, and the
// next posts commit as usual.
func TestEarlyPostAloneFails(t *testing.T) {
	s, other := mustOpenStore(t, time.Hour)
	lost := make(chan error, 2)
	if err := failingPost(s, "failed", lost); err == nil || err.Error() != "no" {
		t.Fatalf("the failing post returned %v, want its own error", err)
	}
	if s.open != nil || s.unsettled.Load() {
		t.Fatal("the transaction of the failed post is still open")
	}
	if err := post(s, "early", true, lost); err != nil {
		t.Fatal(err)
	}
	if err := post(s, "waits", false, lost); err != nil {
		t.Fatal(err)
	}
	mustCommitted(t, other, "early,waits", lost)
}

// TestEarlyPostConflictInOpenTransaction: a post that fails with a coded
// error (a constraint, backed out alone) in a transaction holding an
// earlier post that returned early leaves it be: the earlier post
// commits; and a post that fails so alone in a new transaction does not
// leave it open.
func TestEarlyPostConflictInOpenTransaction(t *testing.T) {
	s, other := mustOpenStore(t, time.Hour)
	lost := make(chan error, 2)
	if err := post(s, "early", true, lost); err != nil {
		t.Fatal(err)
	}
	conflict := func() error {
		op := insertOp("early", nil)
		op.lost = func(err error) { lost <- err }
		return s.runGroup(context.Background(), op)
	}
	if err := conflict(); mcpgate.ErrorCode(err) != mcpgate.ECONFLICT {
		t.Fatalf("the conflicting post returned %v, want ECONFLICT", err)
	}
	if s.open == nil {
		t.Fatal("the conflict ended the open transaction")
	}
	if err := post(s, "waits", false, lost); err != nil {
		t.Fatal(err)
	}
	mustCommitted(t, other, "early,waits", lost)
	if err := conflict(); mcpgate.ErrorCode(err) != mcpgate.ECONFLICT || s.open != nil {
		t.Fatalf("alone, the conflicting post returned %v, open transaction %v", err, s.open)
	}
}

// TestEarlyPostFailsInOpenTransaction: a post that fails with an error of
// no code in a transaction holding an earlier post that returned early
// leaves it in doubt: it is rolled back whole, the earlier post is told
// it was lost, and the next posts commit.
func TestEarlyPostFailsInOpenTransaction(t *testing.T) {
	s, other := mustOpenStore(t, time.Hour)
	lost := make(chan error, 2)
	if err := post(s, "early", true, lost); err != nil {
		t.Fatal(err)
	}
	if err := failingPost(s, "failed", lost); err == nil || err.Error() != "no" {
		t.Fatalf("the failing post returned %v, want its own error", err)
	}
	select {
	case err := <-lost:
		if !strings.Contains(err.Error(), "no") {
			t.Errorf("the early post was told %v", err)
		}
	default:
		t.Fatal("the early post was not told it was lost")
	}
	if err := post(s, "waits", false, lost); err != nil {
		t.Fatal(err)
	}
	mustCommitted(t, other, "waits", lost)
}

// mustMessageStore is a Store with group commit on a database of the
// product's schema, whose open transaction commits by itself only after
// an hour, holding a chat_message of agent weather on channel ch-1, and a
// second connection to its database; the store's Violation maps no
// error.
func mustMessageStore(t *testing.T) (*Store, *sql.DB, *mcpgate.Message) {
	t.Helper()
	ctx := context.Background()
	db := mustMigratedDB(t)
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(`PRAGMA journal_mode = WAL`); err != nil {
		t.Fatal(err)
	}
	s := &Store{read: db, write: db, d: groupDialect{}, readDB: db, writeDB: db, commitDelay: time.Hour}
	s.cacheStatements()
	s.group, s.seqs = &batch.Queue[*groupOp]{}, &seqBlocks{}
	u := &mcpgate.User{Name: "alice", Source: mcpgate.SourceCLI}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.CreateUser(ctx, u))
	must(s.CreateAgent(ctx, &mcpgate.Agent{ID: "weather", Name: "weather", OwnerID: u.ID, Source: mcpgate.SourceAPI}))
	must(s.CreateChannel(ctx, &mcpgate.Channel{ID: "ch-1", AgentID: "weather", Skill: "chat", Owner: "user:" + u.ID}))
	chat := &mcpgate.Message{ChannelID: "ch-1", Type: mcpgate.MessageChat, Sender: "user:u", Body: mcpgate.MessageBody{Text: "ping"}}
	must(s.PostMessage(ctx, chat))
	var seq int
	var name, path string
	must(db.QueryRow(`PRAGMA database_list`).Scan(&seq, &name, &path))
	other, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	must(err)
	t.Cleanup(func() { _ = other.Close() })
	return s, other, chat
}

// TestClaimedReplyReturnsBeforeCommit: a reply posted through
// PostClaimedReply returns once its statements ran, before its commit,
// which the next read of messages runs; until then other connections do
// not see it.
func TestClaimedReplyReturnsBeforeCommit(t *testing.T) {
	s, other, chat := mustMessageStore(t)
	ctx := context.Background()
	reply := &mcpgate.Message{ChannelID: "ch-1", AgentID: "weather", Skill: "chat", Type: mcpgate.MessageReply,
		InReplyTo: chat.ID, Sender: "agent:weather", Body: mcpgate.MessageBody{Text: "pong"}}
	if err := s.PostClaimedReply(ctx, reply, func(err error) { t.Errorf("the reply was lost: %v", err) }); err != nil {
		t.Fatal(err)
	}
	replies := func() int {
		var n int
		if err := other.QueryRow(`SELECT COUNT(*) FROM messages WHERE type = 'agent_reply'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := replies(); n != 0 || s.open == nil {
		t.Fatalf("after PostClaimedReply returned: %d replies committed, transaction open %v; want 0, open", n, s.open != nil)
	}
	got, err := s.FindReply(ctx, chat.ID)
	if err != nil || got.ID != reply.ID {
		t.Fatalf("FindReply = %v, %v", got, err)
	}
	if n := replies(); n != 1 {
		t.Errorf("after a read: %d replies committed, want 1", n)
	}
}
