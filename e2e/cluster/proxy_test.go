package cluster

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// fakeReplica serves name on every path; /sse streams two events, the
// second only after the test read the first.
func fakeReplica(t *testing.T, i int, name string, next <-chan struct{}) *Replica {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if r.URL.Path != "/sse" {
			fmt.Fprintf(w, "%s %s %s", name, r.Host, b)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: one\n\n")
		w.(http.Flusher).Flush()
		<-next
		fmt.Fprint(w, "data: two\n\n")
	}))
	t.Cleanup(srv.Close)
	r := &Replica{Index: i, Addr: strings.TrimPrefix(srv.URL, "http://")}
	r.ready.Store(true)
	return r
}

// TestProxyRoundRobin checks that requests rotate over the ready replicas,
// that a refused connection moves the request (body and all) to the next
// replica, and that the inbound Host reaches the replica.
func TestProxyRoundRobin(t *testing.T) {
	a, b := fakeReplica(t, 0, "a", nil), fakeReplica(t, 1, "b", nil)
	dead := &Replica{Index: 2, Addr: mustFreeAddr(t)}
	dead.ready.Store(true) // the probes have not noticed yet
	p := NewProxy([]*Replica{a, b, dead})
	p.Header = http.Header{"X-Test": {"1"}}
	srv := httptest.NewServer(p)
	defer srv.Close()
	seen := map[string]int{}
	for range 6 {
		resp, err := http.Post(srv.URL+"/x", "text/plain", strings.NewReader("body"))
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		want := " " + strings.TrimPrefix(srv.URL, "http://") + " body"
		if !strings.HasSuffix(string(got), want) {
			t.Fatalf("got %q, want the replica's name and %q", got, want)
		}
		seen[string(got[:1])]++
	}
	if seen["a"] == 0 || seen["b"] == 0 || seen["a"]+seen["b"] != 6 {
		t.Errorf("requests per replica: %v", seen)
	}
	if dead.Ready() {
		t.Error("a refusing replica is still taken for ready")
	}
}

// TestProxyStreams checks that an SSE event reaches the client before the
// replica sends the next one.
func TestProxyStreams(t *testing.T) {
	next := make(chan struct{})
	p := NewProxy([]*Replica{fakeReplica(t, 0, "a", next)})
	srv := httptest.NewServer(p)
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/sse")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	line, err := br.ReadString('\n')
	if err != nil || line != "data: one\n" {
		t.Fatalf("first event: %q %v", line, err)
	}
	close(next)
	rest, _ := io.ReadAll(br)
	if !strings.Contains(string(rest), "data: two") {
		t.Errorf("rest of the stream: %q", rest)
	}
}

// mustFreeAddr returns an address nothing listens on.
func mustFreeAddr(t *testing.T) string {
	addr, err := FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	return addr
}
