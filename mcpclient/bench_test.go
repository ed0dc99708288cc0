package mcpclient

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"
)

// BenchmarkCallHTTP measures one tools/call over Streamable HTTP against
// a lean upstream on 127.0.0.1 that answers on an event stream, as the
// go-sdk servers do; the process holds both sides, so allocs/op counts
// the server's net/http work too.
func BenchmarkCallHTTP(b *testing.B) {
	f := &fake{toolsCall: func(w http.ResponseWriter, id string) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":"+id+",\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"This is a simple text response for testing.\"}]}}\n\n")
	}}
	url := serveFake(b, f)
	s, err := Connect(context.Background(), NewHTTP(url, nil, nil), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	params := json.RawMessage(`{"name":"test_simple_text","arguments":{},"_meta":{"progressToken":"mcpgate-1"}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Call(context.Background(), "tools/call", params, &CallOptions{ProgressToken: "mcpgate-1", Notify: func(string, json.RawMessage) {}}); err != nil {
			b.Fatal(err)
		}
	}
}
