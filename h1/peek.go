package h1

// peekState is what a look at a connection that does not wait found.
type peekState int

const (
	peekNothing peekState = iota // nothing to read yet (EAGAIN)
	peekData                     // bytes wait to be read
	peekClosed                   // the peer closed, or the look failed
	peekUnknown                  // this platform cannot look
)

// alive reports whether an idle connection is still open: a look that
// does not wait finds nothing to read. The server's close (end of file)
// or anything it sent unasked means the connection is done.
func (c *conn) alive() bool {
	switch c.peekNow() {
	case peekNothing, peekUnknown:
		return true
	}
	return false
}
