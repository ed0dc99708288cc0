// Command mcprelay is a measuring stick, not part of the gateway: the least
// work any MCP-to-MCP gateway must do per request. It decodes the JSON-RPC
// envelope, sends the method and params upstream under an id of its own in
// its one upstream session, reads the reply (JSON, or an event stream up to
// the event that answers) and answers with its result or error under the
// caller's id. It checks nothing, keeps no state but its upstream session
// and records nothing. scripts/perf.sh calls the fixture through it in turn
// with the gateway, so that the latency the gateway adds can be read against
// that of the plainest relay.
//
// With -h1 both of its HTTP sides are the gateway's own HTTP/1.1 (package
// h1), as on the gateway's plain-HTTP legs, and a reply's event stream is
// parked after its answer, as the gateway does; without, net/http's server
// and transport, the stream read to its end after the answer is sent.
// With -raw, no general-purpose layer at all (raw.go): HTTP/1.1 and the
// envelope by hand on net.Conn, the floor of a relay that parses what it
// relays.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"mime"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/mcpgate/mcpgate/h1"
	"github.com/mcpgate/mcpgate/scripts/internal/stick"
)

// protocolVersion is the revision the relay asks the upstream for and
// answers its own clients with.
const protocolVersion = "2025-11-25"

// The initialize params the relay sends upstream, and the result it
// answers its own clients' initialize with.
const (
	initializeParams = `{"protocolVersion":"` + protocolVersion + `","capabilities":{},"clientInfo":{"name":"mcprelay","version":"0"}}`
	initializeResult = `{"protocolVersion":"` + protocolVersion + `","capabilities":{"tools":{}},"serverInfo":{"name":"mcprelay","version":"0"}}`
)

// maxBody bounds a request's body and a reply's.
const maxBody = 4 << 20

func main() {
	useH1 := flag.Bool("h1", false, "serve and call upstream with the gateway's own HTTP/1.1 (package h1)")
	raw := flag.Bool("raw", false, "read and write HTTP/1.1 and the envelope by hand, one upstream connection a client connection")
	flag.Parse()
	if flag.NArg() != 1 || *useH1 && *raw {
		log.Fatal("usage: mcprelay [-h1 | -raw] UPSTREAM_MCP_URL")
	}
	run, err := start(flag.Arg(0), *useH1, *raw)
	if err != nil {
		log.Fatal(err)
	}
	ln, err := stick.Listen()
	if err != nil {
		log.Fatal(err)
	}
	log.Fatal(run(ln))
}

// start readies the relay to the MCP server at upstream (the upstream
// session opened, but for -raw, which opens one per client connection)
// and returns the function that serves a listener with it.
func start(upstream string, useH1, raw bool) (func(net.Listener) error, error) {
	if raw {
		rs, err := newRawServer(upstream)
		if err != nil {
			return nil, err
		}
		return rs.serve, nil
	}
	rl := &relay{url: upstream, client: newClient(useH1)}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := rl.connect(ctx); err != nil {
		return nil, err
	}
	return func(ln net.Listener) error { return serve(ln, rl, useH1) }, nil
}

// newClient returns the upstream's HTTP client: h1's transport, or
// net/http's.
func newClient(useH1 bool) *http.Client {
	if useH1 {
		d := &net.Dialer{}
		return &http.Client{Transport: &h1.Transport{Dial: d.DialContext, Next: http.DefaultTransport}}
	}
	return &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
}

// serve serves h on ln with h1's server (the connections it does not take
// go to net/http's), or with net/http's alone.
func serve(ln net.Listener, h http.Handler, useH1 bool) error {
	if !useH1 {
		return http.Serve(ln, h)
	}
	s := &h1.Server{Handler: h}
	go http.Serve(s.Handover(), h) //nolint:errcheck // ends with the process
	return s.Serve(ln)
}

// relay relays every request of its clients to one upstream session.
type relay struct {
	url     string
	client  *http.Client
	session string // the upstream's Mcp-Session-Id, set by connect
	seq     atomic.Int64
}

// envelope is the part of a JSON-RPC message the relay reads.
type envelope struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// connect initializes the upstream session.
func (rl *relay) connect(ctx context.Context) error {
	_, resp, err := rl.call(ctx, "initialize", json.RawMessage(initializeParams))
	if err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	end(resp.Body)
	rl.session = resp.Header.Get("Mcp-Session-Id")
	return rl.notify(ctx, "notifications/initialized")
}

