//go:build (linux && race) || darwin || freebsd || netbsd || openbsd

package h1

import "syscall"

// errnoOf is err, an error of the syscall package's calls, as its Errno:
// 0 for nil, EIO for an error of another kind. (The builds that call the
// syscall package's socket functions use it: race builds on Linux, and
// the peek elsewhere.)
func errnoOf(err error) syscall.Errno {
	if err == nil {
		return 0
	}
	if errno, ok := err.(syscall.Errno); ok {
		return errno
	}
	return syscall.EIO
}
