package pipeline

import (
	"encoding/json"
	"testing"
)

// appendJSON writes what encoding/json writes for the event data.
func TestCallEventDataJSON(t *testing.T) {
	for _, d := range []callEventData{
		{CallID: "call_1", Agent: "a", Tool: "t", Outcome: "ok", DurationMS: 12},
		{CallID: "call_2", Agent: "a<b>", Skill: "s&k", Tool: "t\"\\\n", Outcome: "error", DurationMS: -1, Error: "bad \u2028 \xff é"},
	} {
		want, _ := json.Marshal(&d)
		if got := d.appendJSON(nil); string(got) != string(want) {
			t.Errorf("appendJSON = %s, want %s", got, want)
		}
	}
}

// FuzzCallEventDataJSON holds appendJSON to encoding/json.
func FuzzCallEventDataJSON(f *testing.F) {
	f.Add("call_1", "agent", "", "tool", "ok", int64(3), "")
	f.Add("c", "<a>", "s", "t&", "error", int64(-7), "why \u2029\x00")
	f.Fuzz(func(t *testing.T, id, agent, skill, tool, outcome string, ms int64, msg string) {
		d := callEventData{CallID: id, Agent: agent, Skill: skill, Tool: tool, Outcome: outcome, DurationMS: ms, Error: msg}
		want, _ := json.Marshal(&d)
		if got := d.appendJSON(nil); string(got) != string(want) {
			t.Errorf("appendJSON = %s, want %s", got, want)
		}
	})
}

// BenchmarkCallEventData encodes a call's event data by hand and with
// encoding/json.
func BenchmarkCallEventData(b *testing.B) {
	d := callEventData{CallID: "call_0123456789abcdef", Agent: "relay", Skill: "fixture", Tool: "test_simple_text", Outcome: "ok", DurationMS: 3}
	b.Run("appendJSON", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			d.appendJSON(make([]byte, 0, 160))
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			json.Marshal(&d)
		}
	})
}
