package h1

import (
	"net"
	"net/url"
	"runtime"
	"testing"
)

// TestAliveAllocatesNothing checks that the peek before each reuse of a
// connection allocates nothing once the connection made its peeker: it
// runs on every relayed call.
func TestAliveAllocatesNothing(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the peek is Linux's")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err == nil {
			defer c.Close()
			var b [1]byte
			c.Read(b[:]) // holds the connection open until the client closes
		}
	}()
	nc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	c := &conn{nc: nc}
	if !c.alive() {
		t.Fatal("an open idle connection counts as closed")
	}
	if n := testing.AllocsPerRun(100, func() { c.alive() }); n != 0 {
		t.Errorf("alive allocates %v times, want 0", n)
	}
}

// TestHostPortAllocs checks that the pool's key of a URL that names its
// port is its host, without a copy; the default port is added otherwise.
func TestHostPortAllocs(t *testing.T) {
	for _, tt := range []struct{ url, want string }{
		{"http://127.0.0.1:8080/mcp", "127.0.0.1:8080"},
		{"http://[::1]:8080/mcp", "[::1]:8080"},
		{"http://127.0.0.1/mcp", "127.0.0.1:80"},
		{"http://[::1]/mcp", "[::1]:80"},
	} {
		u, err := url.Parse(tt.url)
		if err != nil {
			t.Fatal(err)
		}
		if got := hostPort(u); got != tt.want {
			t.Errorf("hostPort(%s) = %q, want %q", tt.url, got, tt.want)
		}
	}
	u, _ := url.Parse("http://127.0.0.1:8080/mcp")
	if n := testing.AllocsPerRun(100, func() { hostPort(u) }); n != 0 {
		t.Errorf("hostPort allocates %v times, want 0", n)
	}
}
