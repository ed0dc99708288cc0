package mcpclient

import "context"

// Transport carries a session's messages: NewHTTP or NewStdio makes one.
// A transport serves one session.
type Transport interface {
	// start ties the transport to its session before initialize.
	start(s *Session) error
	// negotiated is told the version initialize agreed on, which the
	// requests after it carry.
	negotiated(version string)
	// initialized starts whatever listens for the server, once the
	// handshake's last message (notifications/initialized) went out.
	initialized()
	// send writes one message. For a request, p is its pending entry,
	// and the messages of its reply stream reach s.receive with p.
	send(ctx context.Context, msg []byte, p *pending) error
	// oneStream reports whether every message comes on one stream, so
	// that notifications cannot be told apart by stream.
	oneStream() bool
	// close ends the transport and waits for its goroutines.
	close() error
}
