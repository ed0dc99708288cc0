package ui

import (
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate"
)

// live fans approval events (this replica's, and the others' that
// replicas.go finds) out to the open approvals streams. Publishing never blocks the publisher (a gated call, or a
// reviewer's decision): a stream too slow to take an event misses it, and
// its page's poll catches up.
type live struct {
	mu     sync.Mutex
	subs   map[chan *mcpgate.Approval]struct{}
	done   chan struct{}
	closed bool
}

// liveBuffer is how many events a stream may fall behind.
const liveBuffer = 64

func newLive() *live {
	return &live{subs: map[chan *mcpgate.Approval]struct{}{}, done: make(chan struct{})}
}

// publish hands a to every stream that has room for it.
func (l *live) publish(a *mcpgate.Approval) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for ch := range l.subs {
		select {
		case ch <- a:
		default:
		}
	}
}

// subscribe returns a stream's channel and its cancel; ok is false once
// closed.
func (l *live) subscribe() (ch chan *mcpgate.Approval, cancel func(), ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, nil, false
	}
	ch = make(chan *mcpgate.Approval, liveBuffer)
	l.subs[ch] = struct{}{}
	return ch, func() {
		l.mu.Lock()
		delete(l.subs, ch)
		l.mu.Unlock()
	}, true
}

// close ends every stream and refuses new ones.
func (l *live) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.closed {
		l.closed = true
		close(l.done)
	}
}

// liveHeartbeat is how often an idle stream sends a comment, so that
// proxies keep it open.
const liveHeartbeat = 25 * time.Second

// approvalEvents streams to a signed-in browser (text/event-stream) an
// "approval" event, with the approval's ID and state as data, whenever an
// approval it may decide is asked for or decided on any replica (see
// replicas.go). The queue's script reloads the list on each, and polls as
// a fallback.
func (h *Handler) approvalEvents(w http.ResponseWriter, r *http.Request) {
	u, err := h.user(r)
	if err != nil || u == nil {
		http.Error(w, "sign in first", http.StatusUnauthorized)
		return
	}
	if h.opts.Approvals == nil {
		http.Error(w, "this gateway has no approval gate", http.StatusServiceUnavailable)
		return
	}
	ch, cancel, ok := h.live.subscribe()
	if !ok {
		http.Error(w, "no live approvals here now: reload the page", http.StatusServiceUnavailable)
		return
	}
	defer cancel()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	rc := http.NewResponseController(w)
	fmt.Fprint(w, "retry: 5000\n\n")
	if rc.Flush() != nil {
		return
	}
	h.stream(w, r, u, ch, rc)
}

// stream writes the events u may see until the browser leaves or the
// dashboard closes.
func (h *Handler) stream(w http.ResponseWriter, r *http.Request, u *mcpgate.User, ch <-chan *mcpgate.Approval, rc *http.ResponseController) {
	beat := time.NewTicker(liveHeartbeat)
	defer beat.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-h.live.done:
			return
		case <-beat.C:
			fmt.Fprint(w, ": still here\n\n")
		case a := <-ch:
			if ok, err := h.mayReview(r.Context(), u, a); err != nil || !ok {
				continue
			}
			fmt.Fprintf(w, "event: approval\ndata: {\"id\":%q,\"state\":%q}\n\n", a.ID, a.State)
		}
		if rc.Flush() != nil {
			return
		}
	}
}
