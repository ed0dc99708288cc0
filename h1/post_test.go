package h1

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// postAll Posts body to rawURL with fields, asking for the reply's
// Content-Type and X-Echo, and reads the whole body.
func postAll(ctx context.Context, tr *Transport, rawURL, fields, body string) (int, []string, string, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return 0, nil, "", err
	}
	status, values, rc, err := tr.Post(ctx, u, []byte(fields), []byte(body), []string{"Content-Type", "X-Echo"})
	if err != nil {
		return 0, nil, "", err
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	return status, values, string(b), err
}

// Post sends the fields it is given, reads the fields it is asked for,
// and keeps one connection for JSON and chunked event-stream replies
// alike.
func TestPostReusesConnection(t *testing.T) {
	s := mustServer(t, echo)
	tr := newTransport(t, nil)
	for i := range 20 {
		path, ct := "/json", "application/json"
		if i%2 == 1 {
			path, ct = "/sse", "text/event-stream"
		}
		body := `{"n":` + strings.Repeat("1", i+1) + `}`
		status, values, got, err := postAll(context.Background(), tr, s.URL+path, "X-Echo: yes\r\n", body)
		want := body
		if path == "/sse" {
			want = "data: " + body + "\n\n"
		}
		if err != nil || status != 200 || got != want || values[0] != ct || values[1] != "yes" {
			t.Fatalf("post %d: %d %q %q %v, want 200 %q [%s yes]", i, status, got, values, err, want, ct)
		}
	}
	if n := s.conns.Load(); n != 1 {
		t.Errorf("20 posts took %d connections, want 1", n)
	}
	if n := tr.Idle(); n != 1 {
		t.Errorf("%d idle connections after the posts, want 1", n)
	}
}

// Fields that could break the request's framing, or that the framing
// owns, are refused before any connection is made.
func TestPostRefusesBadFields(t *testing.T) {
	s := mustServer(t, echo)
	tr := newTransport(t, nil)
	for _, fields := range []string{
		"Bad Name: v\r\n",
		"X-A: one\rtwo\r\n",
		"X-A: one\ntwo\r\n",
		"X-A: v",
		": v\r\n",
		"Host: elsewhere\r\n",
		"Content-Length: 3\r\n",
		"Transfer-Encoding: chunked\r\n",
		"Connection: close\r\n",
	} {
		if _, _, _, err := postAll(context.Background(), tr, s.URL, fields, "{}"); !errors.Is(err, errHeader) {
			t.Errorf("fields %q: error %v, want errHeader", fields, err)
		}
	}
	if n := s.conns.Load(); n != 0 {
		t.Errorf("%d connections made for refused posts", n)
	}
	if _, _, _, err := postAll(context.Background(), tr, "https://127.0.0.1/", "", "{}"); err == nil {
		t.Error("Post took an https URL")
	}
}

// The request carries net/http's User-Agent unless its fields name one,
// and the Host of its URL.
func TestPostUserAgentAndHost(t *testing.T) {
	var agents, hosts atomic.Value
	s := mustServer(t, func(w http.ResponseWriter, r *http.Request) {
		agents.Store(strings.Join(r.Header.Values("User-Agent"), ","))
		hosts.Store(r.Host)
	})
	tr := newTransport(t, nil)
	for _, c := range []struct{ fields, want string }{
		{"", "Go-http-client/1.1"},
		{"User-Agent: mine\r\n", "mine"},
	} {
		if status, _, _, err := postAll(context.Background(), tr, s.URL+"/mcp", c.fields, "{}"); err != nil || status != 200 {
			t.Fatalf("post: %d %v", status, err)
		}
		if got := agents.Load(); got != c.want {
			t.Errorf("fields %q: the server saw User-Agent %q, want %q", c.fields, got, c.want)
		}
		if got, want := hosts.Load(), strings.TrimPrefix(s.URL, "http://"); got != want {
			t.Errorf("Host %q, want %q", got, want)
		}
	}
}

