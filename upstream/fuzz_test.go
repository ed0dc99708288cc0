package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate"
)

// sseCapture feeds stream to an sseBody in reads of at most chunk bytes
// and returns what its capture kept and what the SDK would read.
func sseCapture(stream []byte, chunk int) (json.RawMessage, *mcpgate.RPCError, []float64, []byte) {
	n := &notifier{}
	c := &capture{notifier: n, token: "t1", id: anyID}
	b := newSSEBody(context.Background(), io.NopCloser(&chunkReader{b: stream, n: chunk}), c)
	out, _ := io.ReadAll(b)
	return c.result(), c.upstreamError(), n.progress, out
}

// chunkReader returns at most n bytes per Read.
type chunkReader struct {
	b []byte
	n int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	k := min(len(p), r.n, len(r.b))
	copy(p, r.b[:k])
	r.b = r.b[k:]
	return k, nil
}

// FuzzSSECapture checks that the event-stream capture never panics, does
// not depend on how the stream is split into reads (nor does what the SDK
// reads, which never has an id field), and keeps the result of a
// well-formed response event byte for byte.
func FuzzSSECapture(f *testing.F) {
	f.Add([]byte("event: message\nid: 1\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"n\":12345678901234567890}}\n\n"), uint8(3))
	f.Add([]byte("data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"t1\",\"progress\":1}}\r\n\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"error\":{\"code\":-32602,\"message\":\"bad\"}}\n\n"), uint8(1))
	f.Add([]byte("data: {\"jsonrpc\":\"2.0\",\ndata: \"id\":1,\"result\":{}}\n\n: comment\n\n"), uint8(7))
	f.Add([]byte("retry: 10\n\ndata:\n\n"), uint8(2))
	f.Fuzz(func(t *testing.T, stream []byte, chunk uint8) {
		whole, wholeErr, wholeProgress, wholeOut := sseCapture(stream, len(stream)+1)
		split, splitErr, splitProgress, splitOut := sseCapture(stream, int(chunk%16)+1)
		if !bytes.Equal(whole, split) || (wholeErr == nil) != (splitErr == nil) || len(wholeProgress) != len(splitProgress) {
			t.Fatalf("split reads changed the capture: %s %v %v, then %s %v %v", whole, wholeErr, wholeProgress, split, splitErr, splitProgress)
		}
		if !bytes.Equal(wholeOut, splitOut) {
			t.Fatalf("split reads changed what the SDK reads: %q, then %q", wholeOut, splitOut)
		}
		for line := range bytes.SplitSeq(wholeOut, []byte("\n")) {
			if name, _ := sseField(bytes.TrimSuffix(line, []byte("\r"))); name == "id" {
				t.Fatalf("the SDK reads an id field: %q", line)
			}
		}
		if whole != nil && !json.Valid(whole) {
			t.Fatalf("captured invalid JSON %q", whole)
		}
		// Any JSON value as the result of a response event comes back
		// byte for byte.
		value := bytes.TrimSpace(stream)
		if json.Valid(value) && !bytes.ContainsAny(value, "\r\n") && string(value) != "null" {
			event := []byte(`data: {"jsonrpc":"2.0","id":1,"result":` + string(value) + "}\n\n")
			if got, _, _, _ := sseCapture(event, int(chunk%16)+1); !bytes.Equal(got, value) {
				t.Fatalf("result %s captured as %s", value, got)
			}
		}
	})
}

// FuzzToolNames checks that served tool names are valid with the prefix,
// unique within the skill, and depend only on the upstream names.
func FuzzToolNames(f *testing.F) {
	f.Add("p_", "get_weather\x00get weather\x00"+strings.Repeat("a", 70)+"\x00get_weather")
	f.Add("", "\x00\x00é\x00a.b-c")
	f.Add(strings.Repeat("x", 63), "a\x00b")
	f.Fuzz(func(t *testing.T, prefix, joined string) {
		if mcpgate.ValidToolName(prefix+"x") != nil || len(prefix) > mcpgate.MaxToolNameLen-12 {
			return // the skill's own validation refuses such a prefix
		}
		upstream := strings.Split(joined, "\x00")
		names := toolNames(prefix, upstream)
		again := toolNames(prefix, upstream)
		seen := map[string]bool{}
		for i, n := range names {
			if err := mcpgate.ValidToolName(mcpgate.ExposedName(prefix, n)); err != nil {
				t.Fatalf("upstream %q → %q: %v", upstream[i], n, err)
			}
			if seen[n] {
				t.Fatalf("name %q served twice for %q", n, upstream)
			}
			seen[n] = true
			if again[i] != n {
				t.Fatalf("upstream %q named %q, then %q", upstream[i], n, again[i])
			}
		}
	})
}
