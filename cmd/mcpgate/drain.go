package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// drainFlags are serve's graceful-shutdown settings.
type drainFlags struct {
	// timeout bounds how long calls in flight may take to finish once
	// the replica stops taking connections.
	timeout time.Duration
	// delay is how long the replica keeps serving after it starts to
	// report draining, so that a load balancer takes it out first.
	delay time.Duration
	// draining is set once Drain has begun.
	draining atomic.Bool
}

// drainRetry is the reconnection delay advised to the clients of the GET
// streams a draining replica ends.
const drainRetry = time.Second

// register adds --drain-timeout and --drain-delay to fs.
func (f *drainFlags) register(fs *flag.FlagSet) {
	fs.DurationVar(&f.timeout, "drain-timeout", 30*time.Second, "on SIGTERM, how long calls in flight may take to finish before they are cancelled")
	fs.DurationVar(&f.delay, "drain-delay", 0, "on SIGTERM, how long to keep serving while /readyz and /healthz report draining, before the listener closes (let the load balancer notice)")
}

// problem returns what is wrong with the flags, or "".
func (f *drainFlags) problem() string {
	if f.timeout <= 0 || f.delay < 0 {
		return "--drain-timeout must be positive and --drain-delay not negative"
	}
	return ""
}

// readiness is what /readyz and /healthz ask of the running gateway.
type readiness struct{ m *Main }

// Draining reports whether the gateway has begun to drain.
func (r readiness) Draining() bool { return r.m.Config.drain.draining.Load() }

// Loaded reports whether the registry has loaded the agents' tables.
func (r readiness) Loaded() bool { return r.m.registry.Loaded() }

// Draining reports whether Drain or StartDrain has been called.
func (m *Main) Draining() bool { return m.Config.drain.draining.Load() }

// StartDrain begins a graceful shutdown without blocking: /readyz and
// /healthz answer 503 {"status":"draining"}, every open GET stream is ended
// with a retry hint (its client reconnects with Last-Event-ID, through the
// load balancer, to another replica) and new GET streams are refused with
// 503 and Retry-After. Other requests are still served.
func (m *Main) StartDrain() {
	if m.Config.drain.draining.Swap(true) {
		return
	}
	n := m.mcp.PauseStreams(drainRetry)
	m.ui.Close() // its queues poll another replica through the load balancer
	m.logger.Info("draining: not ready, streams told to reconnect", "streams", n)
}

// Drain shuts the gateway down gracefully: StartDrain, then --drain-delay
// of serving while reporting draining, then the listener closes and the
// calls in flight get until --drain-timeout to finish. Calls still running
// then are cancelled by Close, which the caller runs next.
func (m *Main) Drain(ctx context.Context) error {
	m.StartDrain()
	select {
	case <-ctx.Done():
	case <-time.After(m.Config.drain.delay):
	}
	if m.cancel != nil {
		m.cancel() // background loops stop; the in-process demo worker disconnects
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), m.Config.drain.timeout)
	defer cancel()
	start := time.Now()
	stop := m.keepPausingStreams()
	err := m.http.Shutdown(ctx)
	stop()
	m.handOver()
	if errors.Is(err, context.DeadlineExceeded) {
		m.logger.Warn("drain timeout: cancelling the calls still in flight", "timeout", m.Config.drain.timeout)
		return nil
	}
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("drain: %w", err)
	}
	m.logger.Info("drained", "took", time.Since(start).Round(time.Millisecond))
	return nil
}

// keepPausingStreams ends, every quarter second until stop is called, the
// GET streams opened by requests that passed the front just before the
// drain began, so that none of them holds Shutdown until the timeout.
func (m *Main) keepPausingStreams() (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				m.mcp.PauseStreams(drainRetry)
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

// handOver stores the replay of this replica's streams for the other
// replicas, once no request can add to them.
func (m *Main) handOver() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if n := m.mcp.HandOver(ctx); n > 0 {
		m.logger.Info("draining: streams handed over to the other replicas", "streams", n)
	}
}
