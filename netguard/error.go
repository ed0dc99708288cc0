package netguard

import (
	"errors"
	"fmt"
	"net/netip"
)

// ErrBlocked matches, with errors.Is, every refusal of the guard.
var ErrBlocked = errors.New("blocked by the SSRF guard")

// ErrTooManyRedirects is returned, wrapped in a *url.Error, when a response
// redirects more than MaxRedirects times.
var ErrTooManyRedirects = fmt.Errorf("stopped after %d redirects", MaxRedirects)

// BlockedError is a refusal of the guard: of an address, a host name, or a
// URL. Its text names what was refused and why, never a query string.
type BlockedError struct {
	// Host is the refused host name, when the refusal is about a name.
	Host string
	// Addr is the refused address, when the refusal is about one.
	Addr netip.Addr
	// Class says why the host or address is refused; empty otherwise.
	Class Class
	// Reason says what is wrong when the refusal is not about a host or
	// address, such as a scheme other than http or https.
	Reason string
}

// Error returns, for example, "blocked by the SSRF guard: address 10.0.0.5
// is private".
func (e *BlockedError) Error() string {
	switch {
	case e.Addr.IsValid():
		return fmt.Sprintf("%s: address %s is %s", ErrBlocked, e.Addr, e.Class)
	case e.Class != Public:
		return fmt.Sprintf("%s: host %s is %s", ErrBlocked, e.Host, e.Class)
	}
	return fmt.Sprintf("%s: %s", ErrBlocked, e.Reason)
}

// Is reports whether target is ErrBlocked.
func (e *BlockedError) Is(target error) bool { return target == ErrBlocked }

// Overridable reports whether a policy with AllowPrivate would let the host
// or address through: true for every class but Metadata.
func (e *BlockedError) Overridable() bool {
	return e.Class != Public && e.Class != Metadata
}
