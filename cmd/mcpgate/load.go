package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// loadConfig holds the flags of `mcpgate load`.
type loadConfig struct {
	url, key, tool, args string
	method               string
	sessions             int
	rate                 float64 // calls/s in all, paced (an open loop); 0 for a closed loop
	duration             time.Duration
	requests             int
	pid                  int
	idle                 int
	streams              bool
	keys                 bool          // a fresh idempotency_key per logical call
	retries              int           // further attempts of a failed call, with its key
	backoff              time.Duration // the first wait before a retry, doubled each time
	follow               bool          // initialize a lost session again
	events               string        // a file for one JSON line per failure, retry and lost session
	runID                string        // makes this run's keys unique
	turns                turnFlag      // targets called in turn instead of --url
	turnGap              time.Duration // with turns, the wait after each call
}

// runLoad load-tests tools/call: N sessions call one tool in a loop for
// a bounded time and count, then the latency distribution is printed.
func runLoad(ctx context.Context, env *Env, args []string) error {
	var c loadConfig
	fs := newFlagSet(env, "load", "load --url URL --key KEY [--method M] [--tool NAME --args JSON] [--sessions N] [--duration D] [--keys --retries N --follow --events FILE] [--idle N --pid PID] [--turn 'NAME URL KEY' … [--turn-gap D]]")
	fs.StringVar(&c.url, "url", "http://127.0.0.1:8094/demo/mcp", "the agent's MCP URL")
	fs.StringVar(&c.key, "key", "", "API key sent as Authorization: Bearer")
	fs.StringVar(&c.tool, "tool", "convert_units", "tool to call")
	fs.StringVar(&c.args, "args", `{"value":10,"from":"km","to":"mi"}`, "the tool's arguments, as JSON")
	fs.IntVar(&c.sessions, "sessions", 8, "concurrent MCP sessions, each calling in a loop")
	fs.Float64Var(&c.rate, "rate", 0, "send this many tools/call a second in all, each session on a fixed schedule (an open loop; a call held back by a slow one counts its latency from when it was due); 0 calls in a closed loop")
	fs.DurationVar(&c.duration, "duration", 10*time.Second, "how long to run (at most 10m)")
	fs.IntVar(&c.requests, "requests", 1_000_000, "stop after this many calls in all")
	fs.IntVar(&c.pid, "pid", 0, "the gateway's process ID, to report its CPU time per call and its memory (Linux)")
	fs.StringVar(&c.method, "method", "tools/call", "what each call is: tools/call, or tools/list (every page; its latency is that of the HTTP exchanges, without decoding the pages)")
	fs.IntVar(&c.idle, "idle", 0, "instead of calling, open this many idle sessions and report the gateway's resident memory per session (needs --pid)")
	fs.BoolVar(&c.streams, "streams", false, "with --idle, each session also holds its GET stream open")
	fs.BoolVar(&c.keys, "keys", false, "give every tools/call a fresh idempotency_key in its arguments")
	fs.IntVar(&c.retries, "retries", 0, "try a failed tools/call again up to N times with the same arguments and key (needs --keys); the last attempts may run past --duration")
	fs.DurationVar(&c.backoff, "retry-backoff", 100*time.Millisecond, "the first wait before a retry, doubled each time up to 2s (or what the gateway's retry_after_ms asks)")
	fs.BoolVar(&c.follow, "follow", false, "when the gateway no longer knows a session (HTTP 404), count it as lost and initialize a new one")
	fs.StringVar(&c.events, "events", "", "write one JSON line per failed attempt, lost session, retried and failed call to this file")
	fs.Var(&c.turns, "turn", `instead of --url and --key, a target "NAME URL KEY" (KEY none for none); repeated, one session each calls in turn, one call at a time, and each turn's p50 is reported over the first's (latency only, no CPU)`)
	fs.DurationVar(&c.turnGap, "turn-gap", 0, "with --turn, wait this long after each call before the next, so that what a process does after its response ends before the next turn's call rather than meeting it")
	if err := parseFlags(fs, env, args); err != nil {
		return helpIsOK(err)
	}
	if err := c.check(); err != nil {
		fmt.Fprintf(env.Stderr, "mcpgate load: %v\n", err)
		return errUsage
	}
	if c.idle > 0 {
		return openIdle(ctx, env, &c)
	}
	c.runID = newRunID()
	if len(c.turns) > 0 {
		return loadTurns(ctx, env, &c)
	}
	return load(ctx, env, &c)
}

