package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// recordingAPI is a REST backend that keeps every request body.
type recordingAPI struct {
	mu     sync.Mutex
	bodies []string
}

func (a *recordingAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	a.mu.Lock()
	a.bodies = append(a.bodies, string(body))
	a.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"deleted": string(body)})
}

func (a *recordingAPI) seen() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.bodies...)
}

const filesConfig = `users:
  - name: alice
  - name: bob
agents:
  - id: files
    name: Files
    description: Deletes files.
    owner: alice
    mcp_enabled: true
    skills:
      - name: fs
        kind: rest
        base_url: BASE
        allow_private: true
        auto_approve: false
        approvers: [bob]
        tools:
          - name: delete
            description: Delete a file.
            input_schema: {type: object, properties: {path: {type: string}}, required: [path]}
            request: {method: POST, path: /delete, body: all}
          - name: stat
            description: Needs no approval.
            approval: never
            input_schema: {type: object, properties: {path: {type: string}}}
            request: {method: POST, path: /stat, body: all}
      - name: quick
        kind: rest
        base_url: BASE
        allow_private: true
        approval_timeout: 1s
        tools:
          - name: purge
            description: Purge, decided within a second or rejected.
            approval: required
            input_schema: {type: object}
            request: {method: POST, path: /purge, body: all}
`

// gated is a gateway serving the files agent, whose tools wait for a
// reviewer.
type gated struct {
	api        *recordingAPI
	env        []string
	cfg        string
	alice, bob string
	g          *gateway
	session    *rpcSession
}

func newGated(t *testing.T) *gated {
	t.Helper()
	s := &gated{api: &recordingAPI{}, env: []string{"MCPGATE_DATA_DIR=" + filepath.Join(t.TempDir(), "data")}}
	backend := httptest.NewServer(s.api)
	t.Cleanup(backend.Close)
	s.cfg = filepath.Join(t.TempDir(), "mcpgate.yaml")
	if err := os.WriteFile(s.cfg, []byte(strings.ReplaceAll(filesConfig, "BASE", backend.URL)), 0o600); err != nil {
		t.Fatal(err)
	}
	s.start(t)
	s.alice = strings.TrimSpace(runCLI(t, s.env, "key", "create", "--user", "alice"))
	s.bob = strings.TrimSpace(runCLI(t, s.env, "key", "create", "--user", "bob"))
	s.session = openSession(t, s.g.URL+"/files/mcp", bearer(s.alice))
	return s
}

func (s *gated) start(t *testing.T) {
	s.g = startGateway(t, s.env, "--config", s.cfg)
}

// callLater makes a tools/call in the background.
func (s *gated) callLater(id int, tool, args string) <-chan *rpcResponse {
	out := make(chan *rpcResponse, 1)
	go func() {
		out <- s.session.post(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, tool, args))
	}()
	return out
}

// approval is what the test reads of one.
type approval struct {
	ID        string          `json:"id"`
	Tool      string          `json:"tool"`
	State     string          `json:"state"`
	Arguments json.RawMessage `json:"arguments"`
	Reviewer  string          `json:"reviewer"`
}

// pending waits for the one pending approval and returns it.
func (s *gated) pending(t *testing.T) approval {
	t.Helper()
	var list struct{ Approvals []approval }
	eventually(t, func() bool {
		req, _ := http.NewRequest("GET", s.g.URL+"/api/v1/approvals?state=pending", nil)
		req.Header.Set("Authorization", "Bearer "+s.alice)
		_, body := do(t, req)
		list.Approvals = nil
		json.Unmarshal(body, &list)
		return len(list.Approvals) == 1
	})
	return list.Approvals[0]
}

