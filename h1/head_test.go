package h1

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// Responses of the kinds an MCP server sends, readResponse's own.
const (
	sseReply = "HTTP/1.1 200 OK\r\nCache-Control: no-cache, no-transform\r\nConnection: keep-alive\r\n" +
		"Content-Type: text/event-stream\r\nMcp-Session-Id: KRGNYU3MEP3HUIMDSSY5CT7EUE\r\n" +
		"Date: Fri, 27 Nov 2026 17:57:37 GMT\r\nTransfer-Encoding: chunked\r\n\r\n" +
		"19\r\nevent: message\ndata: {}\n\n\r\n0\r\n\r\n"
	jsonReply = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 16\r\n" +
		"Date: Fri, 27 Nov 2026 17:57:37 GMT\r\n\r\n{\"jsonrpc\":\"2.0\"}"
)

// headSeeds are responses readResponse parses itself and responses it
// leaves to http.ReadResponse; each is followed by another response, so
// that what a body leaves in the reader is compared too.
var headSeeds = []string{
	sseReply,
	jsonReply,
	"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n",
	"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok",
	"HTTP/1.1 200 OK\r\nconnection: Keep-Alive\r\ncontent-length: 2\r\n\r\nok",
	"HTTP/1.1 200\r\nContent-Length: 2\r\n\r\nok",
	"HTTP/1.1 404 Not Found\r\nX-A: 1\r\nx-a: 2\r\nX-B:\t spaced \t\r\nContent-Length: 3\r\n\r\nno\n",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: CHUNKED\r\n\r\n2;ext=1\r\nok\r\n0\r\nX-Trailer: t\r\n\r\n",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\nok\r\n0\r\n\r\n",
	"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort",
	"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nok",
	"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nok",
	"HTTP/1.1 200 OK\r\nContent-Length: +2\r\n\r\nok",
	"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n",
	"HTTP/1.1 200 OK\r\nTrailer: X-T\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX-T: 1\r\n\r\n",
	"HTTP/1.1 200 OK\r\nPragma: no-cache\r\nContent-Length: 0\r\n\r\n",
	"HTTP/1.1 200 OK\r\nX-Folded: a\r\n b\r\nContent-Length: 0\r\n\r\n",
	"HTTP/1.1 200 OK\r\n Leading: space\r\nContent-Length: 0\r\n\r\n",
	"HTTP/1.1 200 OK\r\nBad Key: v\r\nContent-Length: 0\r\n\r\n",
	"HTTP/1.1 200 OK\r\nX-Ctl: a\x01b\r\nContent-Length: 0\r\n\r\n",
	"HTTP/1.1 200 OK\r\nX-Obs: caf\xc3\xa9\r\nContent-Length: 0\r\n\r\n",
	"HTTP/1.1 200 OK\nContent-Length: 2\n\nok",
	"HTTP/1.1 200 OK\r\nContent-Length: 2\n\r\nok",
	"HTTP/1.1 200 OK\r\n\r\nuntil the close",
	"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok",
	"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
	"HTTP/1.1 204 No Content\r\nContent-Length: 2\r\n\r\n",
	"HTTP/1.1 304 Not Modified\r\n\r\n",
	"HTTP/1.1 2x0 OK\r\nContent-Length: 0\r\n\r\n",
	"HTTP/1.1 2000 OK\r\nContent-Length: 0\r\n\r\n",
	"HTTP/1.1  200 OK\r\nContent-Length: 0\r\n\r\n",
	"HTTP/1.1 200 O\rK\r\nContent-Length: 0\r\n\r\n",
	"HTTP/1.1 200 OK\r\nConnection: keep-alive, close\r\nContent-Length: 0\r\n\r\n",
	"HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nConnection: close\r\nContent-Length: 0\r\n\r\n",
	"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n",
	"garbage\r\n\r\n",
	"",
}

// FuzzReadResponse holds readResponse to http.ReadResponse: the same
// response (status, header, framing, trailer), the same body and error,
// and the same bytes left in the reader after the body.
func FuzzReadResponse(f *testing.F) {
	for _, s := range headSeeds {
		f.Add([]byte(s), false)
		f.Add([]byte(s+jsonReply), true)
	}
	f.Fuzz(func(t *testing.T, data []byte, head bool) {
		method := http.MethodPost
		if head {
			method = http.MethodHead
		}
		req, _ := http.NewRequest(method, "http://127.0.0.1/mcp", nil)
		// A buffer of 64 bytes holds a head in parts: the fallback's case.
		for _, size := range []int{readBufSize, 64} {
			want, wantRest := readWith(t, data, size, func(br *bufio.Reader) (*http.Response, error) {
				return http.ReadResponse(br, req)
			})
			var fr framing
			got, gotRest := readWith(t, data, size, func(br *bufio.Reader) (*http.Response, error) {
				return readResponse(br, req, &fr)
			})
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("readResponse(%q):\n got %+v\nwant %+v", data, got, want)
			}
			if gotRest != wantRest {
				t.Fatalf("readResponse(%q) left %q, http.ReadResponse %q", data, gotRest, wantRest)
			}
		}
	})
}

