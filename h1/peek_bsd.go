//go:build darwin || freebsd || netbsd || openbsd

package h1

import "syscall"

// peekFD peeks at the first byte waiting on the socket fd without waiting
// for one.
func peekFD(fd uintptr, b []byte) (int, syscall.Errno) {
	n, _, err := syscall.Recvfrom(int(fd), b, syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	return n, errnoOf(err)
}