// check validates the flags.
func (c *loadConfig) check() error {
	switch {
	case c.sessions < 1 || c.duration <= 0 || c.duration > 10*time.Minute || !json.Valid([]byte(c.args)):
		return errors.New("need --sessions ≥ 1, 0 < --duration ≤ 10m and --args as JSON")
	case c.rate < 0 || c.rate > 0 && c.method != "tools/call":
		return errors.New("--rate applies to --method tools/call and needs a rate ≥ 0")
	case c.method != "tools/call" && c.method != "tools/list":
		return fmt.Errorf("--method %q: want tools/call or tools/list", c.method)
	case c.idle < 0 || c.idle > 0 && c.pid <= 0:
		return errors.New("--idle N needs N ≥ 0 and --pid")
	case c.retries < 0 || c.retries > 1000 || c.backoff <= 0:
		return errors.New("need 0 ≤ --retries ≤ 1000 and --retry-backoff > 0")
	case c.retries > 0 && !c.keys:
		return errors.New("--retries needs --keys: a call retried without an idempotency key may run twice")
	case len(c.turns) > 0 && (c.method != "tools/call" || c.rate > 0 || c.idle > 0 || c.retries > 0 || c.follow):
		return errors.New("--turn applies to tools/call in a closed loop, without --rate, --idle, --retries or --follow")
	case c.turnGap < 0 || c.turnGap > time.Second || (c.turnGap > 0 && len(c.turns) == 0):
		return errors.New("--turn-gap needs --turn and 0 ≤ D ≤ 1s")
	case c.keys || c.retries > 0 || c.follow:
		if c.method != "tools/call" {
			return errors.New("--keys, --retries and --follow apply to --method tools/call")
		}
		if c.keys {
			return checkKeyArgs(c.args)
		}
	}
	return nil
}

// load runs the test and prints its report.
func load(ctx context.Context, env *Env, c *loadConfig) error {
	events, err := openEvents(c.events)
	if err != nil {
		return err
	}
	client := loadClient(c.url, c.sessions*2)
	sessions := make([]*loadSession, c.sessions)
	for i := range sessions {
		s := &loadSession{client: client, url: c.url, key: c.key, index: i}
		if err := s.initialize(ctx); err != nil {
			events.close()
			return fmt.Errorf("session %d: %w", i, err)
		}
		sessions[i] = s
	}
	cpu0 := processCPU(c.pid)
	res := runSessions(ctx, c, sessions, events)
	cpu1 := processCPU(c.pid)
	if err := events.close(); err != nil {
		return err
	}
	for _, s := range sessions {
		s.close(ctx)
	}
	res.print(env, c, cpu1-cpu0)
	if res.ok() == 0 {
		return fmt.Errorf("no call succeeded; first error: %v", res.firstErr)
	}
	return nil
}

// runSessions calls the tool from every session until time or count run
// out. With --retries, a call started in time goes on with its retries
// after that, so that the report says how each one ended.
func runSessions(ctx context.Context, c *loadConfig, sessions []*loadSession, events *loadEvents) *loadResult {
	callCtx := ctx
	ctx, cancel := context.WithTimeout(ctx, c.duration)
	defer cancel()
	if c.retries == 0 {
		callCtx = ctx
	}
	res := newLoadResult(events)
	var budget = int64(c.requests)
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := time.Now()
	for i, s := range sessions {
		wg.Add(1)
		pace := newPacer(start, c.rate, i, len(sessions))
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				mu.Lock()
				if budget <= 0 {
					mu.Unlock()
					return
				}
				budget--
				mu.Unlock()
				t, ok := pace.wait(ctx)
				if !ok {
					return
				}
				s.exchanged = 0
				err := s.do(callCtx, c, res)
				d := time.Since(t)
				if c.method == "tools/list" {
					d = s.exchanged
				}
				res.add(d, err, callCtx.Err() != nil)
			}
		}()
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	return res
}

// print writes the report.
func (r *loadResult) print(env *Env, c *loadConfig, cpu time.Duration) {
	slices.Sort(r.latencies)
	pct := func(p float64) time.Duration { return percentile(r.latencies, p) }
	w := env.Stdout
	if c.method == "tools/list" {
		fmt.Fprintf(w, "tools/list, every page, %d sessions, %s\n", c.sessions, r.elapsed.Round(time.Millisecond))
		fmt.Fprintf(w, "tools listed: %d\n", r.listed.Load())
	} else {
		fmt.Fprintf(w, "tool %s, %d sessions, %s\n", c.tool, c.sessions, r.elapsed.Round(time.Millisecond))
	}
	if c.rate > 0 {
		fmt.Fprintf(w, "offered: %.0f calls/s, paced (latency counts from when each call was due)\n", c.rate)
	}
	fmt.Fprintf(w, "calls: %d ok, %d failed\n", r.ok(), r.errors)
	fmt.Fprintf(w, "throughput: %.0f calls/s\n", float64(r.ok())/r.elapsed.Seconds())
	fmt.Fprintf(w, "latency: p50 %s  p90 %s  p99 %s  max %s\n", pct(.50), pct(.90), pct(.99), pct(1))
	if c.pid > 0 && r.ok() > 0 {
		fmt.Fprintf(w, "gateway CPU: %s total, %.1f µs per call\n", cpu, cpuPerCall(cpu, r.ok()))
	}
	r.printFailures(w, c)
	if r.firstErr != nil {
		fmt.Fprintf(w, "first error: %v\n", r.firstErr)
	}
	fmt.Fprintf(w, "summary: calls=%d calls_per_s=%.0f p50_us=%d cpu_us_per_call=%.1f %s offered_per_s=%.0f\n", r.ok(),
		float64(r.ok())/r.elapsed.Seconds(), pct(.50).Microseconds(), cpuPerCall(cpu, r.ok()), r.summaryFields(), c.rate)
}

