// Package audit writes the audit log: one row per tools/call, queued by
// the pipeline without blocking and written in batches by a background
// goroutine, with sensitive argument values redacted before they are
// stored.
//
// The package must not import the transport, a backend, the pipeline or a
// concrete store: it writes through the small Store interface below.
package audit

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpgate/mcpgate"
)

// Store is where the log goes.
type Store interface {
	InsertCalls(ctx context.Context, calls []*mcpgate.CallRecord) error
}

// Dropper counts records dropped because the queue was full.
type Dropper interface {
	AuditDropped()
}

// Options configure a Log.
type Options struct {
	Store Store // required
	// QueueSize bounds the records waiting to be written; 0 means 8192.
	QueueSize int
	// BatchSize is the most records one write takes; 0 means 500.
	BatchSize int
	// FlushEvery is how long a record may wait for its batch to fill; 0
	// means 500 ms.
	FlushEvery time.Duration
	Dropped    Dropper // optional
	Logger     *slog.Logger
}

// entry is one queued record with what finishing it needs.
type entry struct {
	rec     *mcpgate.CallRecord
	tool    *mcpgate.Tool
	decoded any // rec.Arguments decoded, or nil
	res     *mcpgate.Result
}

// Log is the audit log's writer. Audit queues; Run writes; Close flushes.
type Log struct {
	opts  Options
	queue chan entry
	// wake tells Run that a batch is waiting, so that the writer wakes once
	// a batch rather than once a call.
	wake    chan struct{}
	redact  *redactor               // the writer's own
	hasher  mcpgate.ArgumentsHasher // the writer's own
	sized   []byte                  // the writer's buffer for measuring results
	stop    chan struct{}
	done    chan struct{}
	once    sync.Once
	drops   atomic.Int64
	lastLog atomic.Int64 // unix seconds of the last "dropped" warning
}

// New returns a Log; call Run in a goroutine, and Close at shutdown.
func New(opts *Options) *Log {
	l := &Log{opts: *opts, wake: make(chan struct{}, 1), redact: newRedactor(), stop: make(chan struct{}), done: make(chan struct{})}
	if l.opts.QueueSize <= 0 {
		l.opts.QueueSize = 8192
	}
	if l.opts.BatchSize <= 0 {
		l.opts.BatchSize = 500
	}
	if l.opts.FlushEvery <= 0 {
		l.opts.FlushEvery = 500 * time.Millisecond
	}
	if l.opts.Logger == nil {
		l.opts.Logger = slog.New(slog.DiscardHandler)
	}
	l.queue = make(chan entry, l.opts.QueueSize)
	return l
}

// Audit queues a record without ever blocking: when the queue is full the
// record is dropped, counted, and a warning logged at most once a minute.
// It wakes the writer only when a batch is waiting; otherwise the writer
// comes by every FlushEvery. decoded, when not nil, is rec.Arguments
// decoded with numbers as json.Number; the log may change it.
func (l *Log) Audit(rec *mcpgate.CallRecord, tool *mcpgate.Tool, decoded any, res *mcpgate.Result) {
	select {
	case l.queue <- entry{rec, tool, decoded, res}:
		if len(l.queue) >= l.opts.BatchSize {
			l.nudge()
		}
	default:
		l.dropped()
	}
}

// nudge wakes the writer unless it is already woken.
func (l *Log) nudge() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// dropped counts a dropped record.
func (l *Log) dropped() {
	n := l.drops.Add(1)
	if l.opts.Dropped != nil {
		l.opts.Dropped.AuditDropped()
	}
	now := time.Now().Unix()
	if last := l.lastLog.Load(); now-last >= 60 && l.lastLog.CompareAndSwap(last, now) {
		l.opts.Logger.Warn("audit log queue full: call records dropped", "dropped_total", n)
	}
}

// Queued returns how many records wait to be written.
func (l *Log) Queued() int { return len(l.queue) }

