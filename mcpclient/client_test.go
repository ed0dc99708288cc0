package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
)

// Both transports call the fixture's tools and relay its progress and log
// messages to the call, and its sampling request to Options.Request.
func TestEverythingServer(t *testing.T) {
	for name, tr := range map[string]func(t *testing.T) Transport{
		"http":  func(t *testing.T) Transport { return NewHTTP(everythingHTTP(t), nil, nil) },
		"stdio": everythingStdio,
	} {
		t.Run(name, func(t *testing.T) {
			var asked atomic.Int32
			s := connect(t, tr(t), &Options{
				Capabilities: json.RawMessage(`{"sampling":{}}`),
				Request: func(_ context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
					asked.Add(1)
					if method != "sampling/createMessage" {
						t.Errorf("request %s", method)
					}
					return json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"sampled"},"model":"m"}`), nil
				},
			})
			if s.ProtocolVersion() != ProtocolVersion || !contains(s.Capabilities(), "tools") {
				t.Fatalf("version %s, capabilities %s", s.ProtocolVersion(), s.Capabilities())
			}
			res, err := s.Call(callCtx(t), "tools/call", json.RawMessage(`{"name":"test_simple_text","arguments":{}}`), nil)
			if err != nil || !contains(res, `"text"`) {
				t.Fatalf("simple: %s, %v", res, err)
			}
			var mu sync.Mutex
			var got []string
			opts := &CallOptions{ProgressToken: "tok", Notify: func(method string, _ json.RawMessage) {
				mu.Lock()
				got = append(got, method)
				mu.Unlock()
			}}
			_, err = s.Call(callCtx(t), "tools/call", json.RawMessage(`{"name":"test_tool_with_progress","arguments":{},"_meta":{"progressToken":"tok"}}`), opts)
			mu.Lock()
			if err != nil || len(got) == 0 || got[0] != "notifications/progress" {
				t.Errorf("progress: %v, %v", got, err)
			}
			mu.Unlock()
			res, err = s.Call(callCtx(t), "tools/call", json.RawMessage(`{"name":"test_sampling","arguments":{"prompt":"hi"}}`), nil)
			if err != nil || !contains(res, "sampled") || asked.Load() != 1 {
				t.Errorf("sampling: %s, %v, asked %d", res, err, asked.Load())
			}
		})
	}
}

// An upstream's JSON-RPC error comes back as an *mcpgate.RPCError with its
// code, message and data.
func TestRPCError(t *testing.T) {
	s := connect(t, everythingStdio(t), nil)
	_, err := s.Call(callCtx(t), "no/such/method", nil, nil)
	var rpc *mcpgate.RPCError
	if !errors.As(err, &rpc) || rpc.Code != -32601 {
		t.Fatalf("err %v", err)
	}
}

// fake is a hand-made Streamable HTTP server whose tools/call reply a test
// shapes.
type fake struct {
	t         testing.TB
	version   string
	toolsCall func(w http.ResponseWriter, id string)
	get       func(w http.ResponseWriter, r *http.Request)
	mu        sync.Mutex
	deletes   int
	gone      bool // answer 404 to the session from now on
}

func (f *fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	gone := f.gone
	f.mu.Unlock()
	if gone && r.Header.Get("Mcp-Session-Id") != "" {
		http.Error(w, "no session", http.StatusNotFound)
		return
	}
	switch r.Method {
	case http.MethodDelete:
		f.mu.Lock()
		f.deletes++
		f.mu.Unlock()
		return
	case http.MethodGet:
		if f.get == nil {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		f.get(w, r)
		return
	}
	body, _ := io.ReadAll(r.Body)
	id := rpcID(f.t, body)
	switch {
	case strings.Contains(string(body), `"initialize"`):
		w.Header().Set("Mcp-Session-Id", "sess-1")
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, initResult(id, f.version))
	case strings.Contains(string(body), `"tools/call"`):
		if r.Header.Get("Mcp-Session-Id") != "sess-1" || r.Header.Get("Mcp-Protocol-Version") != f.version {
			f.t.Errorf("headers %v", r.Header)
		}
		f.toolsCall(w, id)
	default:
		w.WriteHeader(http.StatusAccepted)
	}
}

// serveFake starts f on 127.0.0.1.
func serveFake(t testing.TB, f *fake) string {
	f.t = t
	if f.version == "" {
		f.version = ProtocolVersion
	}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return srv.URL
}

// A POST's event stream that ends before the answer is resumed with GET
// and Last-Event-ID after the advised retry; a clean end tells Paused.
// The initialize result is passed on as the server's bytes.
func TestResumesStream(t *testing.T) {
	var lastID atomic.Value
	f := &fake{
		toolsCall: func(w http.ResponseWriter, id string) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "retry: 10\n")
			sseEvent(w, "ev-1", `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1}}`)
		},
	}
	f.get = func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Last-Event-ID") == "" {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		lastID.Store(r.Header.Get("Last-Event-ID"))
		w.Header().Set("Content-Type", "text/event-stream")
		// Ids: 1 is the server/discover the fake refuses (it predates the
		// stateless revision), 2 initialize, 3 the tools/call.
		sseEvent(w, "ev-2", `{"jsonrpc":"2.0","id":3,"result":{"content":[],"n":1.000000000000000000001}}`)
	}
	s := connect(t, NewHTTP(serveFake(t, f), nil, nil), nil)
	if !contains(s.InitializeResult(), "1.00000000000000000001") {
		t.Errorf("initialize result %s", s.InitializeResult())
	}
	var paused atomic.Int64
	var notes atomic.Int32
	res, err := s.Call(callCtx(t), "tools/call", json.RawMessage(`{"name":"x"}`), &CallOptions{
		Notify: func(string, json.RawMessage) { notes.Add(1) },
		Paused: func(retry time.Duration) { paused.Store(int64(retry)) },
	})
	if err != nil || !contains(res, "1.000000000000000000001") {
		t.Fatalf("result %s, %v", res, err)
	}
	if lastID.Load() != "ev-1" || time.Duration(paused.Load()) != 10*time.Millisecond || notes.Load() != 1 {
		t.Errorf("last id %v, paused %v, notes %d", lastID.Load(), time.Duration(paused.Load()), notes.Load())
	}
}

// A stream that ends before the answer without an event id cannot be
// resumed: the call fails saying so.
func TestLostStream(t *testing.T) {
	f := &fake{toolsCall: func(w http.ResponseWriter, _ string) {
		w.Header().Set("Content-Type", "text/event-stream")
		sseEvent(w, "", `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`)
	}}
	s := connect(t, NewHTTP(serveFake(t, f), nil, nil), nil)
	_, err := s.Call(callCtx(t), "tools/call", json.RawMessage(`{}`), nil)
	if err == nil || !strings.Contains(err.Error(), "before answering") {
		t.Fatalf("err %v", err)
	}
}

// An answer that came on the GET stream before the request's POST
// failed is the call's result, not lost to the failure.
func TestAnswerBeforeFailedPost(t *testing.T) {
	ids, sent := make(chan string, 1), make(chan struct{})
	var s *Session
	f := &fake{toolsCall: func(w http.ResponseWriter, id string) {
		ids <- id
		<-sent
		for answered := false; !answered; time.Sleep(time.Millisecond) {
			s.mu.Lock()
			answered = len(s.pending) == 0 // the GET stream's reader took the answer
			s.mu.Unlock()
		}
		http.Error(w, "the upstream failed after answering", http.StatusInternalServerError)
	}}
	f.get = func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Last-Event-ID") != "" {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.(http.Flusher).Flush()
		select {
		case id := <-ids:
			sseEvent(w, "", `{"jsonrpc":"2.0","id":`+id+`,"result":{"content":[{"type":"text","text":"early"}]}}`)
			close(sent)
		case <-r.Context().Done():
			return
		}
		<-r.Context().Done()
	}
	s = connect(t, NewHTTP(serveFake(t, f), nil, nil), nil)
	res, err := s.Call(callCtx(t), "tools/call", json.RawMessage(`{}`), nil)
	if err != nil || !contains(res, `"early"`) {
		t.Fatalf("result %s, error %v; want the answer from the GET stream", res, err)
	}
}

// A refused resumption fails the call at once, naming the status, and
// leaves the session alone, even for 404.
func TestResumeRefused(t *testing.T) {
	for _, status := range []int{http.StatusBadRequest, http.StatusNotFound} {
		f := &fake{toolsCall: func(w http.ResponseWriter, _ string) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "retry: 1\n")
			sseEvent(w, "ev-1", `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`)
		}}
		f.get = func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Last-Event-ID") == "" {
				w.WriteHeader(http.StatusMethodNotAllowed)
				return
			}
			http.Error(w, "unknown event", status)
		}
		s := connect(t, NewHTTP(serveFake(t, f), nil, nil), nil)
		_, err := s.Call(callCtx(t), "tools/call", json.RawMessage(`{}`), nil)
		if err == nil || !strings.Contains(err.Error(), "HTTP "+strconv.Itoa(status)+": unknown event") {
			t.Fatalf("err %v", err)
		}
		if s.Err() != nil {
			t.Errorf("HTTP %d: the session ended: %v", status, s.Err())
		}
	}
}

// An older version the server answers with is accepted and sent in the
// header; one the client does not speak fails the connection.
func TestVersionNegotiation(t *testing.T) {
	f := &fake{version: "2025-06-18", toolsCall: func(w http.ResponseWriter, id string) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":`+id+`,"result":{}}`)
	}}
	s := connect(t, NewHTTP(serveFake(t, f), nil, nil), nil)
	if _, err := s.Call(callCtx(t), "tools/call", json.RawMessage(`{}`), nil); err != nil || s.ProtocolVersion() != "2025-06-18" {
		t.Fatalf("%s, %v", s.ProtocolVersion(), err)
	}
	bad := &fake{version: "1999-01-01"}
	_, err := Connect(callCtx(t), NewHTTP(serveFake(t, bad), nil, nil), nil)
	if err == nil || !strings.Contains(err.Error(), "1999-01-01") {
		t.Fatalf("err %v", err)
	}
}

