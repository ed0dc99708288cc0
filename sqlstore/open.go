package sqlstore

import (
	"cmp"
	"context"
	"fmt"
	"time"
)

// The open transaction. A message handed to an inbox stream in process
// (PostHanded) needs its row only for what comes after: the worker's reply
// names it, a claim or a renewal finds it. So such a post returns as soon
// as its statements ran in the writer's transaction, and the transaction
// is left open for what follows; so does a reply its call has already
// (PostClaimedReply). The next batch runs in it, and it commits when a
// post that waits for its commit runs in it, or a flush (a reply the
// caller could not hand over before it ran: PostReplyHanded runs it early,
// hands it over, then flushes), when it holds maxOpenPosts posts, or
// defaultCommitDelay after it was left open, whichever comes first. Seq order holds as with
// group commit: the one writer runs the posts in the order they took
// their seqs, and they become visible together.
//
// While the transaction is open it holds the writer's one connection, and
// the readers would see a handed message only once it committed: so any
// other write, and the reads of messages, commit it first (settle), and
// whoever was handed a message finds it there. If the commit fails, the
// posts that returned early are rolled back with it, and each one's lost
// is told, so that what waits on the message does not wait for ever.

// defaultCommitDelay is how long the open transaction waits for a post
// that commits it before it commits by itself (Store.commitDelay in tests).
const defaultCommitDelay = 10 * time.Millisecond

// maxOpenPosts is how many posts that returned early the open transaction
// holds at most before it commits.
const maxOpenPosts = 64

// openTx is the writer's transaction left open by posts that returned
// before it committed. Only the leader of a batch touches it.
type openTx struct {
	commit, abort func() error // end the transaction: commit it, or roll it back
	store         *Store       // the Store bound to the transaction
	missed        []string     // queries it ran that the writer's cache did not hold
	early         []*groupOp   // posts that returned before it committed
	flush         *time.Timer  // commits it the commit delay after it was left open
}

// runOpen runs ops in the open transaction, beginning one when none is
// open, and commits it unless every post of ops may return early and the
// transaction has room for them. A transaction left with no post that
// returned early commits at once. When a post leaves the transaction in
// doubt (runInBatch), it is rolled back whole: every post of ops fails,
// and those of earlier batches that returned early are told they were
// lost.
func (s *Store) runOpen(ctx context.Context, ops []*groupOp) {
	o, err := s.openTx()
	if err != nil {
		failAll(ops, err)
		return
	}
	if s.seqs != nil {
		// The transaction is every post's, not the leader's alone: the
		// leader's cancellation must not fail the others' reservations.
		o.store.reserveSeqs(context.WithoutCancel(ctx), ops)
	}
	early, wait := []*groupOp(nil), false
	for _, op := range ops {
		if op.fn == nil {
			wait = true // a flush
			continue
		}
		if err := o.store.runInBatch(op); err != nil {
			_ = s.endOpen(o.abort, err)
			failAll(ops, err)
			return
		}
		switch {
		case !op.early():
			wait = true
		case op.err == nil:
			early = append(early, op)
		}
	}
	n := len(o.early) + len(early)
	if wait || n == 0 || n >= maxOpenPosts {
		if err := s.endOpen(o.commit, nil); err != nil {
			failAll(ops, err)
		}
		return
	}
	s.leaveOpen(o, early)
}

// leaveOpen leaves o open with the posts early, which returned before it
// commits, setting the timer that commits it when it is the first.
func (s *Store) leaveOpen(o *openTx, early []*groupOp) {
	o.early = append(o.early, early...)
	if o.flush == nil {
		o.flush = time.AfterFunc(cmp.Or(s.commitDelay, defaultCommitDelay), s.flushOpen)
		s.unsettled.Store(true)
	}
}

// openTx returns the open transaction, beginning one when none is open.
func (s *Store) openTx() (*openTx, error) {
	if s.open != nil {
		return s.open, nil
	}
	tx, err := s.writeDB.BeginTx(context.Background(), nil)
	if err != nil {
		return nil, fmt.Errorf("begin transaction: %w", err)
	}
	o := &openTx{commit: tx.Commit, abort: tx.Rollback}
	o.store = s.txStore(tx, &o.missed)
	s.open = o
	return o, nil
}

// endOpen ends the open transaction by commit or abort (a rollback after
// cause) and returns the commit's error. When the transaction did not
// commit, the posts that returned early are told so, and the seq blocks
// are emptied, since reservations made in it are gone (seqblock.go).
func (s *Store) endOpen(end func() error, cause error) error {
	o := s.open
	s.open = nil
	if o.flush != nil {
		o.flush.Stop()
	}
	err := end()
	// Only once it ended: a reader that finds the flag set until then
	// waits for this batch (settle), and one that finds it clear reads
	// what the transaction committed.
	s.unsettled.Store(false)
	s.prepareMissed(context.Background(), o.missed)
	if cause == nil && err != nil {
		cause = fmt.Errorf("commit: %w", err)
	} else if cause == nil {
		return nil
	}
	if s.seqs != nil {
		s.seqs.drop()
	}
	s.inbox.forget()
	for _, op := range o.early {
		op.lost(cause)
	}
	return cause
}

// flushOpen commits the open transaction, if one is open, once no batch
// runs.
func (s *Store) flushOpen() {
	_ = s.runGroup(context.Background(), &groupOp{})
}

// settle commits the open transaction, if one is open, so that a read
// that follows sees every post that returned.
func (s *Store) settle() {
	if s.unsettled.Load() {
		s.flushOpen()
	}
}

// failAll sets err as the outcome of each of ops that has none.
func failAll(ops []*groupOp, err error) {
	for _, op := range ops {
		if op.err == nil && op.pnc == nil {
			op.err = err
		}
	}
}
