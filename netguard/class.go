package netguard

import "net/netip"

// Class says why the guard treats an address as not public. The empty Class
// is a public address.
type Class string

// The classes of address the guard refuses unless a policy allows them.
const (
	Public      Class = ""
	Loopback    Class = "loopback"
	Private     Class = "private"
	LinkLocal   Class = "link-local"
	Unspecified Class = "unspecified"
	Multicast   Class = "multicast"
	Shared      Class = "shared address space (CGNAT)"
	Reserved    Class = "reserved"
	// Metadata is a cloud provider's instance metadata service, which hands
	// out credentials; no policy allows it.
	Metadata Class = "a cloud metadata service"
)

// Prefixes and addresses Classify needs beyond what netip.Addr reports.
// They are never modified after initialization.
var (
	metadataAddrs = []netip.Addr{
		netip.MustParseAddr("169.254.169.254"), // AWS, GCP, Azure, OpenStack, ...
		netip.MustParseAddr("fd00:ec2::254"),   // AWS over IPv6
		netip.MustParseAddr("100.100.100.200"), // Alibaba Cloud
		netip.MustParseAddr("169.254.170.2"),   // AWS ECS task credentials
		netip.MustParseAddr("169.254.170.23"),  // AWS EKS Pod Identity
		netip.MustParseAddr("fd00:ec2::23"),    // AWS EKS Pod Identity over IPv6
		netip.MustParseAddr("192.0.0.192"),     // Oracle Cloud
		netip.MustParseAddr("168.63.129.16"),   // Azure WireServer (a public address)
	}
	thisNetwork    = netip.MustParsePrefix("0.0.0.0/8")
	sharedSpace    = netip.MustParsePrefix("100.64.0.0/10")
	reservedV4     = netip.MustParsePrefix("240.0.0.0/4") // includes 255.255.255.255
	ietfProtocolV4 = netip.MustParsePrefix("192.0.0.0/24")
	compatibleV6   = netip.MustParsePrefix("::/96")
	nat64          = netip.MustParsePrefix("64:ff9b::/96")
	nat64Local     = netip.MustParsePrefix("64:ff9b:1::/48")
	sixToFour      = netip.MustParsePrefix("2002::/16")
)

// Classify returns the class of ip. IPv4-mapped IPv6 addresses are
// classified as the IPv4 address they map, and so are the IPv4 addresses
// embedded in NAT64 (64:ff9b::/96) and 6to4 (2002::/16) addresses, which
// a gateway on the path may translate into the embedded address.
func Classify(ip netip.Addr) Class {
	ip = ip.WithZone("").Unmap()
	if isMetadata(ip) {
		return Metadata
	}
	if v4, ok := embeddedV4(ip); ok {
		return Classify(v4)
	}
	switch {
	case !ip.IsValid():
		return Reserved
	case ip.IsLoopback():
		return Loopback
	case ip.IsUnspecified(), thisNetwork.Contains(ip):
		return Unspecified
	case ip.IsPrivate(), nat64Local.Contains(ip):
		return Private
	case ip.IsLinkLocalUnicast():
		return LinkLocal
	case ip.IsMulticast():
		return Multicast
	case sharedSpace.Contains(ip):
		return Shared
	case reservedV4.Contains(ip), ietfProtocolV4.Contains(ip), compatibleV6.Contains(ip):
		return Reserved
	}
	return Public
}

// isMetadata reports whether ip is a cloud metadata address.
func isMetadata(ip netip.Addr) bool {
	for _, m := range metadataAddrs {
		if ip == m {
			return true
		}
	}
	return false
}

// embeddedV4 returns the IPv4 address inside a NAT64 or 6to4 address.
func embeddedV4(ip netip.Addr) (netip.Addr, bool) {
	if !ip.Is6() {
		return netip.Addr{}, false
	}
	b := ip.As16()
	switch {
	case nat64.Contains(ip):
		return netip.AddrFrom4([4]byte(b[12:16])), true
	case sixToFour.Contains(ip):
		return netip.AddrFrom4([4]byte(b[2:6])), true
	}
	return netip.Addr{}, false
}
