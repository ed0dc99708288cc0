//go:build linux || darwin || freebsd || netbsd || openbsd

package h1

import (
	"testing"
	"time"
)

// A parked body whose end came is read and its connection reused even
// when the connection is taken after the body's wait: the pool may take
// it last, behind busier ones. (Where a peek cannot tell whether the end
// came, such a connection is closed.)
func TestParkedBodyEndedIsReusedPastWait(t *testing.T) {
	mustReuseEnded(t, newTransport(t, nil), time.Nanosecond)
}
