package e2e

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// hookRequest is one request a webhook receiver got.
type hookRequest struct {
	ID, Type string
	Data     json.RawMessage
	Status   int // what the receiver answered
}

// hookReceiver is a webhook receiver on 127.0.0.1. It checks every
// request's signature the way docs/webhooks.md tells receivers to, and
// answers 500 to the first failFirst requests, 200 after.
type hookReceiver struct {
	t         *testing.T
	mu        sync.Mutex
	secret    string
	failFirst int
	got       []hookRequest
	URL       string
}

func newHookReceiver(t *testing.T, failFirst int) *hookReceiver {
	r := &hookReceiver{t: t, failFirst: failFirst}
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	r.URL = srv.URL + "/hooks/mcpgate"
	return r
}

func (r *hookReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.verify(req, body)
	var ev struct {
		ID, Type  string
		CreatedAt time.Time `json:"created_at"`
		Data      json.RawMessage
	}
	if err := json.Unmarshal(body, &ev); err != nil || ev.ID != req.Header.Get("Webhook-Id") || ev.CreatedAt.IsZero() || len(ev.Data) == 0 {
		r.t.Errorf("body %s (Webhook-Id %q): %v", body, req.Header.Get("Webhook-Id"), err)
	}
	status := http.StatusOK
	if len(r.got) < r.failFirst {
		status = http.StatusInternalServerError
	}
	r.got = append(r.got, hookRequest{ID: ev.ID, Type: ev.Type, Data: ev.Data, Status: status})
	w.WriteHeader(status)
	w.Write([]byte("receiver says " + strconv.Itoa(status)))
}

// verify checks the signature of "timestamp.body" and the timestamp's age.
func (r *hookReceiver) verify(req *http.Request, body []byte) {
	ts := req.Header.Get("Webhook-Timestamp")
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || time.Since(time.Unix(sec, 0)).Abs() > 5*time.Minute {
		r.t.Errorf("Webhook-Timestamp %q", ts)
	}
	m := hmac.New(sha256.New, []byte(r.secret))
	m.Write([]byte(ts + "."))
	m.Write(body)
	if want := "sha256=" + hex.EncodeToString(m.Sum(nil)); !hmac.Equal([]byte(req.Header.Get("Webhook-Signature")), []byte(want)) {
		r.t.Errorf("signature %q does not verify", req.Header.Get("Webhook-Signature"))
	}
}

// requests returns what the receiver got so far.
func (r *hookReceiver) requests() []hookRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]hookRequest(nil), r.got...)
}

// waitRequests waits until the receiver got n requests.
func (r *hookReceiver) waitRequests(t *testing.T, n int) []hookRequest {
	t.Helper()
	eventuallyWithin(t, 30*time.Second, func() bool { return len(r.requests()) >= n })
	return r.requests()
}

// delivery is a delivery as GET …/deliveries lists it.
type delivery struct {
	ID, State string
	EventID   string `json:"event_id"`
	EventType string `json:"event_type"`
	Log       []struct {
		Attempt, Status int
		Response        string
	}
}

// TestWebhooks subscribes a receiver on 127.0.0.1 (reachable through the
// SSRF guard because the gateway runs with --allow-private-networks) to
// call events: a call of a REST tool is delivered as call.completed, after
// the receiver answered 500 twice (retries come fast with a 100ms
// --webhook-backoff), every request signed; redelivery sends it again; a
// failing call gives call.failed.
func TestWebhooks(t *testing.T) {
	t.Parallel() // it mostly waits: see the package comment
	runWebhooks(t, nil)
}

// TestWebhooksOnPostgres is TestWebhooks on PostgreSQL, with a second
// replica sharing the database and the secret key: both deliverers claim
// from one outbox, and every attempt still reaches the receiver once,
// signed with the secret the first replica sealed.
func TestWebhooksOnPostgres(t *testing.T) {
	t.Parallel() // it mostly waits: see the package comment
	env := postgresEnv(t)
	runWebhooks(t, env, func(env []string) {
		startGateway(t, env, "--data-dir", t.TempDir(), "--allow-private-networks", "--webhook-backoff", "100ms")
	})
}

