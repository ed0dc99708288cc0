//go:build !race

package h1

import "syscall"

// sysRead is connIO's read: rawRead, out of the runtime's sight.
func sysRead(fd uintptr, p []byte) (int, syscall.Errno) { return rawRead(fd, p) }

// sysWrite is connIO's write: rawWrite.
func sysWrite(fd uintptr, p []byte) (int, syscall.Errno) { return rawWrite(fd, p) }
