package main

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
)

// The collector's percentage (GOGC) for a gateway: the heap may grow by
// four times its live size between collections while that is at most
// gcHeadroom, and by less as the live heap grows, down to Go's default
// (once its live size). A gateway's live heap is small (a few MB: the
// sessions are in the store), and at Go's default the collector took
// about a tenth of the CPU of a busy tools/call path; a gateway holding
// many event streams has a live heap of hundreds of MB, which five times
// over would be memory an operator pays for and never uses.
const (
	gcPercentMax = 400
	gcPercentMin = 100
	gcHeadroom   = 64 << 20
)

// gcPercentFor returns the collector's percentage for a live heap of
// live bytes.
func gcPercentFor(live uint64) int {
	if live == 0 {
		return gcPercentMax
	}
	return int(min(max(gcHeadroom*100/live, gcPercentMin), gcPercentMax))
}

// gcTuner sets the collector's percentage from the live heap after each
// collection, unless GOGC is set.
type gcTuner struct {
	set     func(percent int) int // debug.SetGCPercent
	live    func() uint64         // the live heap's bytes
	percent int                   // the percentage set last, -1 for none
	stopped atomic.Bool
}

// startGCTuner sets the collector's percentage for the live heap now and
// again after each collection, until the returned stop; with GOGC set it
// does nothing.
func startGCTuner(env *Env) (stop func()) {
	t := newGCTuner(env, debug.SetGCPercent, liveHeap)
	if t == nil {
		return func() {}
	}
	t.start()
	return t.stop
}

// newGCTuner returns a tuner that sets the percentage with set for the
// live heap that live reports; nil when GOGC is set.
func newGCTuner(env *Env, set func(percent int) int, live func() uint64) *gcTuner {
	if _, ok := env.LookupEnv("GOGC"); ok {
		return nil
	}
	return &gcTuner{set: set, live: live, percent: -1}
}

// start sets the percentage now and after each collection until stop.
func (t *gcTuner) start() {
	t.tune()
	t.arm()
}

// stop ends the tuning; the percentage set last stays.
func (t *gcTuner) stop() { t.stopped.Store(true) }

// tune sets the percentage for the live heap, when it changed.
func (t *gcTuner) tune() {
	if p := gcPercentFor(t.live()); p != t.percent {
		t.set(p)
		t.percent = p
	}
}

// gcSentinel is an object made to be collected: its cleanup is how the
// tuner learns that a collection ended. It holds a pointer, so that it
// is not one of the tiny objects the allocator packs together (which are
// freed only with their neighbours).
type gcSentinel struct{ _ *byte }

// arm makes tune run after the next collection, and arm again.
func (t *gcTuner) arm() {
	runtime.AddCleanup(new(gcSentinel), func(t *gcTuner) {
		if !t.stopped.Load() {
			t.tune()
			t.arm()
		}
	}, t)
}

// liveHeap returns the bytes of heap objects the last collection found
// live.
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// releaseStartupHeap collects twice and returns the freed memory to the
// system. Starting leaves garbage the first collections would count as
// live (the migrations' parse buffers, held in a sync.Pool, survive one
// collection), which set the heap's goal at some 90 MB for a gateway
// that holds a few; the second collection frees what the first left in
// the pools.
func releaseStartupHeap() {
	runtime.GC()
	debug.FreeOSMemory()
}