// A reply head that h1 does not parse where it lies (a Pragma field
// here) is read by http.ReadResponse: its fields and body come through
// all the same, after any interim 1xx head, and the connection is
// reused.
func TestPostUncommonHeadAndInterim(t *testing.T) {
	var conns atomic.Int32
	addr := listen(t, func(nc net.Conn) {
		conns.Add(1)
		eachRequest(nc, func(i int, req *http.Request) bool {
			io.Copy(io.Discard, req.Body)
			if i == 0 {
				io.WriteString(nc, "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 4\r\n\r\nplan")
			} else {
				io.WriteString(nc, "HTTP/1.1 200 OK\r\nPragma: no-cache\r\nX-Echo: old\r\nContent-Type: text/plain\r\nContent-Length: 3\r\n\r\nold")
			}
			return true
		})
	})
	tr := newTransport(t, nil)
	status, values, got, err := postAll(context.Background(), tr, addr, "", "{}")
	if err != nil || status != 200 || got != "plan" || values[0] != "application/json" {
		t.Fatalf("after 100 Continue: %d %q %q %v", status, got, values, err)
	}
	status, values, got, err = postAll(context.Background(), tr, addr, "", "{}")
	if err != nil || status != 200 || got != "old" || values[0] != "text/plain" || values[1] != "old" {
		t.Fatalf("uncommon head: %d %q %q %v", status, got, values, err)
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections, want 1", n)
	}
}

// A post that a kept-alive connection lost before any answer is sent
// again on a new connection only when its fields hold an idempotency
// key, as RoundTrip decides.
func TestPostLostConnectionRetry(t *testing.T) {
	for _, c := range []struct {
		name, fields string
		retried      bool
	}{
		{"with an idempotency key", "Idempotency-Key: k1\r\n", true},
		{"without", "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := newDropper(t)
			tr := newTransport(t, nil)
			if _, _, got, err := postAll(context.Background(), tr, d.url, c.fields, "a"); err != nil || got != "ok" {
				t.Fatalf("first post: %q, %v", got, err)
			}
			_, _, got, err := postAll(context.Background(), tr, d.url, c.fields, "a")
			want := []string{"1 POST a", "1 POST a"}
			if c.retried {
				if err != nil || got != "ok" {
					t.Fatalf("second post: %q, %v; want it sent again and answered", got, err)
				}
				want = append(want, "2 POST a")
			} else if err == nil {
				t.Fatalf("second post answered %q; want the lost connection's error", got)
			}
			if seen := d.requests(); strings.Join(seen, "|") != strings.Join(want, "|") {
				t.Errorf("the server saw %q, want %q", seen, want)
			}
		})
	}
}

// Cancelling the context ends a post that waits for its answer, with the
// context's error, and the connection is not pooled.
func TestPostCancelEndsTheExchange(t *testing.T) {
	release := make(chan struct{})
	s := mustServer(t, func(w http.ResponseWriter, r *http.Request) { <-release })
	defer close(release)
	tr := newTransport(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	if _, _, _, err := postAll(ctx, tr, s.URL, "", "{}"); !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if n := tr.Idle(); n != 0 {
		t.Errorf("%d idle connections after the cancelled post", n)
	}
}

// A reply without a body (202, Content-Length 0) gives its connection
// back at once.
func TestPostEmptyReply(t *testing.T) {
	s := mustServer(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusAccepted) })
	tr := newTransport(t, nil)
	u, _ := url.Parse(s.URL)
	status, _, rc, err := tr.Post(context.Background(), u, nil, []byte("{}"), nil)
	if err != nil || status != http.StatusAccepted || rc != http.NoBody {
		t.Fatalf("post: %d %v %v, want 202 and no body", status, rc, err)
	}
	if n := tr.Idle(); n != 1 {
		t.Errorf("%d idle connections, want 1", n)
	}
}

