package batch

import (
	"runtime"
	"slices"
	"sync"
	"testing"

	"github.com/mcpgate/mcpgate/internal/deptest"
)

// TestImports keeps the package on the standard library.
func TestImports(t *testing.T) { deptest.Check(t) }

// item is a caller's work; batch is set by the batch that carried it.
type item struct {
	n     int
	batch int // the batch's number, 0 until it ran
}

// TestRunTogether: callers that queue while a batch is held run in the
// next batch, together and in order, each returning after it ran; the
// lead is then given up.
func TestRunTogether(t *testing.T) {
	var q Queue[*item]
	var once sync.Once
	q.Hold = func() {
		once.Do(func() {
			for q.Queued() < 5 {
				runtime.Gosched()
			}
		})
	}
	var mu sync.Mutex
	var batches [][]int
	run := func(b []*item) {
		mu.Lock()
		defer mu.Unlock()
		ns := []int{}
		for _, it := range b {
			ns = append(ns, it.n)
			it.batch = len(batches) + 1
		}
		batches = append(batches, ns)
	}
	items := make([]*item, 5)
	var wg sync.WaitGroup
	for i := range items {
		items[i] = &item{n: i}
		wg.Go(func() {
			q.Run(items[i], run)
			if items[i].batch == 0 {
				t.Errorf("Run of item %d returned before a batch carried it", i)
			}
		})
	}
	wg.Wait()
	if len(batches) != 1 || len(batches[0]) != 5 {
		t.Fatalf("batches %v, want one of all five", batches)
	}
	if n, leading := q.Batches(); n != 1 || leading {
		t.Errorf("Batches() = %d, %v; want 1, false", n, leading)
	}
}

// TestRunHandsOver: a caller queued while a batch runs leads the next one,
// which carries every caller queued by then.
func TestRunHandsOver(t *testing.T) {
	var q Queue[*item]
	started, release := make(chan struct{}), make(chan struct{})
	var mu sync.Mutex
	var sizes []int
	run := func(b []*item) {
		mu.Lock()
		first := len(sizes) == 0
		sizes = append(sizes, len(b))
		mu.Unlock()
		if first {
			close(started)
			<-release
		}
	}
	var wg sync.WaitGroup
	wg.Go(func() { q.Run(&item{n: 0}, run) })
	<-started
	for i := 1; i <= 3; i++ {
		wg.Go(func() { q.Run(&item{n: i}, run) })
	}
	for q.Queued() < 3 {
		runtime.Gosched()
	}
	close(release)
	wg.Wait()
	if !slices.Equal(sizes, []int{1, 3}) {
		t.Errorf("batch sizes %v, want [1 3]", sizes)
	}
}
