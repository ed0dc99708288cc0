package main

import (
	"bufio"
	"io"
	"net"
	"testing"
	"time"
)

// TestForwardCopiesBothWaysAndCloses runs forward between a client and an
// upstream that answers each line with it upper-cased, then checks that the
// client's close reaches the upstream.
func TestForwardCopiesBothWaysAndCloses(t *testing.T) {
	up := listen(t)
	closed := make(chan struct{})
	go func() {
		c, err := up.Accept()
		if err != nil {
			return
		}
		defer close(closed)
		defer c.Close()
		r := bufio.NewReader(c)
		for {
			line, err := r.ReadBytes('\n')
			if err != nil {
				return // the forwarder passed the client's close on
			}
			io.WriteString(c, upper(string(line))) //nolint:errcheck // the client's read checks
		}
	}()
	front := listen(t)
	go func() {
		c, err := front.Accept()
		if err == nil {
			forward(c, up.Addr().String())
		}
	}()
	c, err := net.Dial("tcp", front.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(10 * time.Second)) //nolint:errcheck // a hang fails below
	r := bufio.NewReader(c)
	for _, msg := range []string{"hello\n", "second call\n"} {
		if _, err := io.WriteString(c, msg); err != nil {
			t.Fatal(err)
		}
		got, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if want := upper(msg); got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
	c.Close()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("the client's close did not reach the upstream")
	}
}

// listen returns a loopback listener closed with the test.
func listen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln
}

// upper upper-cases ASCII letters.
func upper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}
