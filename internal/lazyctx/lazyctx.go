// Package lazyctx makes cancelable contexts that make their machinery
// only when something waits on them.
//
// A context of the context package that can end costs its maker an
// allocation, and, when something asks for its Done channel, a channel
// and a child in its parent's map, under the parent's lock; one with a
// deadline, a timer started and stopped. A relayed call makes two (its
// own, and its upstream's deadline), and is answered, most often, before
// anything waits on either: its exchange is watched only once it has run
// a few milliseconds (package h1's context watch). A Context here is one
// allocation; its context of the context package is made at the first
// call of Done, and until then Err and Value answer as that context would.
package lazyctx

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Context is a context that ends with its parent, at its deadline if it
// has one, or when it is cancelled (Cancel, End), made as
// context.WithCancelCause or context.WithDeadline would make it once
// something asks for Done. It is safe for concurrent use.
type Context struct {
	parent   context.Context
	deadline time.Time // zero for none

	made  atomic.Pointer[made] // set once, under mu
	ended atomic.Bool          // Cancel or End was called; set under mu
	mu    sync.Mutex
	cause error // the first Cancel's, for the context made after it
}

// made is the context a Context stands for, once made, and its cancel.
type made struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
}

// WithCancel returns a Context that ends with parent or when cancelled.
func WithCancel(parent context.Context) *Context {
	return &Context{parent: parent}
}

// WithDeadline returns a Context that ends with parent, at d, or when
// cancelled.
func WithDeadline(parent context.Context, d time.Time) *Context {
	return &Context{parent: parent, deadline: d}
}

// Deadline returns the earlier of the context's deadline and its
// parent's.
func (c *Context) Deadline() (time.Time, bool) {
	d, ok := c.parent.Deadline()
	if c.deadline.IsZero() || ok && d.Before(c.deadline) {
		return d, ok
	}
	return c.deadline, true
}

// Done returns the channel closed when the context ends; the context of
// the context package is made at its first call.
func (c *Context) Done() <-chan struct{} { return c.ctx().Done() }

// Err returns nil while the context has not ended, and why it ended once
// it has. Once it has, the context is made, so that Done, Err and
// context.Cause agree from then on.
func (c *Context) Err() error {
	if m := c.made.Load(); m != nil {
		return m.ctx.Err()
	}
	if c.ended.Load() || c.parent.Err() != nil || !c.deadline.IsZero() && !time.Now().Before(c.deadline) {
		return c.ctx().Err()
	}
	return nil
}

// Value returns the parent's value for key, or, once made, the made
// context's (by which the context package finds its cancellation).
func (c *Context) Value(key any) any {
	if m := c.made.Load(); m != nil {
		return m.ctx.Value(key)
	}
	return c.parent.Value(key)
}

// String names the context, as the context package's do.
func (c *Context) String() string { return "lazyctx.Context" }

// Cancel ends the context with cause (nil for context.Canceled), as a
// context.CancelCauseFunc does. A context with a deadline ends with
// context.Canceled whatever the cause, as WithDeadline's cancel does.
func (c *Context) Cancel(cause error) {
	if m := c.end(cause); m != nil {
		m.cancel(cause)
	}
}

// End ends a context that was never made, which then needs nothing
// stopped; for one that was, it returns the function that ends it (and
// stops its timer), for the caller to run when it suits it (after a
// reply) and until which the made context runs on. nil when there is
// nothing to run.
func (c *Context) End() func() {
	m := c.end(nil)
	if m == nil {
		return nil
	}
	return func() { m.cancel(nil) }
}

// end marks the context ended with cause, the first time, and returns
// the made context, if any, for the caller to cancel.
func (c *Context) end(cause error) *made {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.ended.Load() {
		c.cause = cause
		c.ended.Store(true)
	}
	return c.made.Load()
}

// ctx returns the made context, making it first if need be, ended
// already when Cancel or End came first.
func (c *Context) ctx() context.Context {
	if m := c.made.Load(); m != nil {
		return m.ctx
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if m := c.made.Load(); m != nil {
		return m.ctx
	}
	m := &made{}
	if c.deadline.IsZero() {
		m.ctx, m.cancel = context.WithCancelCause(c.parent)
	} else {
		ctx, cancel := context.WithDeadline(c.parent, c.deadline)
		m.ctx, m.cancel = ctx, func(error) { cancel() }
	}
	if c.ended.Load() {
		m.cancel(c.cause)
	}
	c.made.Store(m)
	return m.ctx
}
