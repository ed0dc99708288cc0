package peer

import (
	"context"
	"time"
)

// watch subscribes to this replica's topic and to every replica's, before
// the first read, so that nothing sent in between is missed.
func (p *Peers) watch(ctx context.Context) []<-chan struct{} {
	return []<-chan struct{}{p.signals.Watch(ctx, topic(p.id)), p.signals.Watch(ctx, topic(""))}
}

// run reads the store when woken and every poll, and sweeps old messages,
// until ctx ends.
func (p *Peers) run(ctx context.Context, wake []<-chan struct{}) {
	defer close(p.done)
	defer close(p.out)
	poll := time.NewTicker(p.poll)
	defer poll.Stop()
	sweep := time.NewTicker(sweepEvery)
	defer sweep.Stop()
	p.read(ctx, true)
	for {
		select {
		case <-ctx.Done():
			return
		case <-wake[0]:
			p.read(ctx, false)
		case <-wake[1]:
			p.read(ctx, false)
		case <-poll.C:
			p.read(ctx, true)
		case <-sweep.C:
			p.sweep(ctx)
		}
	}
}

// read delivers the messages not yet delivered: since slack before the
// newest one seen after a wake-up, or since the lookback on a poll.
func (p *Peers) read(ctx context.Context, full bool) {
	since := time.Now().Add(-p.lookback)
	if p.mu.Lock(); !full && p.newest.After(since) {
		since = p.newest.Add(-slack)
	}
	p.mu.Unlock()
	msgs, err := p.store.PeerMessages(ctx, p.id, since)
	if err != nil {
		if ctx.Err() == nil {
			p.logger.Warn("peer: read messages", "err", err)
		}
		return
	}
	for _, m := range msgs {
		if m.From == p.id || !p.first(m.ID, m.CreatedAt) {
			continue
		}
		select {
		case p.out <- m.Body:
		case <-ctx.Done():
			return
		}
	}
}

// first records a message as delivered, reporting whether it was new.
func (p *Peers) first(id string, at time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.seen[id]; ok {
		return false
	}
	p.seen[id] = at
	if at.After(p.newest) {
		p.newest = at
	}
	return true
}

// sweep deletes old messages and forgets delivered ids older than any read
// can return.
func (p *Peers) sweep(ctx context.Context) {
	if _, err := p.store.DeletePeerMessages(ctx, time.Now().Add(-p.keep)); err != nil && ctx.Err() == nil {
		p.logger.Warn("peer: sweep messages", "err", err)
	}
	horizon := time.Now().Add(-p.lookback - time.Minute)
	p.mu.Lock()
	defer p.mu.Unlock()
	for id, at := range p.seen {
		if at.Before(horizon) {
			delete(p.seen, id)
		}
	}
}
