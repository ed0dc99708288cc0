package h1

import (
	"bufio"
	"bytes"
	"maps"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"testing"
)

// servedSeeds is how many of requestSeeds, the first ones, the server
// serves itself.
const servedSeeds = 5

// requestSeeds are heads of requests: the kinds the server serves itself,
// and each kind it leaves to net/http.
var requestSeeds = []string{
	// Served: what MCP clients send.
	"POST /agent/mcp HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Session-Id: abc\r\nContent-Length: 2\r\n\r\n{}",
	"POST /a/mcp?x=1&y=%20 HTTP/1.1\r\nHost: localhost\r\nUser-Agent: Go-http-client/1.1\r\nContent-Length: 0\r\nAuthorization: Bearer oag_x\r\nAccept-Encoding: gzip\r\n\r\n",
	"POST /a HTTP/1.1\r\nhost: [::1]:80\r\ncontent-length: 3\r\nconnection: keep-alive\r\nx-custom:  spaced value \t\r\n\r\nabc",
	"POST /a HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\nConnection: close\r\nX: 1\r\nX: 2\r\n\r\nz",
	"POST /a HTTP/1.1\r\nHost: h\r\nContent-Length: 007\r\nEmpty:\r\n\r\n1234567",
	// Left to net/http.
	"GET /a/mcp HTTP/1.1\r\nHost: h\r\n\r\n",
	"POST /a HTTP/1.0\r\nHost: h\r\nContent-Length: 0\r\n\r\n",
	"POST /a HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
	"POST /a HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nx",
	"POST /a HTTP/1.1\r\nHost: h\r\nHost: i\r\nContent-Length: 0\r\n\r\n",
	"POST /a HTTP/1.1\r\nContent-Length: 0\r\n\r\n",
	"POST /a HTTP/1.1\r\nHost: h\r\n\r\n",
	"POST /a HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\nx",
	"POST /a HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\nX: a\r\n folded\r\n\r\n",
	"POST /a HTTP/1.1\nHost: h\nContent-Length: 0\n\n",
	"POST http://h/a HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n",
	"POST * HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n",
	"POST /a HTTP/1.1\r\nHost: h\r\nContent-Length: -1\r\n\r\n",
	"POST /a HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\nBad Name: x\r\n\r\n",
	"POST /a HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\nPragma: no-cache\r\n\r\n",
	"POST /a HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n",
	"POST /a HTTP/1.1\r\nHost: h\x01\r\nContent-Length: 0\r\n\r\n",
	"POST /a HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\nX: a\x00b\r\n\r\n",
	"POST /%zz HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n",
	"post /a HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n",
	"POST  /a HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n",
}

// TestRequestSeeds checks which seeds the server serves itself.
func TestRequestSeeds(t *testing.T) {
	for i, s := range requestSeeds {
		want := i < servedSeeds
		var h requestHead
		n := headEnd([]byte(s))
		got := n > 0 && h.parse([]byte(s)[:n])
		if got != want {
			t.Errorf("seed %d: served %v, want %v: %q", i, got, want, s)
		}
	}
}

// FuzzReadRequest holds the request heads the server parses itself to
// http.ReadRequest: each one it takes, net/http reads without an error, as
// the same request (method, target, URL, Host, header, length, close).
func FuzzReadRequest(f *testing.F) {
	for _, s := range requestSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(checkReadRequest)
}

// FuzzReadRequestParts is FuzzReadRequest with heads built of parts, so
// that the fuzzer varies a target, a host and a field inside a head whose
// framing is right.
func FuzzReadRequestParts(f *testing.F) {
	f.Add("/a/mcp?x=1", "127.0.0.1:8080", "Mcp-Session-Id", "abc", "2", "{}")
	f.Add("/%41/b;c", "[::1]", "connection", "close", "0", "")
	f.Add("//x/../y", "h", "x-a", " \tv\t ", "1", "z")
	f.Fuzz(func(t *testing.T, target, host, name, value, length, body string) {
		checkReadRequest(t, []byte("POST "+target+" HTTP/1.1\r\nHost: "+host+"\r\n"+name+": "+value+"\r\nContent-Length: "+length+"\r\n\r\n"+body))
	})
}

// checkReadRequest checks that a head at the start of b that h1 serves,
// http.ReadRequest reads the same way.
func checkReadRequest(t *testing.T, b []byte) {
	n := headEnd(b)
	var h requestHead
	if n <= 0 || !h.parse(b[:n]) {
		return
	}
	want, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(b)))
	if err != nil {
		t.Fatalf("h1 served a head net/http refuses (%v): %q", err, b[:n])
	}
	checkSameRequest(t, h.request(t.Context(), "", http.NoBody), want, b[:n])
}

// checkSameRequest compares what h1 and net/http read of one head.
func checkSameRequest(t *testing.T, got, want *http.Request, head []byte) {
	t.Helper()
	same := got.Method == want.Method && got.RequestURI == want.RequestURI &&
		got.URL.String() == want.URL.String() && got.Host == want.Host &&
		got.ContentLength == want.ContentLength && got.Close == want.Close &&
		got.ProtoMajor == want.ProtoMajor && got.ProtoMinor == want.ProtoMinor &&
		maps.EqualFunc(got.Header, want.Header, slices.Equal)
	if !same {
		t.Fatalf("h1 and net/http differ on %q:\nh1:       %s %s %q host=%q len=%d close=%v %v\nnet/http: %s %s %q host=%q len=%d close=%v %v",
			head, got.Method, got.RequestURI, got.URL, got.Host, got.ContentLength, got.Close, got.Header,
			want.Method, want.RequestURI, want.URL, want.Host, want.ContentLength, want.Close, want.Header)
	}
}

// TestRequestHeaderOneString keeps a parsed head's Request in few
// allocations: the header's values share one string.
func TestRequestHeaderOneString(t *testing.T) {
	b := []byte(requestSeeds[0])
	n := headEnd(b)
	var h requestHead
	if !h.parse(b[:n]) {
		t.Fatal("seed not served")
	}
	allocs := testing.AllocsPerRun(100, func() {
		var h requestHead
		h.parse(b[:n])
		_ = h.request(t.Context(), "", http.NoBody)
	})
	// The target string and its URL, the Host string, the Header's map
	// (two), its one string of values and its slice of first values, and
	// the Request (WithContext's copy; the literal stays on the stack).
	if allocs > 8 {
		t.Errorf("%v allocations per request head, want at most 8", allocs)
	}
}

// TestPlainPath: a plain path's URL is the one url.ParseRequestURI gives;
// any other target is left to it.
func TestPlainPath(t *testing.T) {
	for _, target := range []string{"/", "/relay/mcp", "//x/mcp", "/a/../b", "/./mcp", "/A-b_c.d~e/mcp/", "/x"} {
		want, err := url.ParseRequestURI(target)
		if got := plainPath(target); err != nil || got == nil || !reflect.DeepEqual(got, want) {
			t.Errorf("plainPath(%q) = %#v, url.ParseRequestURI %#v (%v)", target, got, want, err)
		}
	}
	for _, target := range []string{"/a?b", "/a%20b", "/a#b", "/a+b", "/a{b}", "/a!b", "/a;b", "/a@b", "/é", "/a:b", "/a=b"} {
		if got := plainPath(target); got != nil {
			t.Errorf("plainPath(%q) = %#v, want nil", target, got)
		}
	}
}
