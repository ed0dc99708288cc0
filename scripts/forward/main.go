// Command forward is a measuring stick, not part of the gateway: a TCP
// forwarder that copies bytes both ways between each client connection and
// a new connection to one upstream address, parsing nothing. It is the
// least any process in the middle of a call can cost: scripts/perf.sh
// relays the fixture through it beside the gateway, in the same run, so
// that the gateway's CPU per call and the latency it adds can be read
// against this floor.
package main

import (
	"io"
	"log"
	"net"
	"os"

	"github.com/mcpgate/mcpgate/scripts/internal/stick"
)

func main() {
	if len(os.Args) != 2 {
		log.Fatal("usage: forward UPSTREAM_HOST:PORT")
	}
	ln, err := stick.Listen()
	if err != nil {
		log.Fatal(err)
	}
	for {
		c, err := ln.Accept()
		if err != nil {
			log.Fatal(err)
		}
		go forward(c, os.Args[1])
	}
}

// forward copies c's bytes to a new connection to upstream and back, until
// either side closes.
func forward(c net.Conn, upstream string) {
	defer c.Close()
	u, err := net.Dial("tcp", upstream)
	if err != nil {
		log.Print(err)
		return
	}
	defer u.Close()
	done := make(chan struct{})
	go func() {
		io.Copy(u, c) //nolint:errcheck // either side's close ends both
		u.(*net.TCPConn).CloseWrite()
		close(done)
	}()
	io.Copy(c, u) //nolint:errcheck // either side's close ends both
	c.(*net.TCPConn).CloseWrite()
	<-done
}