// cpuPerCall divides the gateway's CPU time among the calls, in µs.
func cpuPerCall(cpu time.Duration, calls int) float64 {
	if calls == 0 {
		return 0
	}
	return float64(cpu.Microseconds()) / float64(calls)
}

// processCPU returns a process's user+system CPU time from /proc, or 0.
func processCPU(pid int) time.Duration {
	if pid <= 0 {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// Fields after the command name, which is in parentheses and may hold spaces.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	const ticks = 100 // USER_HZ on Linux
	return time.Duration(utime+stime) * time.Second / ticks
}

// loadSession is one MCP session of the load test.
type loadSession struct {
	client  *http.Client
	url     string
	key     string
	session string
	id      int
	stream  io.Closer // the GET stream, when held open
	// exchanged is the time spent in HTTP exchanges (from sending a
	// request to the end of its response's body) since it was last
	// zeroed. A tools/list's latency is that time, not the load client's
	// own decoding of the pages (1,000 tools are ~160 KB of JSON, which
	// encoding/json takes longer to decode than the gateway to serve).
	exchanged time.Duration
	index     int // the session's number in the run
	calls     int // logical calls made, numbering the keys
}

// initialize opens the session.
func (s *loadSession) initialize(ctx context.Context) error {
	body := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"mcpgate-load","version":"1"}}}`
	resp, err := s.post(ctx, body)
	if err != nil {
		return err
	}
	s.session = resp.Header.Get("Mcp-Session-Id")
	if s.session == "" {
		return fmt.Errorf("initialize: no Mcp-Session-Id in the response")
	}
	_, err = s.post(ctx, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return err
}

// do makes one call of the configured method.
func (s *loadSession) do(ctx context.Context, c *loadConfig, res *loadResult) error {
	if c.method == "tools/list" {
		n, err := s.listAll(ctx)
		if err == nil {
			res.listed.Store(int64(n))
		}
		return err
	}
	return s.keyedCall(ctx, c, res)
}

// call makes one tools/call and checks that it succeeded.
func (s *loadSession) call(ctx context.Context, tool, args string) error {
	s.id++
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, s.id, tool, args)
	resp, err := s.post(ctx, body)
	if err != nil {
		return err
	}
	var msg struct {
		Result *struct {
			IsError bool `json:"isError"`
		} `json:"result"`
		Error *rpcErrorBody `json:"error"`
	}
	if err := json.Unmarshal(resp.body, &msg); err != nil {
		// A reply cut short, as by a gateway that died while streaming it.
		return &callError{class: classTransport, msg: fmt.Sprintf("tools/call: %v", err)}
	}
	switch {
	case msg.Error != nil:
		return rpcCallError("tools/call", msg.Error)
	case msg.Result == nil || msg.Result.IsError:
		return &callError{class: classTool, msg: fmt.Sprintf("tools/call: the tool reported an error: %s", resp.body)}
	}
	return nil
}

// close ends the session.
func (s *loadSession) close(ctx context.Context) {
	if s.stream != nil {
		s.stream.Close()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, s.url, nil)
	if err != nil {
		return
	}
	s.headers(req)
	if resp, err := s.client.Do(req); err == nil {
		resp.Body.Close()
	}
}

// loadResponse is a response's headers and body.
type loadResponse struct {
	Header http.Header
	body   []byte
}

// post sends one JSON-RPC message and reads the reply.
func (s *loadSession) post(ctx context.Context, body string) (*loadResponse, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	s.headers(req)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	start := time.Now()
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, &callError{class: classTransport, msg: err.Error()}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	s.exchanged += time.Since(start)
	if err != nil {
		return nil, &callError{class: classTransport, msg: err.Error()}
	}
	if resp.StatusCode/100 != 2 {
		return nil, httpError(resp.StatusCode, b, s.session != "")
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b = lastSSEData(b)
	}
	return &loadResponse{Header: resp.Header, body: b}, nil
}

// lastSSEData returns the data of the last event of an SSE body that has
// any: the response, after any notifications and priming events.
func lastSSEData(b []byte) []byte {
	var last []byte
	for line := range bytes.Lines(b) {
		if data, ok := bytes.CutPrefix(bytes.TrimRight(line, "\r\n"), []byte("data:")); ok && len(bytes.TrimSpace(data)) > 0 {
			last = bytes.TrimSpace(data)
		}
	}
	return last
}

// headers sets the credential and session headers.
func (s *loadSession) headers(req *http.Request) {
	if s.key != "" {
		req.Header.Set("Authorization", "Bearer "+s.key)
	}
	if s.session != "" {
		req.Header.Set("Mcp-Session-Id", s.session)
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	}
}
