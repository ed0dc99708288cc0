package bus

import "context"

// Watch returns a channel that receives a signal whenever Signal is called
// for topic on any replica, and is closed when ctx ends. Signals coalesce,
// and carry no data: a woken waiter reads what changed from the store.
// Call Watch before reading, so that no change in between is missed.
func (b *Bus) Watch(ctx context.Context, topic string) <-chan struct{} {
	c := b.hub.subscribe(topic)
	context.AfterFunc(ctx, func() {
		b.hub.unsubscribe(topic, c)
		close(c)
	})
	return c
}

// Signal wakes the waiters of topic here and, through the Broker, on every
// other replica. A failure to reach the Broker is logged.
func (b *Bus) Signal(ctx context.Context, topic string) {
	b.signal(ctx, topic)
}
