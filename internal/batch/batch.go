// Package batch runs together the work that arrives while a batch of it is
// running: the first caller to find no batch running leads one, taking
// everything queued by then, and when it is done hands the lead to the
// first caller queued meanwhile. It is how the SQLite store commits posts
// together (group commit) and how the PostgreSQL broker sends
// notifications together.
//
// It imports only the standard library.
package batch

import "sync"

// A Queue gathers the work of concurrent callers into batches. The zero
// Queue is ready to use.
type Queue[T any] struct {
	mu      sync.Mutex
	queue   []*entry[T]
	leading bool
	batches int
	// Hold, when set (tests), is called by a leader before it takes the
	// queue, so that a test can let the queue fill first.
	Hold func()
}

// entry is one caller's work waiting for a batch.
type entry[T any] struct {
	v    T
	done chan bool // receives true when the caller is to lead, false when its batch ran
}

// Run queues v and returns once a batch holding v ran: either another
// caller's, or its own, when it finds no batch running or is handed the
// lead. The leader calls run with the batch, v among it, the oldest first;
// run must not panic, and tells each item its outcome through the item
// itself (T is a pointer type in practice).
func (q *Queue[T]) Run(v T, run func(batch []T)) {
	e := &entry[T]{v: v, done: make(chan bool, 1)}
	if !q.enqueue(e) {
		if lead := <-e.done; !lead {
			return
		}
	}
	entries := q.take()
	batch := make([]T, len(entries))
	for i, o := range entries {
		batch[i] = o.v
	}
	run(batch)
	q.handOver()
	for _, o := range entries {
		if o != e {
			o.done <- false
		}
	}
}

// enqueue queues e and reports whether its caller is to lead a batch now.
func (q *Queue[T]) enqueue(e *entry[T]) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.queue = append(q.queue, e)
	if q.leading {
		return false
	}
	q.leading = true
	return true
}

// take returns the queued entries for a batch.
func (q *Queue[T]) take() []*entry[T] {
	if q.Hold != nil {
		q.Hold()
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	entries := q.queue
	q.queue = nil
	q.batches++
	return entries
}

// handOver passes the lead to the first entry queued meanwhile, or gives
// it up when there is none.
func (q *Queue[T]) handOver() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.queue) == 0 {
		q.leading = false
		return
	}
	q.queue[0].done <- true
}

// Queued returns how many callers wait for a batch.
func (q *Queue[T]) Queued() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.queue)
}

// Batches returns how many batches ran, and whether one runs now.
func (q *Queue[T]) Batches() (n int, leading bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.batches, q.leading
}
