//go:build !(linux || darwin || freebsd || netbsd || openbsd)

package h1

// peeker is not used here.
type peeker struct{}

// peekNow cannot peek here: an idle connection counts as open (a request
// on one the server closed fails), and a parked body's rest is waited for.
func (c *conn) peekNow() peekState { return peekUnknown }
