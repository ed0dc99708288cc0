package main

import (
	"context"
	"time"
)

// pacer spaces one session's calls for `mcpgate load --rate`: an open
// loop, where calls are due at fixed times whatever the gateway's pace.
// A call made late by the one before it counts its latency from when it
// was due, so that a slow answer also weighs on the calls it held back
// (no coordinated omission); a call sent on time counts from when it was
// sent, so that the load client's own timer lag is not the gateway's.
type pacer struct {
	next     time.Time
	interval time.Duration
}

// newPacer returns the pacer of session i of n sharing rate calls/s, or
// nil when rate is 0 (a closed loop). The sessions' schedules are
// staggered evenly over one interval.
func newPacer(start time.Time, rate float64, i, n int) *pacer {
	if rate <= 0 {
		return nil
	}
	interval := time.Duration(float64(n) / rate * float64(time.Second))
	return &pacer{next: start.Add(interval * time.Duration(i) / time.Duration(n)), interval: interval}
}

// wait waits until the next call is due and returns the time its latency
// counts from, or false when ctx ends first. A nil pacer does not wait.
func (p *pacer) wait(ctx context.Context) (time.Time, bool) {
	now := time.Now()
	if p == nil {
		return now, true
	}
	due := p.next
	p.next = due.Add(p.interval)
	d := due.Sub(now)
	if d <= 0 {
		return due, true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return time.Now(), true
	case <-ctx.Done():
		return time.Time{}, false
	}
}
