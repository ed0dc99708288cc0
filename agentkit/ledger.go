package agentkit

import (
	"context"
	"sync"
)

// status is what a worker knows about a message ID.
type status int

// The states of a message in the ledger.
const (
	unseen    status = iota
	running          // a handler runs for it
	done             // handled: a duplicate only needs acknowledging again
	cancelled        // the caller gave up before or while it ran
)

// entry is the ledger's record of one message.
type entry struct {
	status status
	cancel context.CancelFunc // while running
}

// ledger remembers the last messages a worker saw, so that redelivered
// duplicates (same ID) are dropped and cancel messages find their handler.
// order holds the IDs oldest first from head on; the oldest settled
// entry, which add forgets, is nearly always the one at head, so that
// forgetting it moves head rather than every later ID.
type ledger struct {
	mu    sync.Mutex
	max   int
	byID  map[string]*entry
	order []string
	head  int
}

// newLedger remembers about max messages.
func newLedger(max int) *ledger {
	return &ledger{max: max, byID: map[string]*entry{}}
}

// begin records id as running with cancel unless it was seen; it returns
// the status it had.
func (l *ledger) begin(id string, cancel context.CancelFunc) status {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e, ok := l.byID[id]; ok {
		return e.status
	}
	l.add(id, &entry{status: running, cancel: cancel})
	return unseen
}

// finish records id as handled, unless it was cancelled.
func (l *ledger) finish(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e, ok := l.byID[id]; ok && e.status == running {
		e.status, e.cancel = done, nil
	}
}

// cancel cancels id's handler, or marks id so that it never starts.
func (l *ledger) cancel(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e, ok := l.byID[id]
	if !ok {
		l.add(id, &entry{status: cancelled})
		return
	}
	if e.status == running {
		e.cancel()
	}
	if e.status != done {
		e.status, e.cancel = cancelled, nil
	}
}

// state returns id's status.
func (l *ledger) state(id string) status {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e, ok := l.byID[id]; ok {
		return e.status
	}
	return unseen
}

// add records e and forgets the oldest settled entries beyond max.
func (l *ledger) add(id string, e *entry) {
	l.byID[id] = e
	l.order = append(l.order, id)
	for i := l.head; len(l.byID) > l.max && i < len(l.order); {
		old := l.order[i]
		if l.byID[old].status == running {
			i++
			continue
		}
		delete(l.byID, old)
		l.drop(i)
	}
	l.compact()
}

// drop removes the ID at i of order.
func (l *ledger) drop(i int) {
	if i == l.head {
		l.order[i] = ""
		l.head++
		return
	}
	l.order = append(l.order[:i], l.order[i+1:]...)
}

// compact moves the IDs down to the start of order once more than half
// of it lies before head, so that order stays within twice the entries.
func (l *ledger) compact() {
	if l.head <= len(l.order)/2 {
		return
	}
	n := copy(l.order, l.order[l.head:])
	clear(l.order[n:])
	l.order, l.head = l.order[:n], 0
}
