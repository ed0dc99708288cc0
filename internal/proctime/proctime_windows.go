package proctime

import (
	"syscall"
	"time"
)

// Self returns the user and kernel CPU time of the current process so far,
// all its threads included; zero when the system cannot tell.
func Self() time.Duration {
	h, err := syscall.GetCurrentProcess()
	if err != nil {
		return 0
	}
	var created, exited, kernel, user syscall.Filetime
	if err := syscall.GetProcessTimes(h, &created, &exited, &kernel, &user); err != nil {
		return 0
	}
	return ticks(kernel) + ticks(user)
}

// ticks converts a Filetime holding a duration (100 ns units, not a date)
// to a time.Duration.
func ticks(ft syscall.Filetime) time.Duration {
	return time.Duration(int64(ft.HighDateTime)<<32|int64(ft.LowDateTime)) * 100
}
