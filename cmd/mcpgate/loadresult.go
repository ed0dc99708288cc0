package main

import (
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// failureClasses are the classes of failed attempts, in report order.
var failureClasses = []string{classTransport, classHTTP, classSession, classRPC, classTool}

// loadResult collects latencies, failures by class, retries, lost
// sessions and the longest time without a successful call.
type loadResult struct {
	mu        sync.Mutex
	latencies []time.Duration
	errors    int // calls that failed for good
	firstErr  error
	elapsed   time.Duration
	listed    atomic.Int64 // tools in the last full tools/list

	attempts map[string]int // failed attempts by class
	retried  int            // calls that succeeded after a retry
	lost     int            // sessions the gateway no longer knew
	start    time.Time
	lastOK   time.Time     // the last successful call
	maxGap   time.Duration // the longest time between two successes
	gapFrom  time.Time     // when that gap began
	events   *loadEvents
}

// newLoadResult starts collecting now; events may be nil.
func newLoadResult(events *loadEvents) *loadResult {
	return &loadResult{attempts: map[string]int{}, start: time.Now(), events: events}
}

// add records one call; calls cut short by the end of the run don't count.
func (r *loadResult) add(d time.Duration, err error, ending bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case err == nil:
		r.latencies = append(r.latencies, d)
		r.succeeded(time.Now())
	case !ending:
		r.errors++
		if r.firstErr == nil {
			r.firstErr = err
		}
	}
}

// succeeded moves the last success to now, keeping the longest gap. The
// time to the first success is not a gap: it is the gateway warming up.
func (r *loadResult) succeeded(now time.Time) {
	if gap := now.Sub(r.lastOK); !r.lastOK.IsZero() && gap > r.maxGap {
		r.maxGap, r.gapFrom = gap, r.lastOK
	}
	r.lastOK = now
}

// ok counts the successful calls.
func (r *loadResult) ok() int { return len(r.latencies) }

// attemptFailed records a failed attempt of a call.
func (r *loadResult) attemptFailed(session int, key string, attempt int, err error) {
	class := classOf(err)
	r.mu.Lock()
	r.attempts[class]++
	r.mu.Unlock()
	r.events.write(loadEvent{Event: "error", Session: session, Key: key, Attempt: attempt, Class: class, Error: err.Error()})
}

// retriedOK records a call that succeeded on a later attempt.
func (r *loadResult) retriedOK(session int, key string, attempts int, firstError time.Time) {
	r.mu.Lock()
	r.retried++
	r.mu.Unlock()
	r.events.write(loadEvent{Event: "retried", Session: session, Key: key, Attempt: attempts, FirstError: firstError})
}

// gaveUp records a call that failed for good.
func (r *loadResult) gaveUp(session int, key string, attempts int, firstError time.Time, err error) {
	r.events.write(loadEvent{Event: "failed", Session: session, Key: key, Attempt: attempts, Class: classOf(err), Error: err.Error(), FirstError: firstError})
}

// lostSession records a session the gateway no longer knew.
func (r *loadResult) lostSession(session int) {
	r.mu.Lock()
	r.lost++
	r.mu.Unlock()
	r.events.write(loadEvent{Event: "lost_session", Session: session})
}

// gap returns the longest time without a successful call, counting the
// time from the last success to the end of the run (the whole run when
// none succeeded), and when it began.
func (r *loadResult) gap() (time.Duration, time.Time) {
	last := r.lastOK
	if last.IsZero() {
		last = r.start
	}
	gap, from := r.maxGap, r.gapFrom
	if tail := r.start.Add(r.elapsed).Sub(last); tail > gap {
		gap, from = tail, last
	}
	return gap, from
}

// printFailures writes the lines about failures, retries, lost sessions
// and the longest gap, when the run asked for retries or had failures.
func (r *loadResult) printFailures(w io.Writer, c *loadConfig) {
	failed := 0
	for _, n := range r.attempts {
		failed += n
	}
	if failed == 0 && !c.keys && !c.follow {
		return
	}
	fmt.Fprintf(w, "failed attempts: %d (", failed)
	for i, class := range failureClasses {
		if i > 0 {
			fmt.Fprint(w, ", ")
		}
		fmt.Fprintf(w, "%s %d", class, r.attempts[class])
	}
	fmt.Fprintf(w, "); calls retried to success: %d; lost sessions: %d\n", r.retried, r.lost)
	gap, from := r.gap()
	fmt.Fprintf(w, "longest gap without a successful call: %s, from %s into the run\n",
		gap.Round(time.Millisecond), from.Sub(r.start).Round(time.Millisecond))
}

// summaryFields are the fields the summary line gained with retries; the
// ones before them keep their names and order for the tools that parse it.
func (r *loadResult) summaryFields() string {
	gap, _ := r.gap()
	return fmt.Sprintf("failed=%d errors_transport=%d errors_http=%d errors_session=%d errors_rpc=%d errors_tool=%d retried=%d lost_sessions=%d max_gap_ms=%d",
		r.errors, r.attempts[classTransport], r.attempts[classHTTP], r.attempts[classSession], r.attempts[classRPC], r.attempts[classTool],
		r.retried, r.lost, gap.Milliseconds())
}
