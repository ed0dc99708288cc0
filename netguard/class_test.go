package netguard

import (
	"net/netip"
	"testing"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		addr string
		want Class
	}{
		{"8.8.8.8", Public},
		{"1.1.1.1", Public},
		{"2606:4700:4700::1111", Public},
		{"127.0.0.1", Loopback},
		{"127.255.0.9", Loopback},
		{"::1", Loopback},
		{"10.0.0.5", Private},
		{"172.16.0.1", Private},
		{"172.31.255.255", Private},
		{"172.32.0.1", Public},
		{"192.168.1.1", Private},
		{"fc00::1", Private},
		{"fd12:3456::1", Private},
		{"169.254.1.1", LinkLocal},
		{"fe80::1", LinkLocal},
		{"fe80::1%eth0", LinkLocal},
		{"0.0.0.0", Unspecified},
		{"0.1.2.3", Unspecified},
		{"::", Unspecified},
		{"224.0.0.1", Multicast},
		{"239.255.255.250", Multicast},
		{"ff02::1", Multicast},
		{"100.64.0.1", Shared},
		{"100.127.255.254", Shared},
		{"100.128.0.1", Public},
		{"255.255.255.255", Reserved},
		{"240.0.0.1", Reserved},
		{"::7f00:1", Reserved},
		{"169.254.169.254", Metadata},
		{"169.254.170.2", Metadata},
		{"169.254.170.23", Metadata},
		{"fd00:ec2::23", Metadata},
		{"192.0.0.192", Metadata},
		{"168.63.129.16", Metadata},
		{"fd00:ec2::254", Metadata},
		{"100.100.100.200", Metadata},
		// IPv4-mapped IPv6.
		{"::ffff:127.0.0.1", Loopback},
		{"::ffff:10.1.2.3", Private},
		{"::ffff:169.254.169.254", Metadata},
		{"::ffff:8.8.8.8", Public},
		// NAT64 and 6to4 embed an IPv4 address.
		{"64:ff9b::7f00:1", Loopback},
		{"64:ff9b::a9fe:a9fe", Metadata},
		{"64:ff9b::808:808", Public},
		{"64:ff9b:1::1", Private},
		{"2002:a00:1::", Private},
		{"2002:808:808::", Public},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			if got := Classify(netip.MustParseAddr(tt.addr)); got != tt.want {
				t.Errorf("Classify(%s) = %q, want %q", tt.addr, got, tt.want)
			}
		})
	}
}

func TestClassifyInvalid(t *testing.T) {
	if got := Classify(netip.Addr{}); got != Reserved {
		t.Errorf("Classify(zero Addr) = %q, want %q", got, Reserved)
	}
}
