package postgres

import (
	"runtime"
	"sync"
)

// HoldPublishing makes b's first sender wait, before it takes the queue,
// until n notifications are queued, so that they make one batch.
func HoldPublishing(b *Broker, n int) {
	var once sync.Once
	b.pub.Hold = func() {
		once.Do(func() {
			for b.pub.Queued() < n {
				runtime.Gosched()
			}
		})
	}
}

// PublishBatches returns how many statements b sent notifications in.
func PublishBatches(b *Broker) int {
	n, _ := b.pub.Batches()
	return n
}
