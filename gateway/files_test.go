package gateway

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mcpgate/mcpgate"
)

// fileReader reads file_1 for alice.
type fileReader struct{}

func (fileReader) ReadResource(_ context.Context, userID, uri string) (json.RawMessage, error) {
	if userID != "alice" || uri != mcpgate.FileURI("file_1") {
		return nil, mcpgate.Errorf(mcpgate.ENOTFOUND, "resource %q not found", uri)
	}
	return json.RawMessage(`{"contents":[{"uri":"mcpgate://files/file_1","text":"hi"}]}`), nil
}

// TestGatewayReadsItsFiles: with a FileReader every agent offers
// resources, resources/read of a file URI reads the caller's file, other
// URIs still go upstream, and an agent without upstreams lists none.
func TestGatewayReadsItsFiles(t *testing.T) {
	rec := &recorder{}
	g := New(&Options{Tables: newTables(t), Pipeline: rec, Upstreams: rec, Files: fileReader{}})
	docs := &mcpgate.Agent{ID: "docs"}
	caps, _ := g.Capabilities(t.Context(), docs)
	if caps["resources"] == nil || caps["prompts"] == nil {
		t.Errorf("Capabilities = %v, want resources besides the upstreams' prompts", caps)
	}
	read := func(user, uri string) (json.RawMessage, error) {
		return g.Relay(t.Context(), &mcpgate.Forward{Agent: docs, Method: "resources/read", Caller: mcpgate.Caller{UserID: user},
			Params: json.RawMessage(`{"uri":"` + uri + `"}`)})
	}
	if res, err := read("alice", "mcpgate://files/file_1"); err != nil || string(res) == "" || len(rec.forwards) != 0 {
		t.Errorf("read own file: %s, %v, %d forwards", res, err, len(rec.forwards))
	}
	if _, err := read("bob", "mcpgate://files/file_1"); mcpgate.ErrorCode(err) != mcpgate.ENOTFOUND {
		t.Errorf("read alice's file as bob: %v, want not found", err)
	}
	if _, err := read("alice", "file:///x"); err != nil || len(rec.forwards) != 1 {
		t.Errorf("read an upstream URI: %v, %d forwards; want it relayed", err, len(rec.forwards))
	}
	alone := New(&Options{Tables: newTables(t), Pipeline: rec, Files: fileReader{}})
	if res, err := alone.Relay(t.Context(), &mcpgate.Forward{Agent: docs, Method: "resources/list"}); err != nil || string(res) != `{"resources":[]}` {
		t.Errorf("resources/list without upstreams = %s, %v", res, err)
	}
}
