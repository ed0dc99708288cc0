// Package peer carries messages between the MCP transports of the
// gateway's replicas: what one replica holds in memory (a call waiting for
// its client's answer, a call in flight, an SSE stream and its replay) and
// another replica is asked about by a client's request, since the load
// balancer may send any request anywhere.
//
// A message is stored (mcpgate.PeerMessageStore), then its recipient is
// woken through the bus (PostgreSQL LISTEN/NOTIFY between replicas). The
// recipient reads what is new from the store when woken, every poll
// interval as a fallback, and whenever the bus reconnects (the bus wakes
// every watcher then), so a message sent while its listening connection was
// down is still delivered, late rather than never. Each message is
// delivered once per replica; messages are deleted by age.
//
// An EventLog writes the SSE events of this replica's streams to the store
// behind the sends, so that another replica can replay them after this one
// died without handing its streams over.
//
// The package must not import any mcpgate package other than the root one.
package peer

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate"
)

// Defaults of Options.
const (
	// DefaultPoll is how often the store is read without a wake-up.
	DefaultPoll = 2 * time.Second
	// DefaultLookback is how far back a poll reads: it bounds the clock
	// skew between replicas that delivery tolerates.
	DefaultLookback = 30 * time.Second
	// DefaultKeep is how long messages stay stored.
	DefaultKeep = 2 * time.Minute
	// slack is how far before the newest message seen a wake-up reads, for
	// messages whose transactions committed out of order.
	slack = 5 * time.Second
	// sweepEvery is how often old messages are deleted.
	sweepEvery = time.Minute
)

// Signals wakes the replicas: bus.Bus.
type Signals interface {
	// Watch returns a channel signalled whenever Signal is called for
	// topic on any replica, and whenever signals may have been lost.
	Watch(ctx context.Context, topic string) <-chan struct{}
	// Signal wakes topic's watchers on every replica.
	Signal(ctx context.Context, topic string)
}

// Options configure Peers. Store and Signals are required.
type Options struct {
	Store   mcpgate.PeerMessageStore
	Signals Signals
	// Logger receives failures to read and sweep; nil means slog.Default().
	Logger *slog.Logger
	// Poll, Lookback and Keep: DefaultPoll, DefaultLookback and DefaultKeep
	// when zero.
	Poll, Lookback, Keep time.Duration
}

// Peers is this replica's end of the messages between replicas. It is safe
// for concurrent use.
type Peers struct {
	store   mcpgate.PeerMessageStore
	signals Signals
	logger  *slog.Logger
	id      string
	out     chan []byte

	poll, lookback, keep time.Duration
	stop                 context.CancelFunc
	done                 chan struct{}

	mu     sync.Mutex
	seen   map[string]time.Time // delivered message ids, by creation time
	newest time.Time
}

// New returns this replica's Peers, with a new random instance id, and
// starts receiving. Close stops it.
func New(opts *Options) *Peers {
	p := &Peers{store: opts.Store, signals: opts.Signals, logger: opts.Logger, id: newInstance(),
		out: make(chan []byte, 256), poll: opts.Poll, lookback: opts.Lookback, keep: opts.Keep,
		done: make(chan struct{}), seen: map[string]time.Time{}}
	p.setDefaults()
	ctx, stop := context.WithCancel(context.Background())
	p.stop = stop
	wake := p.watch(ctx)
	go p.run(ctx, wake)
	return p
}

func (p *Peers) setDefaults() {
	if p.logger == nil {
		p.logger = slog.Default()
	}
	if p.poll <= 0 {
		p.poll = DefaultPoll
	}
	if p.lookback <= 0 {
		p.lookback = DefaultLookback
	}
	if p.keep <= 0 {
		p.keep = DefaultKeep
	}
}

// newInstance returns 12 random hex digits: every replica's instance id
// has that length, so an id it prefixes can be split without a separator.
func newInstance() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Instance returns this replica's id, to which other replicas Send.
func (p *Peers) Instance() string { return p.id }

// Messages returns the channel on which the bodies of the messages for this
// replica arrive, each once. It is closed by Close.
func (p *Peers) Messages() <-chan []byte { return p.out }

// Send stores body for replica to ("" for every other replica) and wakes
// it.
func (p *Peers) Send(ctx context.Context, to string, body []byte) error {
	if err := p.store.PutPeerMessage(ctx, &mcpgate.PeerMessage{From: p.id, To: to, Body: body}); err != nil {
		return err
	}
	p.signals.Signal(ctx, topic(to))
	return nil
}

// Collect returns the bodies of the messages sent to key that are still
// kept, oldest first: what a replica leaves for whichever replica needs it
// later, such as a stream's replay handed over before it exits.
func (p *Peers) Collect(ctx context.Context, key string) ([][]byte, error) {
	msgs, err := p.store.PeerMessages(ctx, key, time.Now().Add(-p.keep))
	if err != nil {
		return nil, err
	}
	var out [][]byte
	for _, m := range msgs {
		if m.To == key {
			out = append(out, m.Body)
		}
	}
	return out, nil
}

// Close stops receiving and closes Messages.
func (p *Peers) Close() error {
	p.stop()
	<-p.done
	return nil
}

// topic is the bus topic that wakes replica to ("" for all).
func topic(to string) string {
	if to == "" {
		return "peer:*"
	}
	return "peer:" + to
}