// A 404 for the session is ErrSessionMissing and ends the session; Close
// sends DELETE.
func TestSessionMissingAndDelete(t *testing.T) {
	f := &fake{toolsCall: func(w http.ResponseWriter, id string) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":`+id+`,"result":{}}`)
	}}
	url := serveFake(t, f)
	s := connect(t, NewHTTP(url, nil, http.Header{"X-Key": {"secret"}}), nil)
	f.mu.Lock()
	f.gone = true
	f.mu.Unlock()
	_, err := s.Call(callCtx(t), "tools/call", json.RawMessage(`{}`), nil)
	if !errors.Is(err, ErrSessionMissing) {
		t.Fatalf("err %v", err)
	}
	select {
	case <-s.Done():
	default:
		t.Fatal("the session did not end")
	}
	f.mu.Lock()
	f.gone = false
	f.mu.Unlock()
	s2 := connect(t, NewHTTP(url, nil, nil), nil)
	s2.Close()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.deletes != 1 {
		t.Errorf("deletes %d", f.deletes)
	}
}

// Replies in JSON and in event streams leave their connection to the
// pool: ten calls open no new connections beyond the first ones (one for
// POSTs, one for the GET stream's attempt).
func TestConnectionsAreReused(t *testing.T) {
	f := &fake{}
	n := 0
	f.toolsCall = func(w http.ResponseWriter, id string) {
		n++
		if n%2 == 0 {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+id+`,"result":{}}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		sseEvent(w, "", `{"jsonrpc":"2.0","id":`+id+`,"result":{}}`)
	}
	f.t = t
	f.version = ProtocolVersion
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(f)
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	// A loaded machine may be slow to send a stream's end: wait for it
	// as long as it takes, since this test is about reuse, not time.
	tr := NewHTTP(srv.URL, nil, nil)
	tr.(*httpTransport).drainWait = time.Minute
	s := connect(t, tr, nil)
	// Connecting takes three POSTs now (the refused server/discover,
	// initialize, initialized), and the pool may race a new dial against
	// a connection on its way back after any of them: count from here.
	before := conns.Load()
	for range 10 {
		if _, err := s.Call(callCtx(t), "tools/call", json.RawMessage(`{}`), nil); err != nil {
			t.Fatal(err)
		}
		// A call returns with its answer, before the stream's end is read
		// in the background (TestAnswerBeforeStreamEnd): let that end, so
		// that the next call finds the connection in the pool.
		tr.(*httpTransport).drains.Wait()
	}
	if got := conns.Load() - before; got > 2 {
		t.Errorf("%d connections opened for 10 calls, want at most 2 (one the GET stream's attempt may take, one a dial racing a connection's return)", got)
	}
}

// A call returns as soon as its answer came on its reply stream, without
// waiting for the server to end the stream; the stream is still read to
// its end, even once the call's context ended, so that the connection
// serves the next call.
func TestAnswerBeforeStreamEnd(t *testing.T) {
	hold := make(chan struct{})
	f := &fake{toolsCall: func(w http.ResponseWriter, id string) {
		w.Header().Set("Content-Type", "text/event-stream")
		sseEvent(w, "", `{"jsonrpc":"2.0","id":`+id+`,"result":{"ok":true}}`)
		<-hold // the end of the stream comes later
	}}
	tr := NewHTTP(serveFake(t, f), nil, nil)
	tr.(*httpTransport).drainWait = time.Minute
	s := connect(t, tr, nil)
	// idle has a value when net/http's Transport put the connection of the
	// first call back in its pool. (Which idle connection the next call
	// then gets is net/http's choice: a connection dialed for the first
	// call, which found an idle one before its dial ended, may join the
	// pool later and be picked.)
	idle := make(chan struct{}, 1)
	call := func(i int) error {
		// The caller's context ends as soon as the call returns, as the
		// upstream backend's does: the stream's exchange outlives it.
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{PutIdleConn: func(err error) {
			if i == 0 && err == nil {
				idle <- struct{}{}
			}
		}})
		res, err := s.Call(ctx, "tools/call", json.RawMessage(`{}`), nil)
		if err == nil && string(res) != `{"ok":true}` {
			err = fmt.Errorf("got %s", res)
		}
		return err
	}
	done := make(chan error, 1)
	go func() { done <- call(0) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second): // not a timing: the stream is held until the call returns
		close(hold)
		t.Fatal("the call waited for the end of its reply stream")
	}
	close(hold) // the call returned while its stream was held open
	tr.(*httpTransport).drains.Wait()
	select {
	case <-idle:
	case <-time.After(10 * time.Second): // not a timing: net/http pools the connection before the body's end is read
		t.Fatal("the first call's connection did not go back to the pool after its stream ended")
	}
	if err := call(1); err != nil {
		t.Fatal(err)
	}
}

// A server that refuses the GET stream with a status other than 404 keeps
// the session: calls go on without it.
func TestGETRefusedKeepsSession(t *testing.T) {
	f := &fake{toolsCall: func(w http.ResponseWriter, id string) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":`+id+`,"result":{}}`)
	}}
	var gets atomic.Int32
	f.get = func(w http.ResponseWriter, _ *http.Request) {
		gets.Add(1)
		http.Error(w, "no", http.StatusBadRequest)
	}
	s := connect(t, NewHTTP(serveFake(t, f), nil, nil), nil)
	for gets.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	if _, err := s.Call(callCtx(t), "tools/call", json.RawMessage(`{}`), nil); err != nil || s.Err() != nil {
		t.Fatalf("call %v, session %v", err, s.Err())
	}
}

