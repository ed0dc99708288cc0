package rest

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate"
)

// fakeResults keeps stored bodies in memory, refusing more than max bytes.
type fakeResults struct {
	max    int64
	user   string
	name   string
	ctype  string
	stored []byte
}

func (f *fakeResults) StoreResult(_ context.Context, userID, name, mimeType string, body io.Reader) (mcpgate.Content, error) {
	b, _ := io.ReadAll(io.LimitReader(body, f.max+1))
	if int64(len(b)) > f.max {
		return mcpgate.Content{}, mcpgate.Errorf(mcpgate.ETOOLARGE, "more than %d bytes", f.max)
	}
	f.user, f.name, f.ctype, f.stored = userID, name, mimeType, b
	return mcpgate.Content{Type: "resource_link", URI: "mcpgate://files/file_1", Name: name, MimeType: mimeType, Size: int64(len(b))}, nil
}

// spillCall calls a tool whose response is body (text/plain), with a
// response cap of 100 bytes, as user.
func spillCall(t *testing.T, results *fakeResults, user, body string, output ...string) *mcpgate.Result {
	srv := mustServe(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, body)
	})
	call := newCall(srv.URL, &mcpgate.Request{Method: "GET", Path: "/reports/big.txt"}, `{}`)
	call.Skill.MaxResponseBytes = 100
	call.Caller.UserID = user
	if len(output) > 0 {
		call.Tool.OutputSchema = json.RawMessage(output[0])
	}
	return mustCall(t, New(&Options{Results: results}), call)
}

// TestResponseOverCapStored: a response over the skill's cap is stored
// whole as a file of the caller's user; the result has its first part as
// text and a resource_link.
func TestResponseOverCapStored(t *testing.T) {
	body := strings.Repeat("0123456789", 1000)
	f := &fakeResults{max: 1 << 20}
	res := spillCall(t, f, "u1", body)
	if string(f.stored) != body || f.user != "u1" || f.name != "big.txt" || f.ctype != "text/plain; charset=utf-8" {
		t.Fatalf("stored %d bytes of user %q named %q (%s)", len(f.stored), f.user, f.name, f.ctype)
	}
	if res.IsError || len(res.Content) != 2 || res.Content[1].Type != "resource_link" || res.Content[1].Size != 10000 {
		t.Fatalf("result %+v", res)
	}
	if text := res.Content[0].Text; !strings.HasPrefix(text, body[:100]+"\n[the response is 10000 bytes") || !strings.Contains(text, "mcpgate://files/file_1") {
		t.Fatalf("text %q", text)
	}
}

// TestResponseOverCapCut: without a user, over the store's limit, or for
// a tool with an output schema, the response is cut as before.
func TestResponseOverCapCut(t *testing.T) {
	body := strings.Repeat("x", 1000)
	for name, tc := range map[string]struct {
		user   string
		max    int64
		output []string
		want   string
	}{
		"no user":       {"", 1 << 20, nil, "[response truncated: more than 100 bytes]"},
		"too large":     {"u1", 500, nil, "[the whole response could not be stored: more than 500 bytes]"},
		"output schema": {"u1", 1 << 20, []string{`{"type":"object"}`}, "[response truncated: more than 100 bytes]"},
	} {
		t.Run(name, func(t *testing.T) {
			res := spillCall(t, &fakeResults{max: tc.max}, tc.user, body, tc.output...)
			if len(res.Content) != 1 || !strings.HasSuffix(res.Content[0].Text, tc.want) {
				t.Fatalf("result %+v", res)
			}
		})
	}
}
