package replicas

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// on returns a copy of s whose requests go to replica i directly, past the
// proxy: the tests choose where each request lands.
func (s *rpcSession) on(e *env, i int, agent string) *rpcSession {
	c := *s
	c.url = e.Replica(i).URL + "/" + agent + "/mcp"
	return &c
}

// testElicitationElsewhere calls a tool with approval: caller on replica 0
// and answers the gate's elicitation/create with a POST to replica 1: the
// answer must reach the call waiting on replica 0, which then runs.
func testElicitationElsewhere(t *testing.T, e *env) {
	s := openRPC(t, e.URL+"/tools/mcp", e.key, `{"elicitation":{}}`)
	resp := s.on(e, 0, "tools").send(`{"jsonrpc":"2.0","id":"c1","method":"tools/call","params":{"name":"asked_echo","arguments":{"text":"elsewhere"}}}`, "")
	defer resp.Body.Close()
	ev := newEvents(resp.Body)
	req := nextMessage(t, ev, func(m *rpcReply) bool { return m.Method == "elicitation/create" })
	answer := `{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{"action":"accept","content":{"confirm":true}}}`
	if r := s.on(e, 1, "tools").post(answer); r.Status != http.StatusAccepted {
		t.Fatalf("answer on replica 1: HTTP %d %s", r.Status, r.Body)
	}
	res := nextMessage(t, ev, func(m *rpcReply) bool { return string(m.ID) == `"c1"` })
	if res.Error != nil || !strings.Contains(string(res.Result), "elsewhere") || strings.Contains(string(res.Result), `"isError":true`) {
		t.Fatalf("the call after an answer on another replica: %s", res.Body)
	}
}

// nextMessage reads events until one whose message matches, failing at the
// end of the stream.
func nextMessage(t *testing.T, ev *events, match func(*rpcReply) bool) *rpcReply {
	t.Helper()
	for e, ok := ev.next(); ok; e, ok = ev.next() {
		if m := e.message(); match(m) {
			return m
		}
	}
	t.Fatal("the stream ended before the expected message")
	return nil
}

// testResumeElsewhere opens the session's GET stream on replica 0, gets a
// notification on it, drops the connection, and resumes with
// Last-Event-ID on replica 1: replica 1 replays what replica 0 sent after
// that id, and relays what replica 0 sends next on the resumed stream.
func testResumeElsewhere(t *testing.T, e *env) {
	s, w := watchOn(t, e, 0)
	prime, first := w.prime, w.next(t).message()
	w.get.Body.Close()
	resumed := s.on(e, 1, "everything").send("", prime.id)
	defer resumed.Body.Close()
	if resumed.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resumed.Body)
		t.Fatalf("resume on replica 1: HTTP %d %s", resumed.StatusCode, b)
	}
	rev := newEvents(resumed.Body)
	replayed, ok := rev.next()
	if !ok || replayed.message().Method != first.Method {
		t.Fatalf("replica 1 replayed %q, want the %s replica 0 sent", replayed.data, first.Method)
	}
	if !strings.HasPrefix(replayed.id, prime.id[:12]) {
		t.Errorf("replayed event id %q is not of replica 0's stream %q", replayed.id, prime.id)
	}
	next, ok := rev.next()
	if !ok || next.message().Method == "" || !strings.HasPrefix(next.id, prime.id[:12]) {
		t.Fatalf("no live event relayed after the replay: %q %q", next.id, next.data)
	}
}

// watched is a session's GET stream on which the fixture sends
// resources/updated (every 3 s) for its watched resource.
type watched struct {
	get   *http.Response
	ev    *events
	prime event // the stream's priming event
}

// watchOn opens a session of the everything agent, its GET stream on
// replica i, and subscribes to the watched resource.
func watchOn(t *testing.T, e *env, i int) (*rpcSession, *watched) {
	t.Helper()
	s := openRPC(t, e.URL+"/everything/mcp", e.key, `{}`)
	w := &watched{get: s.on(e, i, "everything").send("", "")}
	w.ev = newEvents(w.get.Body)
	prime, ok := w.ev.nextAny()
	if !ok || prime.id == "" {
		t.Fatalf("GET on replica %d: HTTP %d, no priming event", i, w.get.StatusCode)
	}
	w.prime = prime
	if r := s.on(e, i, "everything").post(`{"jsonrpc":"2.0","id":3,"method":"resources/subscribe","params":{"uri":"test://watched-resource"}}`); r.Error != nil {
		t.Fatalf("subscribe: %s", r.Body)
	}
	return s, w
}

// next returns the stream's next notification.
func (w *watched) next(t *testing.T) event {
	t.Helper()
	for {
		x, ok := w.ev.next()
		if !ok {
			t.Fatal("the GET stream ended")
		}
		if x.message().Method != "" {
			return x
		}
	}
}

