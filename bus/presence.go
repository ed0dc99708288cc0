package bus

import (
	"context"
	"errors"
	"sync"
	"time"
)

// MarkOnline records that a worker stream of the agent's skill (of all its
// skills when skill is "") is open on this replica, until the returned
// release is called. While any is open, Online reports the agent online
// on every replica: this one counts its streams, and a presence record in
// the store, refreshed every Heartbeat and valid for PresenceTTL, tells the
// others. The record is written before MarkOnline returns; a failure to
// write it is logged and retried at the next heartbeat, so it never ends a
// stream. Calling release more than once is harmless.
func (b *Bus) MarkOnline(ctx context.Context, agentID, skill string) (release func()) {
	k := presenceKey{agentID, skill}
	b.online.change(k, +1, func() {
		if err := b.putPresence(ctx, k); err != nil {
			b.logger.Warn("bus: record presence", "agent", agentID, "skill", skill, "err", err)
		}
	})
	var once sync.Once
	return func() {
		once.Do(func() {
			b.online.change(k, -1, func() {
				ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), publishTimeout)
				defer cancel()
				if err := b.store.DeletePresence(ctx, agentID, skill, b.id); err != nil {
					b.logger.Warn("bus: remove presence", "agent", agentID, "skill", skill, "err", err)
				}
			})
		})
	}
}

// Online reports whether a worker stream that takes the agent's skill (one
// of that skill or of all skills; of any skill when skill is "") is open
// on this replica or, by an unexpired presence record, on another.
func (b *Bus) Online(ctx context.Context, agentID, skill string) (bool, error) {
	if b.online.local(agentID, skill) {
		return true, nil
	}
	return b.store.Present(ctx, agentID, skill, time.Now())
}

// refresh rewrites this replica's presence records every heartbeat until
// ctx ends.
func (b *Bus) refresh(ctx context.Context) {
	t := time.NewTicker(b.heartbeat)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			b.online.each(func(k presenceKey) {
				if err := b.putPresence(ctx, k); err != nil && ctx.Err() == nil {
					b.logger.Warn("bus: refresh presence", "agent", k.agentID, "skill", k.skill, "err", err)
				}
			})
		}
	}
}

// putPresence writes this replica's record of k's streams, valid for the
// presence TTL from now.
func (b *Bus) putPresence(ctx context.Context, k presenceKey) error {
	return b.store.PutPresence(ctx, k.agentID, k.skill, b.id, time.Now().Add(b.ttl))
}

// presenceKey names the streams of one agent's skill.
type presenceKey struct{ agentID, skill string }

// presence counts this replica's open worker streams. Changes that start or
// end a key's streams write the store while holding writeMu, and so do
// refreshes, so that the store sees them in the order they happened: a
// refresh or a new stream's record never lands before an older removal.
type presence struct {
	writeMu sync.Mutex // held while writing the store
	mu      sync.Mutex // guards counts; never held during I/O
	counts  map[presenceKey]int
}

func (p *presence) init() { p.counts = map[presenceKey]int{} }

// change adds delta to k's count and, when the count went from 0 to 1 or
// from 1 to 0, calls write.
func (p *presence) change(k presenceKey, delta int, write func()) {
	p.writeMu.Lock()
	defer p.writeMu.Unlock()
	p.mu.Lock()
	before := p.counts[k]
	if before+delta == 0 {
		delete(p.counts, k)
	} else {
		p.counts[k] = before + delta
	}
	p.mu.Unlock()
	if before == 0 || before+delta == 0 {
		write()
	}
}

// each calls fn with every key that has open streams, holding writeMu.
func (p *presence) each(fn func(presenceKey)) {
	p.writeMu.Lock()
	defer p.writeMu.Unlock()
	for _, k := range p.keys() {
		fn(k)
	}
}

// keys returns the keys with open streams.
func (p *presence) keys() []presenceKey {
	p.mu.Lock()
	defer p.mu.Unlock()
	keys := make([]presenceKey, 0, len(p.counts))
	for k := range p.counts {
		keys = append(keys, k)
	}
	return keys
}

// local reports whether a stream that takes the agent's skill is open here.
func (p *presence) local(agentID, skill string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.counts[presenceKey{agentID, skill}] > 0 || p.counts[presenceKey{agentID, ""}] > 0 {
		return true
	}
	if skill != "" {
		return false
	}
	for k := range p.counts {
		if k.agentID == agentID {
			return true
		}
	}
	return false
}

// deleteAll removes the store's records of every key with open streams.
func (p *presence) deleteAll(ctx context.Context, s Store, replica string) error {
	var errs []error
	p.each(func(k presenceKey) {
		errs = append(errs, s.DeletePresence(ctx, k.agentID, k.skill, replica))
	})
	return errors.Join(errs...)
}
