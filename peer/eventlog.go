package peer

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/mcpgate/mcpgate"
)

// Defaults of EventLogOptions.
const (
	// DefaultEventQueue bounds the events waiting to be written.
	DefaultEventQueue = 8192
	// DefaultEventBatch is the most events one write takes.
	DefaultEventBatch = 256
	// DefaultEventKeep is how long events stay stored.
	DefaultEventKeep = 10 * time.Minute
	// eventCloseWait bounds the last write at Close.
	eventCloseWait = 5 * time.Second
)

// EventLogOptions configure an EventLog. Store is required.
type EventLogOptions struct {
	Store mcpgate.StreamEventStore
	// Logger receives failed writes and drops; nil means slog.Default().
	Logger *slog.Logger
	// QueueSize, BatchSize and Keep: DefaultEventQueue, DefaultEventBatch
	// and DefaultEventKeep when zero.
	QueueSize, BatchSize int
	Keep                 time.Duration
}

// EventLog writes the SSE events of this replica's streams to the store
// behind the sends, so that a resumption on another replica finds them
// after this one died without handing its streams over (kill -9). Record
// never blocks: an event that finds the queue full is dropped and counted.
// One writer takes whatever is queued, up to a batch, in one transaction,
// so that events wait for one write at most: what a kill -9 loses is what
// was queued or being written then. It is safe for concurrent use.
type EventLog struct {
	store   mcpgate.StreamEventStore
	logger  *slog.Logger
	queue   chan logged
	batch   int
	keep    time.Duration
	dropped atomic.Int64
	stop    chan struct{}
	done    chan struct{}
}

// logged is a queued event and the session's floor when it was sent.
type logged struct {
	ev    *mcpgate.StreamEvent
	floor int64
}

// NewEventLog returns an EventLog and starts its writer; Close stops it.
func NewEventLog(opts *EventLogOptions) *EventLog {
	l := &EventLog{store: opts.Store, logger: opts.Logger, batch: opts.BatchSize, keep: opts.Keep,
		stop: make(chan struct{}), done: make(chan struct{})}
	if l.logger == nil {
		l.logger = slog.Default()
	}
	if l.batch <= 0 {
		l.batch = DefaultEventBatch
	}
	if l.keep <= 0 {
		l.keep = DefaultEventKeep
	}
	size := opts.QueueSize
	if size <= 0 {
		size = DefaultEventQueue
	}
	l.queue = make(chan logged, size)
	go l.run()
	return l
}

// Record queues ev to be stored, with keepFrom, the position of the oldest
// event of ev's session that this replica still keeps: the stored ones
// before it go with the batch. It never blocks.
func (l *EventLog) Record(ev *mcpgate.StreamEvent, keepFrom int64) {
	select {
	case l.queue <- logged{ev: ev, floor: keepFrom}:
	default:
		l.dropped.Add(1)
	}
}

// Events returns the stored events of the stream of session whose sequence
// number is at least from, in order.
func (l *EventLog) Events(ctx context.Context, session, stream string, from uint64) ([]*mcpgate.StreamEvent, error) {
	return l.store.StreamEvents(ctx, session, stream, from)
}

// Dropped returns how many events found the queue full.
func (l *EventLog) Dropped() int64 { return l.dropped.Load() }

// Close writes what is queued and stops the writer.
func (l *EventLog) Close() error {
	close(l.stop)
	<-l.done
	return nil
}
