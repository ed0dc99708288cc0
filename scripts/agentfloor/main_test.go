package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestCallsGoThroughTheWorker starts a middle and a worker, then makes
// calls from several goroutines; each must come back with its own
// arguments echoed by the worker.
func TestCallsGoThroughTheWorker(t *testing.T) {
	srv := httptest.NewServer(newMiddle())
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go work(ctx, srv.URL, 4) //nolint:errcheck // ends with the test
	if got := post(t, srv.URL+"/mcp", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`); got != `{"jsonrpc":"2.0","id":0,"result":{}}` {
		t.Errorf("initialize answered %s", got)
	}
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"n":%d}}}`, i, i)
			var res struct {
				ID     int `json:"id"`
				Result struct {
					Content []struct{ Text string } `json:"content"`
				} `json:"result"`
			}
			if err := json.Unmarshal([]byte(post(t, srv.URL+"/mcp", body)), &res); err != nil {
				t.Error(err)
				return
			}
			if want := fmt.Sprintf(`echo: {"n":%d}`, i); res.ID != i || len(res.Result.Content) != 1 || res.Result.Content[0].Text != want {
				t.Errorf("call %d answered %+v, want %q", i, res, want)
			}
		})
	}
	wg.Wait()
}

// TestReplyWithoutCall: a reply no call waits for is refused, and a call
// whose client leaves before any worker takes it leaves no waiter behind.
func TestReplyWithoutCall(t *testing.T) {
	m := newMiddle()
	srv := httptest.NewServer(m)
	t.Cleanup(srv.Close)
	resp, err := http.Post(srv.URL+"/reply", "application/json", strings.NewReader(`{"id":7,"text":"late"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("a reply to no call: %s, want 404", resp.Status)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := m.call(ctx, json.RawMessage(`{}`)); err == nil {
		t.Error("a call with no worker returned no error")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.waiting) != 0 {
		t.Errorf("%d waiters left", len(m.waiting))
	}
}

// post posts body to url and returns the response's body.
func post(t *testing.T, url, body string) string {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Error(err)
		return ""
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Error(err)
	}
	return string(out)
}
