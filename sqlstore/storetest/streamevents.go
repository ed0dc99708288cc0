package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
)

func streamEventTests() []test {
	return []test{
		{"ReadFrom", testStreamEventsReadFrom},
		{"Floor", testStreamEventsFloor},
		{"Delete", testStreamEventsDelete},
	}
}

// streamEvent returns event seq of stream st of session sess, at position
// pos of replica r.
func streamEvent(r, sess, st string, pos int64, seq uint64) *mcpgate.StreamEvent {
	return &mcpgate.StreamEvent{Replica: r, Pos: pos, Session: sess, Stream: st, Seq: seq, Get: st == "get",
		Wire: fmt.Appendf(nil, "id: %s_%d\ndata: {}\n\n", st, seq)}
}

// streamSeqs returns the sequence numbers of the stored events of a stream
// from from on.
func streamSeqs(t *testing.T, s mcpgate.Store, sess, st string, from uint64) []uint64 {
	t.Helper()
	evs, err := s.StreamEvents(context.Background(), sess, st, from)
	if err != nil {
		t.Fatal(err)
	}
	out := []uint64{}
	for _, ev := range evs {
		out = append(out, ev.Seq)
	}
	return out
}

// testStreamEventsReadFrom checks that a stream's events come back in
// order, from the sequence number asked for, with what was stored, and
// only that session's.
func testStreamEventsReadFrom(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	evs := []*mcpgate.StreamEvent{
		streamEvent("a", "s1", "get", 1, 1), streamEvent("a", "s1", "call", 2, 1),
		streamEvent("a", "s1", "get", 3, 2), streamEvent("a", "s1", "get", 4, 3), streamEvent("a", "s2", "get", 5, 9),
	}
	if err := s.PutStreamEvents(ctx, evs, nil); err != nil {
		t.Fatal(err)
	}
	if evs[0].CreatedAt.IsZero() {
		t.Error("PutStreamEvents left CreatedAt unset")
	}
	mustEqual(t, "get from 2", streamSeqs(t, s, "s1", "get", 2), []uint64{2, 3})
	mustEqual(t, "call from 0", streamSeqs(t, s, "s1", "call", 0), []uint64{1})
	mustEqual(t, "another session's stream", streamSeqs(t, s, "s3", "get", 0), []uint64{})
	got, err := s.StreamEvents(ctx, "s1", "get", 3)
	if err != nil || len(got) != 1 || string(got[0].Wire) != string(evs[3].Wire) || !got[0].Get || got[0].Replica != "a" || got[0].Pos != 4 {
		t.Errorf("event 3: %+v %v", got, err)
	}
}

// testStreamEventsFloor checks that a floor deletes the earlier events of
// its replica and session only, with the batch that sets it.
func testStreamEventsFloor(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	var evs []*mcpgate.StreamEvent
	for i := int64(1); i <= 4; i++ {
		evs = append(evs, streamEvent("a", "s1", "get", i, uint64(i)), streamEvent("b", "s1", "call", i, uint64(i)))
	}
	if err := s.PutStreamEvents(ctx, evs, nil); err != nil {
		t.Fatal(err)
	}
	more := []*mcpgate.StreamEvent{streamEvent("a", "s1", "get", 5, 5)}
	floors := []mcpgate.StreamFloor{{Replica: "a", Session: "s1", Pos: 3}, {Replica: "a", Session: "s2", Pos: 9}}
	if err := s.PutStreamEvents(ctx, more, floors); err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "a's events", streamSeqs(t, s, "s1", "get", 0), []uint64{3, 4, 5})
	mustEqual(t, "b's events", streamSeqs(t, s, "s1", "call", 0), []uint64{1, 2, 3, 4})
}

// testStreamEventsDelete checks that events are deleted by age.
func testStreamEventsDelete(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	old := streamEvent("a", "s1", "get", 1, 1)
	if err := s.PutStreamEvents(ctx, []*mcpgate.StreamEvent{old}, nil); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Millisecond) // the next event's CreatedAt must differ
	if err := s.PutStreamEvents(ctx, []*mcpgate.StreamEvent{streamEvent("a", "s1", "get", 2, 2)}, nil); err != nil {
		t.Fatal(err)
	}
	n, err := s.DeleteStreamEvents(ctx, old.CreatedAt.Add(time.Microsecond))
	if err != nil || n != 1 {
		t.Fatalf("DeleteStreamEvents = %d, %v; want 1", n, err)
	}
	mustEqual(t, "left", streamSeqs(t, s, "s1", "get", 0), []uint64{2})
}
