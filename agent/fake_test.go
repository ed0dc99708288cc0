package agent

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
)

// fakeBus is an in-memory Bus and Channels for the unit tests of this
// package; the integration tests use the real store and bus.
type fakeBus struct {
	mu       sync.Mutex
	channels map[string]*mcpgate.Channel
	msgs     []*mcpgate.Message
	acked    map[string]bool
	online   bool
	// flaps is how many more presence checks answer offline before the
	// answers are online again; checks counts the checks.
	flaps, checks int
	// finds counts the reads of channels.
	finds   int
	changed chan struct{} // closed and replaced on every post
}

func newFakeBus() *fakeBus {
	return &fakeBus{channels: map[string]*mcpgate.Channel{}, acked: map[string]bool{}, changed: make(chan struct{}), online: true}
}

func (f *fakeBus) CreateChannel(_ context.Context, c *mcpgate.Channel) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.channels[c.ID] != nil {
		return mcpgate.Errorf(mcpgate.ECONFLICT, "channel exists")
	}
	cp := *c
	f.channels[c.ID] = &cp
	return nil
}

func (f *fakeBus) FindChannel(_ context.Context, id string) (*mcpgate.Channel, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.finds++
	if c := f.channels[id]; c != nil {
		cp := *c
		return &cp, nil
	}
	return nil, mcpgate.Errorf(mcpgate.ENOTFOUND, "no channel")
}

func (f *fakeBus) AckMessage(_ context.Context, _, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.acked[id] = true
	return nil
}

func (f *fakeBus) Online(context.Context, string, string) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.checks++
	if f.flaps > 0 {
		f.flaps--
		return false, nil
	}
	return f.online, nil
}

// checkCount returns how many presence checks were made.
func (f *fakeBus) checkCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.checks
}

func (f *fakeBus) Post(_ context.Context, m *mcpgate.Message) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.channels[m.ChannelID] == nil {
		return mcpgate.Errorf(mcpgate.ENOTFOUND, "no channel %s", m.ChannelID)
	}
	for _, o := range f.msgs {
		if m.Type.Final() && o.Type.Final() && o.InReplyTo == m.InReplyTo {
			return mcpgate.Errorf(mcpgate.ECONFLICT, "replied already")
		}
	}
	m.Seq = int64(len(f.msgs) + 1)
	m.ID = fmt.Sprintf("msg_%d", m.Seq)
	m.CreatedAt = time.Now()
	cp := *m
	f.msgs = append(f.msgs, &cp)
	close(f.changed)
	f.changed = make(chan struct{})
	return nil
}

func (f *fakeBus) Ask(ctx context.Context, m *mcpgate.Message, posted func(), onDelta func(*mcpgate.Message)) (*mcpgate.Message, error) {
	if err := f.Post(ctx, m); err != nil {
		return nil, err
	}
	posted()
	return f.await(ctx, m.ID, onDelta)
}

func (f *fakeBus) await(ctx context.Context, msgID string, onDelta func(*mcpgate.Message)) (*mcpgate.Message, error) {
	seen := 0
	for {
		f.mu.Lock()
		var deltas []*mcpgate.Message
		var final *mcpgate.Message
		for _, m := range f.msgs {
			if m.InReplyTo == msgID && m.Type == mcpgate.MessageReplyDelta {
				deltas = append(deltas, m)
			} else if m.InReplyTo == msgID && m.Type.Final() {
				final = m
			}
		}
		wake := f.changed
		f.mu.Unlock()
		for _, d := range deltas[seen:] {
			onDelta(d)
		}
		seen = len(deltas)
		if final != nil {
			return final, nil
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// wait returns the first message matching ok, waiting for it to be
// posted.
func (f *fakeBus) wait(tb testing.TB, ok func(*mcpgate.Message) bool) *mcpgate.Message {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		f.mu.Lock()
		wake := f.changed
		for _, m := range f.msgs {
			if ok(m) {
				f.mu.Unlock()
				return m
			}
		}
		f.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			tb.Fatal("no such message was posted")
		}
	}
}

// all returns a copy of the posted messages.
func (f *fakeBus) all() []*mcpgate.Message {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*mcpgate.Message(nil), f.msgs...)
}

// dropChannel deletes a channel, as deleting its agent does.
func (f *fakeBus) dropChannel(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.channels, id)
}

// channelReads returns how many times a channel was read.
func (f *fakeBus) channelReads() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.finds
}