// testApprovalElsewhere holds a gated call on replica 2 and approves it
// through the management API on replica 0: the decision releases the call.
func testApprovalElsewhere(t *testing.T, e *env) {
	s := openRPC(t, e.URL+"/tools/mcp", e.key, `{}`)
	done := make(chan *rpcReply, 1)
	go func() {
		done <- s.on(e, 2, "tools").post(`{"jsonrpc":"2.0","id":"g1","method":"tools/call","params":{"name":"gated_echo","arguments":{"text":"approved elsewhere"}}}`)
	}()
	var id string
	waitUntil(t, 30*time.Second, "the pending approval", func() bool {
		id = pendingApproval(t, e, "approved elsewhere")
		return id != ""
	})
	req, _ := http.NewRequest("POST", e.Replica(0).URL+"/api/v1/approvals/"+id+"/approve", strings.NewReader(`{"reason":"fine"}`))
	req.Header.Set("Authorization", "Bearer "+e.key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("approve on replica 0: %v %v", err, resp)
	}
	resp.Body.Close()
	select {
	case r := <-done:
		if r.Error != nil || !strings.Contains(string(r.Result), "approved elsewhere") || strings.Contains(string(r.Result), `"isError":true`) {
			t.Fatalf("the call held on replica 2: %s", r.Body)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the call held on replica 2 was not released by a decision on replica 0")
	}
}

// pendingApproval returns the id of the pending approval whose arguments
// contain text, "" when there is none yet.
func pendingApproval(t *testing.T, e *env, text string) string {
	req, _ := http.NewRequest("GET", e.URL+"/api/v1/approvals?state=pending", nil)
	req.Header.Set("Authorization", "Bearer "+e.key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Approvals []struct {
			ID        string          `json:"id"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"approvals"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&out)
	for _, a := range out.Approvals {
		if strings.Contains(string(a.Arguments), text) {
			return a.ID
		}
	}
	return ""
}

// testSharedRateLimit calls limited_echo (6 a minute per credential)
// through the proxy, which spreads the calls over the three replicas: six
// pass and the seventh is refused, whichever replica it reaches.
func testSharedRateLimit(t *testing.T, e *env) {
	s := openRPC(t, e.URL+"/tools/mcp", e.key, `{}`)
	for i := range 9 {
		r := s.on(e, i%3, "tools").post(`{"jsonrpc":"2.0","id":` + itoa(i) + `,"method":"tools/call","params":{"name":"limited_echo","arguments":{}}}`)
		limited := r.Error != nil && r.Error.Data["reason"] == "rate_limited"
		if i < 6 && (r.Error != nil || strings.Contains(string(r.Result), `"isError":true`)) {
			t.Fatalf("call %d on replica %d: %s", i, i%3, r.Body)
		}
		if i >= 6 && !limited {
			t.Fatalf("call %d on replica %d passed a budget of 6 shared by three replicas: %s", i, i%3, r.Body)
		}
	}
}

// itoa formats a small int.
func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// testHandOver opens the session's GET stream on replica 0, gets a
// notification on it, and drains replica 0 (SIGTERM): once it has exited,
// a resumption with Last-Event-ID on replica 1 still replays what replica
// 0 sent, from the handover replica 0 stored before exiting. Replica 0 is
// started again afterwards.
func testHandOver(t *testing.T, e *env) {
	s, w := watchOn(t, e, 0)
	prime, first := w.prime, w.next(t).message()
	w.get.Body.Close()
	if err := e.Replica(0).Term(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.Replica(0).Start(); err != nil {
			t.Error(err)
		}
	})
	resumed := s.on(e, 1, "everything").send("", prime.id)
	defer resumed.Body.Close()
	rev := newEvents(resumed.Body)
	replayed, ok := rev.next()
	if !ok || replayed.message().Method != first.Method || !strings.HasPrefix(replayed.id, prime.id[:12]) {
		t.Fatalf("after replica 0 exited, replica 1 replayed %q %q, want the %s replica 0 sent", replayed.id, replayed.data, first.Method)
	}
}

// testNotifyElsewhere holds the session's GET stream on replica 1 and
// subscribes to a resource through replica 0: the upstream's
// resources/updated reaches replica 0's link and is passed on to the GET
// stream on replica 1.
func testNotifyElsewhere(t *testing.T, e *env) {
	s := openRPC(t, e.URL+"/everything/mcp", e.key, `{}`)
	get := s.on(e, 1, "everything").send("", "")
	defer get.Body.Close()
	ev := newEvents(get.Body)
	if _, ok := ev.nextAny(); !ok {
		t.Fatalf("GET on replica 1: HTTP %d, no priming event", get.StatusCode)
	}
	if r := s.on(e, 0, "everything").post(`{"jsonrpc":"2.0","id":3,"method":"resources/subscribe","params":{"uri":"test://watched-resource"}}`); r.Error != nil {
		t.Fatalf("subscribe on replica 0: %s", r.Body)
	}
	m := nextMessage(t, ev, func(m *rpcReply) bool { return m.Method != "" })
	if m.Method != "notifications/resources/updated" {
		t.Fatalf("the GET stream on replica 1 got %s", m.Body)
	}
}
