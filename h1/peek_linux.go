package h1

import (
	"syscall"
	"unsafe"
)

// peekFD peeks at the first byte waiting on the socket fd without waiting
// for one, with a system call the runtime is not told about, as connIO
// reads and writes (connio_linux.go says why): the peek is the first call
// of a relayed call's upstream exchange.
func peekFD(fd uintptr, b []byte) (int, syscall.Errno) {
	n, _, errno := syscall.RawSyscall6(syscall.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)),
		syscall.MSG_PEEK|syscall.MSG_DONTWAIT, 0, 0)
	return int(n), errno
}
