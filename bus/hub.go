package bus

import "sync"

// hub is the in-process side of the bus: the waiters of each topic, each
// with a channel of one buffered signal, so that signals to a waiter that
// is busy coalesce instead of blocking the signaller.
type hub struct {
	mu     sync.Mutex
	topics map[string]map[chan struct{}]struct{}
}

func (h *hub) init() { h.topics = map[string]map[chan struct{}]struct{}{} }

// subscribe returns a new waiter's channel for topic.
func (h *hub) subscribe(topic string) chan struct{} {
	c := make(chan struct{}, 1)
	h.mu.Lock()
	defer h.mu.Unlock()
	waiters := h.topics[topic]
	if waiters == nil {
		waiters = map[chan struct{}]struct{}{}
		h.topics[topic] = waiters
	}
	waiters[c] = struct{}{}
	return c
}

// unsubscribe removes the waiter c of topic; it gets no signal after.
func (h *hub) unsubscribe(topic string, c chan struct{}) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.topics[topic], c)
	if len(h.topics[topic]) == 0 {
		delete(h.topics, topic)
	}
}

// signal wakes every waiter of topic.
func (h *hub) signal(topic string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for c := range h.topics[topic] {
		notify(c)
	}
}

// signalAll wakes every waiter of every topic.
func (h *hub) signalAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, waiters := range h.topics {
		for c := range waiters {
			notify(c)
		}
	}
}

// notify leaves a signal in c unless one is waiting there already.
func notify(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}