// Dropped returns how many records were dropped so far.
func (l *Log) Dropped() int64 { return l.drops.Load() }

// Run writes queued records in batches until Close, then writes what is
// left. It wakes every FlushEvery, or sooner when a batch is waiting, and
// writes whatever is queued then.
func (l *Log) Run() {
	defer close(l.done)
	tick := time.NewTicker(l.opts.FlushEvery)
	defer tick.Stop()
	batch := make([]*mcpgate.CallRecord, 0, l.opts.BatchSize)
	for {
		select {
		case <-l.wake:
		case <-tick.C:
		case <-l.stop:
			l.flush(batch, -1)
			return
		}
		batch = l.flush(batch, len(l.queue))
	}
}

// flush writes n queued records (every record, until the queue is empty,
// when n is negative) in batches and returns the batch emptied.
func (l *Log) flush(batch []*mcpgate.CallRecord, n int) []*mcpgate.CallRecord {
	for ; n != 0; n-- {
		var e entry
		select {
		case e = <-l.queue:
		default:
			return l.write(batch)
		}
		if batch = append(batch, l.finish(e)); len(batch) >= l.opts.BatchSize {
			batch = l.write(batch)
		}
	}
	return l.write(batch)
}

// write stores a batch and returns it emptied. A failed write is logged
// and its records are lost: the log must never hold calls up.
func (l *Log) write(batch []*mcpgate.CallRecord) []*mcpgate.CallRecord {
	if len(batch) == 0 {
		return batch
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := l.opts.Store.InsertCalls(ctx, batch); err != nil {
		l.opts.Logger.Error("audit log write failed", "records", len(batch), "err", err)
	}
	clear(batch)
	return batch[:0]
}

// Close stops Run after it has written every queued record. Records
// queued after Close are dropped.
func (l *Log) Close() error {
	l.once.Do(func() { close(l.stop) })
	<-l.done
	return nil
}

// finish completes a record off the hot path: the arguments' hash when the
// pipeline did not compute one, the redacted arguments, the result's size.
func (l *Log) finish(e entry) *mcpgate.CallRecord {
	rec := e.rec
	var schema json.RawMessage
	if e.tool != nil {
		schema = e.tool.InputSchema
	}
	if v, ok := e.arguments(); ok {
		if rec.ArgsHash == "" {
			rec.ArgsHash, _ = l.hasher.Hash(rec.Tool, v)
		}
		rec.Arguments = l.redact.redactDecoded(rec.Arguments, v, schema) // after the hash: it changes v
	} else {
		rec.Arguments = nil
	}
	if e.res != nil {
		rec.ResultBytes = l.resultSize(e.res)
		if e.res.Failure != "" && rec.Error == "" {
			rec.Error = failureText(e.res)
		}
	}
	return rec
}

// maxKeptBuffer bounds the buffer the writer keeps for measuring results:
// a larger result's buffer is let go after it.
const maxKeptBuffer = 64 << 10

// resultSize returns the length of res's JSON, or 0 when it does not
// encode.
func (l *Log) resultSize(res *mcpgate.Result) int {
	if len(res.Raw) > 0 {
		return len(res.Raw)
	}
	b, err := res.AppendJSON(l.sized[:0])
	if cap(b) <= maxKeptBuffer {
		l.sized = b
	}
	if err != nil {
		return 0
	}
	return len(b)
}

// arguments returns the record's arguments decoded: as the pipeline
// decoded them when it did, else decoded now.
func (e *entry) arguments() (any, bool) {
	if e.decoded != nil {
		return e.decoded, true
	}
	return decode(e.rec.Arguments)
}

// failureText is the text of a result whose backend could not serve the
// call (a timeout, an API that could not be reached), for the record's
// error message.
func failureText(res *mcpgate.Result) string {
	var texts []string
	for _, c := range res.Content {
		if c.Type == "text" && c.Text != "" {
			texts = append(texts, c.Text)
		}
	}
	return strings.Join(texts, "\n")
}
