package sqlstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/mcpgate/mcpgate"
)

// Group commit. On an engine with one writer connection (SQLite) every
// write transaction waits for the one before it, and each pays a BEGIN and
// a COMMIT that writes the pages it changed to the WAL. Posts that arrive
// while the writer is busy are therefore run together: the first to find
// no batch running leads one, taking every post queued by then, and runs
// them in one transaction (one that fails for a reason of its own is left
// out alone, see runInBatch); then it commits them all at once, and each
// post returns when the transaction holding it committed (but for a post
// handed over in process, which may return before: open.go). The posts of
// one batch take their seqs in turn and become visible together, so the
// ordering of Seq holds (see message.go). When it is done the leader hands
// the lead to the first post queued since (package batch).

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
	agentID string          // the agent whose seq fn takes, if any (seqblock.go)
	ctx     context.Context // the post's (runGroup sets it)
	fn      func(ctx context.Context, tx *Store) error
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
		return s.withTx(ctx, func(tx *Store) error { return op.fn(ctx, tx) })
	}
	return s.runGroup(ctx, op)
}

// runGroup queues op, whose context is ctx, for a batch and returns its
// outcome once it ran.
func (s *Store) runGroup(ctx context.Context, op *groupOp) error {
	op.ctx = ctx
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
	op := ops[0]
	op.run(func() error { return s.withTx(op.ctx, func(tx *Store) error { return op.fn(op.ctx, tx) }) })
}

// run calls fn, which runs op's, keeping its error or panic as op's.
func (op *groupOp) run(fn func() error) {
	defer func() {
		if p := recover(); p != nil {
			op.pnc = p
		}
	}()
	op.err = fn()
}

// runInBatch runs op in s, the transaction of a batch, with no savepoint
// of its own (which would be two statements, and a copy of every page op
// changes). That is safe because of what a post is: it fails with a coded
// error (mcpgate.ErrorCode: a conflict, a channel or a message not found,
// its own fault) only from a read, or from a write that broke a
// constraint, which SQLite backs out alone, leaving the transaction as it
// was; and before that it wrote nothing but, maybe, a seq reservation,
// which the seq blocks keep using. Its statements run without its
// context's cancellation, checked once before them, so that no statement
// of a post fails for it halfway. Any other failure, or a panic, leaves the
// transaction in doubt: runInBatch then returns an error, and the batch
// must be rolled back whole.
func (s *Store) runInBatch(op *groupOp) error {
	if err := op.ctx.Err(); err != nil {
		op.err = err // before any statement: nothing to undo
		return nil
	}
	op.run(func() error { return op.fn(context.WithoutCancel(op.ctx), s) })
	switch {
	case op.pnc != nil:
		return errBatchPanicked
	case mcpgate.ErrorCode(op.err) == mcpgate.EINTERNAL:
		return fmt.Errorf("a post of the transaction failed: %w", op.err)
	}
	return nil
}

// errBatchPanicked fails the posts of a batch rolled back because one of
// them panicked (which panics again in its own caller).
var errBatchPanicked = errors.New("a post of the transaction panicked")
