package main

import (
	"runtime"
	"sync"
	"testing"
	"time"
)

func TestGCPercentFor(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int
	}{
		{0, 400},
		{2 << 20, 400},
		{16 << 20, 400}, // four times 16 MiB is the headroom
		{32 << 20, 200},
		{48 << 20, 133},
		{64 << 20, 100},
		{1 << 30, 100}, // never below Go's default
	} {
		if got := gcPercentFor(c.live); got != c.want {
			t.Errorf("gcPercentFor(%d MiB) = %d, want %d", c.live>>20, got, c.want)
		}
	}
}

// fakeCollector is the setter and the live heap a gcTuner is given in
// tests: it records each percentage set.
type fakeCollector struct {
	mu   sync.Mutex
	live uint64
	sets []int
}

func (f *fakeCollector) set(p int) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sets = append(f.sets, p)
	return 0
}

func (f *fakeCollector) liveBytes() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.live
}

func (f *fakeCollector) setLive(n uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.live = n
}

func (f *fakeCollector) setsNow() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]int(nil), f.sets...)
}

// collectUntil runs collections until done reports true, for at most 10 s
// (cleanups run on their own goroutine after a collection).
func collectUntil(t *testing.T, done func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !done(); {
		if time.Now().After(deadline) {
			t.Fatal("the tuner did not run after collections for 10 s")
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
}

func TestGCTunerFollowsCollections(t *testing.T) {
	f := &fakeCollector{live: 4 << 20}
	env, _, _ := newTestEnv(nil)
	tu := newGCTuner(env, f.set, f.liveBytes)
	tu.start()
	if got := f.setsNow(); len(got) != 1 || got[0] != 400 {
		t.Fatalf("sets at start = %v, want [400]", got)
	}
	f.setLive(128 << 20) // the heap grew: the next collection lowers the percentage
	collectUntil(t, func() bool { return len(f.setsNow()) == 2 })
	if got := f.setsNow(); got[1] != 100 {
		t.Fatalf("sets = %v, want 100 after the live heap grew to 128 MiB", got)
	}

	// A live heap that keeps its percentage sets nothing more; the tuner
	// still runs after each collection, as a change afterwards shows.
	runtime.GC()
	runtime.GC()
	f.setLive(32 << 20)
	collectUntil(t, func() bool { return len(f.setsNow()) == 3 })
	if got := f.setsNow(); got[2] != 200 {
		t.Fatalf("sets = %v, want 200 last", got)
	}

	tu.stop()
	runtime.GC() // the cleanup armed last runs once more and stops
	f.setLive(2 << 20)
	for range 5 {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	if got := f.setsNow(); len(got) != 3 {
		t.Fatalf("sets after stop = %v, want none more", got)
	}
}

func TestGCTunerLeavesGOGC(t *testing.T) {
	env, _, _ := newTestEnv(map[string]string{"GOGC": "123"})
	f := &fakeCollector{}
	if newGCTuner(env, f.set, f.liveBytes) != nil {
		t.Fatal("with GOGC set, a tuner was made")
	}
}
