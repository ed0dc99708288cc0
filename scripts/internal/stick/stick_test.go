package stick

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestServe: initialize is answered in the session, tools/call goes to
// call, a notification gets 202 and a body that is not JSON 400.
func TestServe(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		Serve(w, r, "s1", func(w http.ResponseWriter, msg *Message) {
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(msg.ID)+`,"result":`+string(msg.Params.Arguments)+`}`) //nolint:errcheck // the client's read checks
		})
	}))
	defer srv.Close()
	for _, tc := range []struct {
		name, body, session, want string
		status                    int
	}{
		{"initialize", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`, "s1", `{"jsonrpc":"2.0","id":1,"result":{}}`, 200},
		{"tools/call", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x","arguments":{"a":1}}}`, "", `{"jsonrpc":"2.0","id":2,"result":{"a":1}}`, 200},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, "", "", 202},
		{"not JSON", `{`, "", "", 400},
	} {
		resp, err := http.Post(srv.URL, "application/json", strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || resp.Header.Get("Mcp-Session-Id") != tc.session || tc.want != "" && string(got) != tc.want {
			t.Errorf("%s: %d %q session %q; want %d %q session %q", tc.name, resp.StatusCode, got, resp.Header.Get("Mcp-Session-Id"), tc.status, tc.want, tc.session)
		}
	}
}
