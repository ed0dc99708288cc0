//go:build race

package h1

import "syscall"

// sysRead is connIO's read in a race build: syscall.Read, not rawRead.
// Its race detector annotations order what a goroutine did before writing
// bytes to a socket before what another does after reading them, as
// net.Conn's do; without them a test's client and server in one process
// would be reported as racing. The runtime is told about this call, which
// only a race build makes (TestRawSyscalls runs rawRead and rawWrite
// themselves).
func sysRead(fd uintptr, p []byte) (int, syscall.Errno) {
	n, err := syscall.Read(int(fd), p)
	return max(n, 0), errnoOf(err)
}

// sysWrite is connIO's write in a race build: syscall.Write, for the same
// reason.
func sysWrite(fd uintptr, p []byte) (int, syscall.Errno) {
	n, err := syscall.Write(int(fd), p)
	return max(n, 0), errnoOf(err)
}
