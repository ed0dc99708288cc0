//go:build linux || darwin || freebsd || netbsd || openbsd

package h1

import (
	"net"
	"syscall"
)

// alive reports whether an idle connection is still open: a peek that
// does not wait finds nothing to read (EAGAIN). The server's close (end
// of file) or anything it sent unasked means the connection is done.
func alive(nc net.Conn) bool {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return true
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	open := false
	var buf [1]byte
	err = raw.Read(func(fd uintptr) bool {
		_, _, rerr := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		open = rerr == syscall.EAGAIN || rerr == syscall.EWOULDBLOCK
		return true
	})
	return err == nil && open
}
