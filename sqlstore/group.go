package sqlstore

import (
	"context"
	"fmt"
)

// Group commit. On an engine with one writer connection (SQLite) every
// write transaction waits for the one before it, and each pays a BEGIN and
// a COMMIT that writes the pages it changed to the WAL. Posts that arrive
// while the writer is busy are therefore run together: the first to find
// no batch running leads one, taking every post queued by then, and runs
// them in one transaction, each inside a savepoint, so that one that fails
// is rolled back alone and returns its own error; then it commits them all
// at once, and each post returns when the transaction holding it
// committed (but for a post handed over in process, which may return
// before: open.go). The posts of one batch take their seqs in turn and
// become visible together, so the ordering of Seq holds (see message.go).
// When it is done the leader hands the lead to the first post queued
// since (package batch).

// GroupCommitter is implemented by a Dialect whose engine has a single
// writer connection; the Store then commits concurrent posts together.
type GroupCommitter interface {
	GroupsCommits() bool
}

// groupsCommits reports whether d's engine should commit posts together.
func groupsCommits(d Dialect) bool {
	g, ok := d.(GroupCommitter)
	return ok && g.GroupsCommits()
}

// groupOp is one post waiting for a batch, or, with no fn, a flush: a
// request to commit the open transaction (open.go).
type groupOp struct {
	agentID string // the agent whose seq fn takes, if any (seqblock.go)
	fn      func(tx *Store) error
	// lost, when set, lets the post return once it ran, before the
	// transaction holding it commits (open.go), and is told if that
	// commit fails.
	lost func(error)
	err  error
	pnc  any // a panic of fn, raised again in its caller
}

// early reports whether op may return before its transaction commits.
func (op *groupOp) early() bool { return op.lost != nil }

// runPost runs op's fn as withTx does, in a transaction it may share with
// other posts on an engine that commits them together; fn takes a seq of
// op's agent, when it names one. On such an engine, an op with lost may
// return before its commit.
func (s *Store) runPost(ctx context.Context, op *groupOp) error {
	if s.group == nil || s.inTx {
		return s.withTx(ctx, op.fn)
	}
	return s.runGroup(ctx, op)
}

// runGroup queues op for a batch and returns its outcome once it ran.
func (s *Store) runGroup(ctx context.Context, op *groupOp) error {
	s.group.Run(op, func(ops []*groupOp) { s.lead(ctx, ops) })
	return op.outcome()
}

// outcome returns op's error, raising its panic again.
func (op *groupOp) outcome() error {
	if op.pnc != nil {
		panic(op.pnc)
	}
	return op.err
}

// lead runs one batch of the queued posts, its leader's among them,
// setting each one's outcome. A post alone, with no transaction open,
// runs as withTx would; any other batch runs in the open transaction.
func (s *Store) lead(ctx context.Context, ops []*groupOp) {
	if s.open != nil || len(ops) > 1 || ops[0].early() {
		s.runOpen(ctx, ops)
		return
	}
	if ops[0].fn == nil {
		return // a flush, with nothing open
	}
	if s.seqs != nil {
		s.reserveSeqs(context.WithoutCancel(ctx), ops)
	}
	ops[0].run(func(fn func(*Store) error) error { return s.withTx(ctx, fn) })
}

// run calls op's fn through with, keeping its error or panic.
func (op *groupOp) run(with func(func(*Store) error) error) {
	defer func() {
		if p := recover(); p != nil {
			op.pnc = p
		}
	}()
	op.err = with(op.fn)
}

// runSaved runs op inside a savepoint of s, a transaction, rolling back
// to it when op fails. It returns an error only when the savepoint itself
// fails: then the transaction is no good for the others either.
func (s *Store) runSaved(ctx context.Context, op *groupOp) error {
	if _, err := s.write.ExecContext(ctx, `SAVEPOINT post`); err != nil {
		return fmt.Errorf("savepoint: %w", err)
	}
	op.run(func(fn func(*Store) error) error { return fn(s) })
	if op.err != nil || op.pnc != nil {
		if _, err := s.write.ExecContext(ctx, `ROLLBACK TO post`); err != nil {
			return fmt.Errorf("roll back to savepoint: %w", err)
		}
	}
	if _, err := s.write.ExecContext(ctx, `RELEASE post`); err != nil {
		return fmt.Errorf("release savepoint: %w", err)
	}
	return nil
}