// readResult is what a test compares of a response read.
type readResult struct {
	Err                          string
	Status                       string
	StatusCode                   int
	Proto                        string
	ProtoMajor, ProtoMinor       int
	Header, Trailer              http.Header
	ContentLength                int64
	TransferEncoding             []string
	Close, Uncompressed, Request bool
	Body, BodyErr                string
}

// readWith reads a response from data through a reader of size bytes
// with read, and its body to its end; it returns what it read and what
// was left in the reader.
func readWith(t *testing.T, data []byte, size int, read func(*bufio.Reader) (*http.Response, error)) (readResult, string) {
	t.Helper()
	br := bufio.NewReaderSize(bytes.NewReader(data), size)
	resp, err := read(br)
	if err != nil {
		rest, _ := io.ReadAll(br)
		return readResult{Err: err.Error()}, string(rest)
	}
	b, err := io.ReadAll(resp.Body)
	r := readResult{
		Status: resp.Status, StatusCode: resp.StatusCode, Proto: resp.Proto,
		ProtoMajor: resp.ProtoMajor, ProtoMinor: resp.ProtoMinor,
		Header: resp.Header, Trailer: resp.Trailer, ContentLength: resp.ContentLength,
		TransferEncoding: resp.TransferEncoding, Close: resp.Close,
		Uncompressed: resp.Uncompressed, Request: resp.Request != nil, Body: string(b),
	}
	if err != nil {
		r.BodyErr = err.Error()
	}
	rest, _ := io.ReadAll(br)
	return r, string(rest)
}

// TestReadResponseParsesCommonHeads checks that the heads of an MCP
// server's replies are parsed by readResponse itself, with the body read
// through its framing, and which heads go to http.ReadResponse.
func TestReadResponseParsesCommonHeads(t *testing.T) {
	for _, tt := range []struct {
		reply string
		own   bool
	}{
		{sseReply, true},
		{jsonReply, true},
		{"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok", true},
		{"HTTP/1.1 200 OK\r\n\r\nuntil the close", false},
		{"HTTP/1.1 200 OK\r\nX-Folded: a\r\n b\r\nContent-Length: 0\r\n\r\n", false},
	} {
		req, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", nil)
		var fr framing
		resp, err := readResponse(bufio.NewReader(strings.NewReader(tt.reply)), req, &fr)
		if err != nil {
			t.Fatal(err)
		}
		if own := resp.Body == io.ReadCloser(&fr); own != tt.own {
			t.Errorf("readResponse parsed %q itself: %v, want %v", tt.reply, own, tt.own)
		}
	}
}

// TestReadResponseAllocs counts the allocations of reading the head of
// an event stream reply: http.ReadResponse made 16.
func TestReadResponseAllocs(t *testing.T) {
	req, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", nil)
	r := strings.NewReader(sseReply)
	br := bufio.NewReader(r)
	var fr framing
	n := testing.AllocsPerRun(100, func() {
		r.Reset(sseReply)
		br.Reset(r)
		if _, err := readResponse(br, req, &fr); err != nil {
			t.Fatal(err)
		}
	})
	t.Logf("%v allocations", n)
	if n > 7 {
		t.Errorf("reading the head allocates %v times, want at most 7", n)
	}
}

// BenchmarkReadResponse reads the head and body of an event stream reply:
// readResponse against http.ReadResponse.
func BenchmarkReadResponse(b *testing.B) {
	req, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", nil)
	for _, tt := range []struct {
		name string
		read func(br *bufio.Reader, fr *framing) (*http.Response, error)
	}{
		{"h1", func(br *bufio.Reader, fr *framing) (*http.Response, error) { return readResponse(br, req, fr) }},
		{"net-http", func(br *bufio.Reader, _ *framing) (*http.Response, error) { return http.ReadResponse(br, req) }},
	} {
		b.Run(tt.name, func(b *testing.B) {
			r := strings.NewReader(sseReply)
			br := bufio.NewReaderSize(r, readBufSize)
			var fr framing
			b.ReportAllocs()
			for b.Loop() {
				r.Reset(sseReply)
				br.Reset(r)
				resp, err := tt.read(br, &fr)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
			}
		})
	}
}

// TestCanonicalKey: a field name comes back as net/textproto canonicalizes
// it; the common names of MCP exchanges without an allocation.
func TestCanonicalKey(t *testing.T) {
	common := []string{"access-control-allow-origin", "ACCESS-CONTROL-EXPOSE-HEADERS", "cache-control", "connection",
		"content-encoding", "content-length", "content-type", "date", "keep-alive", "mcp-protocol-version",
		"MCP-SESSION-ID", "server", "transfer-encoding", "vary", "x-accel-buffering", "x-content-type-options",
		"accept", "accept-encoding", "authorization", "host", "idempotency-key", "last-event-id", "origin",
		"traceparent", "tracestate", "user-agent", "x-agent-api-key"}
	for _, k := range append(common, "x-custom", "mcp-method", "a", "x--y", "0-abc") {
		if got, want := canonicalKey([]byte(k)), http.CanonicalHeaderKey(k); got != want {
			t.Errorf("canonicalKey(%q) = %q, want %q", k, got, want)
		}
	}
	for _, k := range common {
		b := []byte(k)
		if n := testing.AllocsPerRun(10, func() { canonicalKey(b) }); n != 0 {
			t.Errorf("canonicalKey(%q) allocates %v times, want none", k, n)
		}
	}
}