// A 101 reply ends the wait as RoundTrip's does, with the connection not
// pooled: no second head is waited for.
func TestPostSwitchingProtocols(t *testing.T) {
	addr := listen(t, oneRequest(func(nc net.Conn, req *http.Request) {
		io.WriteString(nc, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: nothing\r\nConnection: Upgrade\r\n\r\n")
		time.Sleep(time.Second) // no other head comes
	}))
	tr := newTransport(t, nil)
	u, _ := url.Parse(addr)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	status, _, rc, err := tr.Post(ctx, u, nil, []byte("{}"), nil)
	if err != nil || status != http.StatusSwitchingProtocols {
		t.Fatalf("post: %d %v, want 101", status, err)
	}
	rc.Close()
	if n := tr.Idle(); n != 0 {
		t.Errorf("%d idle connections after a 101", n)
	}
}

// Fields are taken as RoundTrip takes a Header's: a long name, and a name
// in any case, go out as they are.
func TestPostTakesWhatRoundTripTakes(t *testing.T) {
	var got atomic.Value
	s := mustServer(t, func(w http.ResponseWriter, r *http.Request) {
		got.Store(r.Header.Get("X-" + strings.Repeat("a", 80)))
	})
	tr := newTransport(t, nil)
	long := "X-" + strings.Repeat("a", 80) + ": long\r\n"
	if status, _, _, err := postAll(context.Background(), tr, s.URL, long, "{}"); err != nil || status != 200 {
		t.Fatalf("a long field name: %d %v", status, err)
	}
	if got.Load() != "long" {
		t.Errorf("the server saw %q", got.Load())
	}
	if _, _, _, err := postAll(context.Background(), tr, s.URL, "host: elsewhere\r\n", "{}"); !errors.Is(err, errHeader) {
		t.Errorf("a lower-case Host field: %v, want errHeader", err)
	}
}

// FuzzPostFields: whatever fields Post takes, the request it writes is
// one request, which net/http reads with exactly those fields (and the
// Content-Length, and the User-Agent Post adds when they have none),
// and the whole body: no field text can break the framing.
func FuzzPostFields(f *testing.F) {
	f.Add([]byte("X-A: 1\r\nMcp-Session-Id: abc\r\n"))
	f.Add([]byte("User-Agent: mine\r\nX-A:\r\n"))
	f.Add([]byte("X-A: one\rtwo\r\n"))
	f.Add([]byte("X-A: v\r\n\r\nGET / HTTP/1.1\r\n"))
	u, _ := url.Parse("http://example.test/mcp")
	f.Fuzz(func(t *testing.T, fields []byte) {
		fl, err := checkFields(fields)
		if err != nil {
			return
		}
		var buf bytes.Buffer
		c := &conn{bw: bufio.NewWriter(&buf), lim: headLimit{r: strings.NewReader(""), n: unlimited}}
		if err := c.writePost(&post{u: u, fields: fields, body: []byte("{}"), flags: fl}); err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(&buf)
		req, err := http.ReadRequest(br)
		if err != nil {
			t.Fatalf("fields %q: net/http cannot read the request: %v", fields, err)
		}
		body, err := io.ReadAll(req.Body)
		if err != nil || string(body) != "{}" || req.Host != "example.test" || req.URL.Path != "/mcp" || br.Buffered() != 0 {
			t.Fatalf("fields %q: body %q (%v), host %q, path %q, %d bytes after", fields, body, err, req.Host, req.URL.Path, br.Buffered())
		}
		want := bytes.Count(fields, []byte("\r\n")) + 1 // and Content-Length
		if !fl.agent {
			want++
		}
		n := 0
		for _, vs := range req.Header {
			n += len(vs)
		}
		if n != want {
			t.Fatalf("fields %q: net/http read %d fields (%v), want %d", fields, n, req.Header, want)
		}
	})
}