// Requests go through the client's Transport directly, but a redirect
// still goes through the client, whose policy follows it: an endpoint
// that moved (307, the POST kept) serves the session, and the client's
// CheckRedirect sees each hop.
func TestRedirectFollowsClientPolicy(t *testing.T) {
	f := &fake{toolsCall: func(w http.ResponseWriter, id string) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":`+id+`,"result":{"moved":true}}`)
	}}
	f.t, f.version = t, ProtocolVersion
	mux := http.NewServeMux()
	mux.Handle("/mcp", f)
	mux.HandleFunc("/old", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/mcp", http.StatusTemporaryRedirect)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	var hops atomic.Int32
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { hops.Add(1); return nil }}
	s := connect(t, NewHTTP(srv.URL+"/old", hc, nil), nil)
	res, err := s.Call(callCtx(t), "tools/call", json.RawMessage(`{"name":"x"}`), nil)
	if err != nil || string(res) != `{"moved":true}` {
		t.Fatalf("got %s, %v", res, err)
	}
	if hops.Load() == 0 {
		t.Error("the client's redirect policy never saw the redirect")
	}
	refusing := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return errors.New("no redirects") }}
	if _, err := Connect(callCtx(t), NewHTTP(srv.URL+"/old", refusing, nil), nil); err == nil || !strings.Contains(err.Error(), "no redirects") {
		t.Errorf("a client refusing redirects connected anyway: %v", err)
	}
}

// A request's method is written as a JSON string, as encoding/json writes
// it (mcpgate.AppendJSONString).
func TestAppendString(t *testing.T) {
	for _, s := range []string{"tools/call", "", `a"b`, `a\b`, "a\nb", "é", "<&>", "\x7f"} {
		want, _ := json.Marshal(s)
		if got := mcpgate.AppendJSONString(nil, s); string(got) != string(want) {
			t.Errorf("AppendJSONString(%q) = %s, want %s", s, got, want)
		}
	}
}