// decide posts a decision and returns its status.
func (s *gated) decide(t *testing.T, key, id, verb, body string) int {
	t.Helper()
	req, _ := http.NewRequest("POST", s.g.URL+"/api/v1/approvals/"+id+"/"+verb, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	status, reply := do(t, req)
	t.Logf("%s %s: %d %s", verb, id, status, reply)
	return status
}

// resultText returns a tools/call result's first text and isError.
func resultText(t *testing.T, r *rpcResponse) (string, bool) {
	t.Helper()
	var res struct {
		Content []struct{ Text string } `json:"content"`
		IsError bool                    `json:"isError"`
	}
	if r.Error != nil || json.Unmarshal(r.Result, &res) != nil || len(res.Content) == 0 {
		t.Fatalf("tools/call: %s", r.Body)
	}
	return res.Content[0].Text, res.IsError
}

// TestApprovalGate drives the binary: a gated call waits until its owner
// approves it through the API and then reaches the backend once with its
// exact arguments; a second reviewer's late decision is 409; an approver's
// rejection with a reason, the timeout, and a call left pending across a
// restart (retried with its idempotency key) each end as they should.
func TestApprovalGate(t *testing.T) {
	t.Parallel() // waits on timers and child processes
	s := newGated(t)
	done := s.callLater(1, "delete", `{"path":"/tmp/a b"}`)
	a := s.pending(t)
	if a.Tool != "delete" || string(a.Arguments) != `{"path":"/tmp/a b"}` {
		t.Fatalf("pending approval %+v", a)
	}
	if st := s.decide(t, s.alice, a.ID, "approve", ""); st != 200 {
		t.Fatalf("approve: %d", st)
	}
	if text, isErr := resultText(t, <-done); isErr || !strings.Contains(text, `/tmp/a b`) {
		t.Fatalf("approved call: %s", text)
	}
	if got := s.api.seen(); len(got) != 1 || got[0] != `{"path":"/tmp/a b"}` {
		t.Fatalf("backend saw %q; want the approved arguments once", got)
	}
	if st := s.decide(t, s.bob, a.ID, "reject", `{"reason":"too late"}`); st != http.StatusConflict {
		t.Fatalf("late decision: %d, want 409", st)
	}

	done = s.callLater(2, "delete", `{"path":"/etc"}`)
	if st := s.decide(t, s.bob, s.pending(t).ID, "reject", `{"reason":"not the system files"}`); st != 200 {
		t.Fatalf("reject: %d", st)
	}
	if text, isErr := resultText(t, <-done); !isErr || text != "Call to delete was rejected by bob: not the system files" {
		t.Fatalf("rejected call: %q (isError %v)", text, isErr)
	}

	if text, isErr := resultText(t, <-s.callLater(3, "purge", `{}`)); !isErr || text != "rejected: no decision within 1s" {
		t.Fatalf("timed out call: %q (isError %v)", text, isErr)
	}
	if text, isErr := resultText(t, <-s.callLater(4, "stat", `{"path":"/"}`)); isErr || !strings.Contains(text, "deleted") {
		t.Fatalf("approval: never: %q", text)
	}
	checkRestartWhilePending(t, s)
}

// checkRestartWhilePending leaves a call with an idempotency key pending,
// restarts the gateway, retries the call (it attaches to the same
// approval) and approves it.
func checkRestartWhilePending(t *testing.T, s *gated) {
	t.Helper()
	args := `{"path":"/var/r","idempotency_key":"del-r"}`
	lost := s.callLater(5, "delete", args)
	before := s.pending(t)
	s.g.stop()
	<-lost
	s.start(t)
	s.session = openSession(t, s.g.URL+"/files/mcp", bearer(s.alice))
	if again := s.pending(t); again.ID != before.ID {
		t.Fatalf("after a restart the pending approval is %s, want %s", again.ID, before.ID)
	}
	done := s.callLater(6, "delete", args)
	if st := s.decide(t, s.alice, before.ID, "approve", ""); st != 200 {
		t.Fatalf("approve after restart: %d", st)
	}
	if text, isErr := resultText(t, <-done); isErr || !strings.Contains(text, "/var/r") {
		t.Fatalf("retried call: %q", text)
	}
	n := 0
	for _, b := range s.api.seen() {
		if strings.Contains(b, "/var/r") {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("backend saw the retried call %d times, want once", n)
	}
}