func runWebhooks(t *testing.T, env []string, replica ...func(env []string)) {
	backend := httptest.NewServer(itemsBackend())
	defer backend.Close()
	g, api, env := startWithUser(t, env, "--allow-private-networks", "--webhook-backoff", "100ms")
	for _, start := range replica {
		start(env)
	}
	api.mustDo("POST", "/agents", map[string]any{"id": "shop", "name": "Shop", "mcp_enabled": true}, http.StatusCreated, nil)
	api.mustDo("POST", "/agents/shop/skills", catalogSkill(backend.URL), http.StatusCreated, nil)
	rcv := newHookReceiver(t, 2)
	var hook struct{ ID, Secret string }
	api.mustDo("POST", "/webhooks", map[string]any{"url": rcv.URL, "events": []string{"call.completed", "call.failed"}}, http.StatusCreated, &hook)
	rcv.mu.Lock()
	rcv.secret = hook.Secret
	rcv.mu.Unlock()

	s := openSession(t, g.URL+"/shop/mcp", bearer(api.key))
	if r := s.post(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_item","arguments":{"id":"7"}}}`); r.Error != nil || r.Status != 200 {
		t.Fatalf("tools/call: HTTP %d %s", r.Status, r.Body)
	}
	got := rcv.waitRequests(t, 3)
	if got[0].Type != "call.completed" || got[1].ID != got[0].ID || got[2].ID != got[0].ID || got[2].Status != 200 {
		t.Fatalf("receiver got %+v, want call.completed three times, the last answered 200", got)
	}
	var list struct{ Deliveries []delivery }
	eventuallyWithin(t, 10*time.Second, func() bool {
		api.mustDo("GET", "/webhooks/"+hook.ID+"/deliveries", nil, http.StatusOK, &list)
		return len(list.Deliveries) == 1 && list.Deliveries[0].State == "succeeded"
	})
	d := list.Deliveries[0]
	if len(d.Log) != 3 || d.Log[0].Status != 500 || d.Log[1].Status != 500 || d.Log[2].Status != 200 || d.Log[0].Response != "receiver says 500" {
		t.Errorf("attempt log %+v", d.Log)
	}

	api.mustDo("POST", "/webhooks/"+hook.ID+"/deliveries/"+d.ID+"/redeliver", nil, http.StatusAccepted, nil)
	if got := rcv.waitRequests(t, 4); got[3].ID != d.EventID || got[3].Status != 200 {
		t.Errorf("redelivery: receiver got %+v", got[3])
	}

	s.post(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"get_item","arguments":{}}}`)
	if got := rcv.waitRequests(t, 5); got[4].Type != "call.failed" {
		t.Errorf("a failing call was delivered as %+v, want call.failed", got[4])
	}
}

// TestWebhookApprovalEvents subscribes a receiver to approval events: a
// call of a tool that needs approval sends approval.requested, naming the
// approval, and approving it through the API sends approval.decided.
func TestWebhookApprovalEvents(t *testing.T) {
	t.Parallel() // waits on timers and child processes
	backend := httptest.NewServer(itemsBackend())
	defer backend.Close()
	g, api, _ := startWithUser(t, nil, "--allow-private-networks")
	skill := catalogSkill(backend.URL)
	skill["auto_approve"] = false
	api.mustDo("POST", "/agents", map[string]any{"id": "shop", "name": "Shop", "mcp_enabled": true}, http.StatusCreated, nil)
	api.mustDo("POST", "/agents/shop/skills", skill, http.StatusCreated, nil)
	rcv := newHookReceiver(t, 0)
	var hook struct{ ID, Secret string }
	api.mustDo("POST", "/webhooks", map[string]any{"url": rcv.URL, "events": []string{"approval.requested", "approval.decided"}}, http.StatusCreated, &hook)
	rcv.mu.Lock()
	rcv.secret = hook.Secret
	rcv.mu.Unlock()

	s := openSession(t, g.URL+"/shop/mcp", bearer(api.key))
	done := make(chan *rpcResponse, 1)
	go func() {
		done <- s.post(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_item","arguments":{"id":"7"}}}`)
	}()
	got := rcv.waitRequests(t, 1)
	var asked struct {
		ApprovalID string `json:"approval_id"`
		Tool       string
		State      string
	}
	if err := json.Unmarshal(got[0].Data, &asked); err != nil || got[0].Type != "approval.requested" || asked.Tool != "get_item" || asked.State != "pending" {
		t.Fatalf("first event %s %s: %v", got[0].Type, got[0].Data, err)
	}
	api.mustDo("POST", "/approvals/"+asked.ApprovalID+"/approve", nil, http.StatusOK, nil)
	if r := <-done; r.Error != nil || !strings.Contains(r.Body, "Widget 7") {
		t.Errorf("the approved call answered HTTP %d %s", r.Status, r.Body)
	}
	got = rcv.waitRequests(t, 2)
	if got[1].Type != "approval.decided" || !strings.Contains(string(got[1].Data), `"state":"approved"`) || !strings.Contains(string(got[1].Data), asked.ApprovalID) {
		t.Errorf("second event %s %s", got[1].Type, got[1].Data)
	}
}
