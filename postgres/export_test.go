package postgres

import (
	"runtime"
	"sync"
)

// HoldPublishing makes b's first sender wait, before it takes the queue,
// until n notifications are queued, so that they make one batch.
func HoldPublishing(b *Broker, n int) {
	var once sync.Once
	b.pub.hold = func() {
		once.Do(func() {
			for b.pub.queued() < n {
				runtime.Gosched()
			}
		})
	}
}

// PublishBatches returns how many statements b sent notifications in.
func PublishBatches(b *Broker) int {
	b.pub.mu.Lock()
	defer b.pub.mu.Unlock()
	return b.pub.batches
}

// queued returns how many notifications wait to be sent.
func (p *publisher) queued() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.queue)
}
