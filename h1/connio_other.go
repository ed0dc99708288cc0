//go:build !linux

package h1

import (
	"io"
	"net"
)

// newConnIO returns nc: its own Read and Write are the ones used here
// (connio_linux.go says why Linux differs).
func newConnIO(nc net.Conn) io.ReadWriter { return nc }
