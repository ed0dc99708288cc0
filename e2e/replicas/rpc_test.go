package replicas

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// rpcSession is a raw MCP session over HTTP, for what the SDK client does
// not let a test steer: which stream to read, when to resume, what to
// answer.
type rpcSession struct {
	t   *testing.T
	url string
	key string
	id  string
}

// rpcClient bounds each exchange, reading included, so that a call that
// never ends fails its test instead of hanging the package.
var rpcClient = &http.Client{Timeout: 90 * time.Second}

// rpcReply is a JSON-RPC message with the HTTP status it came with.
type rpcReply struct {
	Status int
	Header http.Header
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int            `json:"code"`
		Message string         `json:"message"`
		Data    map[string]any `json:"data"`
	} `json:"error"`
	Body string
}

// openRPC initializes a session declaring caps as its capabilities.
func openRPC(t *testing.T, url, key, caps string) *rpcSession {
	t.Helper()
	s := &rpcSession{t: t, url: url, key: key}
	r := s.post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":` + caps + `,"clientInfo":{"name":"replicas","version":"1"}}}`)
	if r.Status != 200 || r.Header.Get("Mcp-Session-Id") == "" {
		t.Fatalf("initialize: HTTP %d %s", r.Status, r.Body)
	}
	s.id = r.Header.Get("Mcp-Session-Id")
	s.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return s
}

// send sends a request in the session (GET when body is empty) and
// returns the response unread; lastEventID, when set, resumes a stream.
func (s *rpcSession) send(body, lastEventID string) *http.Response {
	s.t.Helper()
	method, rd := http.MethodPost, io.Reader(strings.NewReader(body))
	if body == "" {
		method, rd = http.MethodGet, nil
	}
	req, _ := http.NewRequest(method, s.url, rd)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+s.key)
	if s.id != "" {
		req.Header.Set("Mcp-Session-Id", s.id)
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	}
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	resp, err := rpcClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	return resp
}

// post sends one message and returns the reply: the JSON body, or the
// last event of an SSE body.
func (s *rpcSession) post(body string) *rpcReply {
	s.t.Helper()
	resp := s.send(body, "")
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	r := &rpcReply{Status: resp.StatusCode, Header: resp.Header, Body: string(b)}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		var last []byte
		ev := newEvents(bytes.NewReader(b))
		for e, ok := ev.next(); ok; e, ok = ev.next() {
			last = e.data
		}
		b = last
	}
	_ = json.Unmarshal(b, r)
	return r
}

// event is one SSE event.
type event struct {
	id   string
	data []byte
}

// events reads SSE events one at a time.
type events struct{ br *bufio.Reader }

// newEvents reads events from r.
func newEvents(r io.Reader) *events { return &events{br: bufio.NewReader(r)} }

// next returns the next event with data, false at the end of the stream.
func (ev *events) next() (event, bool) { return ev.read(false) }

// nextAny returns the next event, priming events (no data) included.
func (ev *events) nextAny() (event, bool) { return ev.read(true) }

// read returns the next event with data, or, when primed, with an id.
func (ev *events) read(primed bool) (event, bool) {
	var e event
	for {
		line, err := ev.br.ReadString('\n')
		line = strings.TrimRight(line, "\r\n")
		switch {
		case strings.HasPrefix(line, "id:"):
			e.id = strings.TrimSpace(line[3:])
		case strings.HasPrefix(line, "data:"):
			e.data = append(e.data, strings.TrimSpace(line[5:])...)
		case line == "" && (len(e.data) > 0 || primed && e.id != ""):
			return e, true
		}
		if err != nil {
			return e, !primed && len(e.data) > 0
		}
	}
}

// message decodes an event's data.
func (e event) message() *rpcReply {
	var r rpcReply
	_ = json.Unmarshal(e.data, &r)
	r.Body = string(e.data)
	return &r
}

// toolNames lists the session's tools.
func (s *rpcSession) toolNames() []string {
	r := s.post(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	var res struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	_ = json.Unmarshal(r.Result, &res)
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	return names
}
