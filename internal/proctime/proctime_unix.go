//go:build unix

package proctime

import (
	"syscall"
	"time"
)

// Self returns the user and system CPU time of the current process so far,
// all its threads included; zero when the system cannot tell.
func Self() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
