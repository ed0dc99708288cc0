//go:build !unix && !windows

package proctime

import "time"

// Self returns zero: this system has no CPU time the package can read.
func Self() time.Duration { return 0 }