// ServeHTTP answers initialize itself, takes notifications with 202 and
// relays every other request upstream.
func (rl *relay) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	var msg envelope
	if err == nil {
		err = json.Unmarshal(body, &msg)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	switch {
	case msg.ID == nil:
		w.WriteHeader(http.StatusAccepted)
	case msg.Method == "initialize":
		w.Header().Set("Mcp-Session-Id", "mcprelay")
		answer(w, msg.ID, json.RawMessage(initializeResult), nil)
	default:
		rl.relay(r.Context(), w, &msg)
	}
}

// relay sends msg upstream and answers with the upstream's reply; the rest
// of a reply's event stream is read (or parked) after the answer is sent.
func (rl *relay) relay(ctx context.Context, w http.ResponseWriter, msg *envelope) {
	reply, resp, err := rl.call(ctx, msg.Method, msg.Params)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	answer(w, msg.ID, reply.Result, reply.Error)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	end(resp.Body)
}

// call sends a request upstream and returns the message that answers it
// and the response it came in, whose body the caller ends (end).
func (rl *relay) call(ctx context.Context, method string, params json.RawMessage) (*envelope, *http.Response, error) {
	id := strconv.FormatInt(rl.seq.Add(1), 10)
	msg := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"method":%q`, id, method)
	if params != nil {
		msg = append(append(msg, `,"params":`...), params...)
	}
	resp, err := rl.post(ctx, append(msg, '}'))
	if err != nil {
		return nil, nil, err
	}
	reply, err := readReply(resp, id)
	if err != nil {
		resp.Body.Close()
		return nil, nil, err
	}
	return reply, resp, nil
}

// readReply reads the message of resp that answers request id: its JSON
// body, or the first event of its stream whose id is id.
func readReply(resp *http.Response, id string) (*envelope, error) {
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("the upstream answered HTTP %d", resp.StatusCode)
	}
	body := io.LimitReader(resp.Body, maxBody)
	if !isEventStream(resp) {
		var m envelope
		err := json.NewDecoder(body).Decode(&m)
		return &m, err
	}
	br := bufio.NewReader(body)
	for {
		data, err := readEvent(br)
		if errors.Is(err, io.EOF) {
			return nil, errNoAnswer
		}
		if err != nil {
			return nil, err
		}
		var m envelope
		if json.Unmarshal(data, &m) == nil && string(m.ID) == id && m.Method == "" {
			return &m, nil
		}
	}
}

// end ends a reply's body: parked when its transport can (h1), else read
// to its end so that its connection is kept.
func end(body io.ReadCloser) {
	if p, ok := body.(interface{ Park(time.Duration) }); ok {
		p.Park(time.Second)
		return
	}
	io.Copy(io.Discard, io.LimitReader(body, maxBody)) //nolint:errcheck // the close below ends it
	body.Close()
}

// answer writes the JSON-RPC response to id: result, or the error object.
func answer(w http.ResponseWriter, id, result, rpcErr json.RawMessage) {
	b := make([]byte, 0, len(id)+len(result)+len(rpcErr)+48)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	if rpcErr != nil {
		b = append(append(b, `,"error":`...), rpcErr...)
	} else {
		b = append(append(b, `,"result":`...), result...)
	}
	b = append(b, '}')
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.Write(b) //nolint:errcheck // the client's read tells
}

// errNoAnswer is the error of a reply stream that ended before the answer.
var errNoAnswer = errors.New("the upstream's event stream ended before its answer")

// post sends one JSON-RPC message upstream and returns the response.
func (rl *relay) post(ctx context.Context, msg []byte) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, rl.url, bytes.NewReader(msg))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if rl.session != "" {
		req.Header.Set("Mcp-Session-Id", rl.session)
		req.Header.Set("Mcp-Protocol-Version", protocolVersion)
	}
	return rl.client.Do(req)
}

// notify sends a notification upstream.
func (rl *relay) notify(ctx context.Context, method string) error {
	resp, err := rl.post(ctx, []byte(`{"jsonrpc":"2.0","method":"`+method+`"}`))
	if err != nil {
		return err
	}
	io.Copy(io.Discard, resp.Body) //nolint:errcheck // the status tells
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s: HTTP %d", method, resp.StatusCode)
	}
	return nil
}

// readEvent reads the data of the next event of an event stream.
func readEvent(br *bufio.Reader) ([]byte, error) {
	var data []byte
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return nil, err
		}
		line = bytes.TrimRight(line, "\r\n")
		switch {
		case len(line) == 0 && data != nil:
			return data, nil
		case bytes.HasPrefix(line, []byte("data:")):
			if data != nil {
				data = append(data, '\n')
			}
			data = append(data, bytes.TrimPrefix(line[5:], []byte(" "))...)
		}
	}
}

// isEventStream reports whether resp's body is an event stream.
func isEventStream(resp *http.Response) bool {
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return mt == "text/event-stream"
}
