package netguard

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
)

// Policy says which addresses outbound connections may reach. The zero
// Policy is the strict one: public addresses only.
type Policy struct {
	// AllowPrivate lets connections reach loopback, private, link-local and
	// other non-public addresses; cloud metadata addresses stay refused.
	AllowPrivate bool
}

// CheckAddr returns a *BlockedError if the policy refuses ip.
func (p Policy) CheckAddr(ip netip.Addr) error {
	c := Classify(ip)
	if c == Public || (p.AllowPrivate && c != Metadata) {
		return nil
	}
	return &BlockedError{Addr: ip.WithZone(""), Class: c}
}

// CheckURL checks a URL before use, without resolving names: the scheme
// must be http or https, a host must be present, a literal IP address must
// pass CheckAddr, a numeric host must be a dotted-quad IPv4 address, and
// the name localhost is refused as loopback unless private addresses are
// allowed. Names are checked again, after resolution, when a Guard's client
// dials them. Errors never quote the URL, whose query may hold secrets.
func (p Policy) CheckURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("invalid URL: %w", err)
	}
	return p.Check(u)
}

// Check is CheckURL for a parsed URL.
func (p Policy) Check(u *url.URL) error {
	if u.Scheme != "http" && u.Scheme != "https" {
		return &BlockedError{Reason: fmt.Sprintf("scheme %q is not http or https", u.Scheme)}
	}
	host := u.Hostname()
	if host == "" {
		return &BlockedError{Reason: "the URL has no host"}
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		return p.CheckAddr(ip)
	}
	if looksNumeric(host) {
		return &BlockedError{Reason: fmt.Sprintf("host %q looks like an IP address but is not one in standard form", host)}
	}
	if isLocalhost(host) && !p.AllowPrivate {
		return &BlockedError{Host: host, Class: Loopback}
	}
	return nil
}

// looksNumeric reports whether host's last label is a number, decimal or
// hexadecimal, as in 2130706433, 127.1 or 0x7f.1: resolvers may read such
// names as IPv4 addresses, and no top-level domain is numeric.
func looksNumeric(host string) bool {
	host = strings.TrimSuffix(host, ".")
	last := host[strings.LastIndexByte(host, '.')+1:]
	if len(last) >= 2 && (last[:2] == "0x" || last[:2] == "0X") {
		return strings.Trim(last[2:], "0123456789abcdefABCDEF") == ""
	}
	return last != "" && strings.Trim(last, "0123456789") == ""
}

// isLocalhost reports whether host is localhost or a name under it, which
// resolvers answer with loopback addresses (RFC 6761).
func isLocalhost(host string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	return host == "localhost" || strings.HasSuffix(host, ".localhost")
}

// Control is a net.Dialer Control function that refuses connections to
// addresses the policy does not allow. It runs after name resolution, on
// the address about to be connected, so DNS rebinding and redirects cannot
// get around it.
func (p Policy) Control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &BlockedError{Reason: fmt.Sprintf("cannot check %s address %q", network, address)}
	}
	return p.CheckAddr(ap.Addr())
}
