// Command agentfloor is a measuring stick, not part of the gateway: the
// least work any gateway between an MCP client and a pull worker must do
// per tools/call, in the same three processes and over the same four
// loopback hops as mcpgate's agent round trip (client → middle → worker
// → middle → client), storing nothing. It is written with net/http alone.
//
//	agentfloor                      the middle: prints its address
//	agentfloor -worker http://ADDR  a worker of the middle at ADDR
//
// The middle answers initialize and tools/call on POST /mcp. A call's
// arguments go, as one server-sent event, to a worker holding GET /work;
// the worker posts the reply to POST /reply, and the middle answers the
// call with it. scripts/perf.sh runs `mcpgate load` against it beside the
// gateway's agent leg, with the same sessions and pacing, so that the
// gateway's p50 can be read against what this machine's processes and
// hops cost by themselves.
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
	"net/http"
	"strconv"
	"sync"

	"github.com/mcpgate/mcpgate/scripts/internal/stick"
)

func main() {
	worker := flag.String("worker", "", "run as a worker of the middle at this base URL")
	concurrency := flag.Int("concurrency", 16, "the worker's replies in flight")
	flag.Parse()
	if *worker != "" {
		log.Fatal(work(context.Background(), *worker, *concurrency))
	}
	ln, err := stick.Listen()
	if err != nil {
		log.Fatal(err)
	}
	log.Fatal(http.Serve(ln, newMiddle()))
}

// job is a call as the middle sends it to a worker.
type job struct {
	ID        uint64          `json:"id"`
	Arguments json.RawMessage `json:"arguments"`
}

// reply is a worker's answer to the job of the same ID.
type reply struct {
	ID   uint64 `json:"id"`
	Text string `json:"text"`
}

// middle hands each call to a worker and waits for its reply.
type middle struct {
	jobs chan job // taken by the workers' streams

	mu      sync.Mutex
	next    uint64
	waiting map[uint64]chan string // by job ID
}

// newMiddle returns a middle with no call in flight.
func newMiddle() *middle {
	return &middle{jobs: make(chan job), waiting: make(map[uint64]chan string)}
}

// ServeHTTP routes the three endpoints.
func (m *middle) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/mcp":
		m.serveMCP(w, r)
	case r.Method == http.MethodGet && r.URL.Path == "/work":
		m.serveWork(w, r)
	case r.Method == http.MethodPost && r.URL.Path == "/reply":
		m.serveReply(w, r)
	default:
		http.NotFound(w, r)
	}
}

// serveMCP answers initialize and tools/call, and accepts notifications.
func (m *middle) serveMCP(w http.ResponseWriter, r *http.Request) {
	stick.Serve(w, r, "floor", func(w http.ResponseWriter, msg *stick.Message) {
		text, err := m.call(r.Context(), msg.Params.Arguments)
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		quoted, _ := json.Marshal(text)
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":%s}]}}`, msg.ID, quoted)
	})
}

// call hands args to a worker and returns its reply, or ctx's error when
// the client leaves first.
func (m *middle) call(ctx context.Context, args json.RawMessage) (string, error) {
	j, answer := m.await(args)
	defer m.forget(j.ID)
	select {
	case m.jobs <- j:
	case <-ctx.Done():
		return "", ctx.Err()
	}
	select {
	case text := <-answer:
		return text, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// await registers a new job for args and returns it with the channel its
// reply arrives on.
func (m *middle) await(args json.RawMessage) (job, chan string) {
	answer := make(chan string, 1)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.next++
	m.waiting[m.next] = answer
	return job{ID: m.next, Arguments: args}, answer
}

// forget drops the job id's waiter.
func (m *middle) forget(id uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.waiting, id)
}

// serveWork streams jobs to one worker, one event each, until it leaves.
// A job the stream fails to write goes back to the others.
func (m *middle) serveWork(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	if err := rc.Flush(); err != nil {
		return
	}
	for {
		select {
		case j := <-m.jobs:
			if err := writeEvent(w, rc, j); err != nil {
				go func() { m.jobs <- j }()
				return
			}
		case <-r.Context().Done():
			return
		}
	}
}

// writeEvent writes j as one server-sent event and flushes it.
func writeEvent(w io.Writer, rc *http.ResponseController, j job) error {
	data, err := json.Marshal(j)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(w, "data: %s\n\n", data); err != nil {
		return err
	}
	return rc.Flush()
}

// serveReply hands a worker's reply to its waiting call: 204, or 404 when
// no call waits for it (it ended, or the ID is unknown).
func (m *middle) serveReply(w http.ResponseWriter, r *http.Request) {
	var rp reply
	if err := json.NewDecoder(r.Body).Decode(&rp); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	m.mu.Lock()
	answer := m.waiting[rp.ID]
	delete(m.waiting, rp.ID)
	m.mu.Unlock()
	if answer == nil {
		http.Error(w, "no call waits for job "+strconv.FormatUint(rp.ID, 10), http.StatusNotFound)
		return
	}
	answer <- rp.Text
	w.WriteHeader(http.StatusNoContent)
}

// work is the worker: it holds base's job stream and posts each job's
// reply ("echo: " and the arguments), n at a time, until the stream ends.
func work(ctx context.Context, base string, n int) error {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: n}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/work", nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s/work: %s", base, resp.Status)
	}
	jobs := make(chan job, n)
	defer close(jobs)
	for range n {
		go answer(ctx, client, base, jobs)
	}
	return readJobs(resp.Body, jobs)
}

// readJobs sends each event of the stream r to jobs until r ends.
func readJobs(r io.Reader, jobs chan<- job) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		data, ok := bytes.CutPrefix(sc.Bytes(), []byte("data: "))
		if !ok {
			continue
		}
		var j job
		if err := json.Unmarshal(data, &j); err != nil {
			return fmt.Errorf("a job: %w", err)
		}
		jobs <- j
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return errors.New("the job stream ended")
}

// answer posts the reply of each job it takes from jobs.
func answer(ctx context.Context, client *http.Client, base string, jobs <-chan job) {
	for j := range jobs {
		body, _ := json.Marshal(reply{ID: j.ID, Text: "echo: " + string(j.Arguments)})
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/reply", bytes.NewReader(body))
		if err != nil {
			log.Print(err)
			continue
		}
		resp, err := client.Do(req)
		if err != nil {
			log.Print(err)
			continue
		}
		io.Copy(io.Discard, resp.Body) //nolint:errcheck // only the connection's reuse needs it
		resp.Body.Close()
	}
}
