package agentkit

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReadEvents(t *testing.T) {
	stream := ": ping\n\nid: 7\nevent: message\ndata: {\"a\":\ndata: 1}\n\nretry: 10\ndata:x\n\n"
	var got []event
	if err := readEvents(strings.NewReader(stream), func(e event) { got = append(got, e) }); err != nil {
		t.Fatal(err)
	}
	want := []event{{}, {}, {id: "7", name: "message", data: "{\"a\":\n1}"}, {data: "x"}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(event{})); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if got[2].seq() != 7 {
		t.Errorf("seq = %d", got[2].seq())
	}
}

func TestEventMessage(t *testing.T) {
	tests := []struct {
		name string
		ev   event
		ok   bool
	}{
		{"envelope", event{name: "message", data: `{"id":"msg_1","channel_id":"ch_1","type":"chat_message"}`}, true},
		{"unnamed", event{data: `{"id":"msg_1","channel_id":"ch_1"}`}, true},
		{"other event", event{name: "error", data: `{"id":"msg_1","channel_id":"ch_1"}`}, false},
		{"no id", event{data: `{"channel_id":"ch_1"}`}, false},
		{"not json", event{data: `nope`}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := tt.ev.message(); (err == nil) != tt.ok {
				t.Errorf("message() error %v, want ok=%v", err, tt.ok)
			}
		})
	}
}

// TestLedgerStaysBounded: a worker's ledger remembers at most max
// settled messages however many it saw, keeps every running one, and its
// queue of IDs holds no more than twice what it remembers.
func TestLedgerStaysBounded(t *testing.T) {
	const size = 8
	l := newLedger(size)
	_, cancel := context.WithCancel(context.Background())
	defer cancel()
	l.begin("long", cancel) // runs throughout
	for i := range 1000 {
		id := fmt.Sprintf("m%d", i)
		l.begin(id, cancel)
		if i%7 != 0 {
			l.finish(id)
		} else if i >= 7 {
			l.finish(fmt.Sprintf("m%d", i-7)) // ran for a while
		}
		live := l.order[l.head:]
		if len(live) != len(l.byID) || len(l.order) > 2*size+2 {
			t.Fatalf("after %d messages: %d IDs queued from %d of %d, %d remembered", i+1, len(live), l.head, len(l.order), len(l.byID))
		}
		for _, id := range live {
			if l.byID[id] == nil {
				t.Fatalf("after %d messages: %s is queued but not remembered", i+1, id)
			}
		}
	}
	if l.state("long") != running || l.state("m999") != done || l.state("m0") != unseen {
		t.Errorf("states: long %v, m999 %v, m0 %v", l.state("long"), l.state("m999"), l.state("m0"))
	}
}

// BenchmarkLedgerFull: a message seen by a worker whose ledger is full
// (every message past the first 4,096) costs the same as any other.
func BenchmarkLedgerFull(b *testing.B) {
	l := newLedger(4096)
	_, cancel := context.WithCancel(context.Background())
	defer cancel()
	ids := make([]string, 8192)
	for i := range ids {
		ids[i] = fmt.Sprintf("msg_%d", i)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		id := ids[i%len(ids)]
		l.begin(id, cancel)
		l.finish(id)
	}
}

func TestLedgerForgetsSettledOnly(t *testing.T) {
	l := newLedger(2)
	_, cancel := context.WithCancel(context.Background())
	defer cancel()
	l.begin("a", cancel) // stays running
	l.begin("b", cancel)
	l.finish("b")
	l.begin("c", cancel)
	l.finish("c")
	l.begin("d", cancel)
	got := []status{l.state("a"), l.state("b"), l.state("c"), l.state("d")}
	if diff := cmp.Diff([]status{running, unseen, unseen, running}, got); diff != "" {
		t.Errorf("states (-want +got):\n%s", diff)
	}
}
