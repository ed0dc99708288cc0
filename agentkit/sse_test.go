package agentkit

import (
	"context"
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
