package netguard

import (
	"errors"
	"strings"
	"testing"
)

func TestPolicyControl(t *testing.T) {
	tests := []struct {
		address      string
		strict, priv bool // allowed by the strict and the allow-private policy
	}{
		{"8.8.8.8:443", true, true},
		{"[2606:4700:4700::1111]:443", true, true},
		{"127.0.0.1:80", false, true},
		{"[::1]:80", false, true},
		{"10.0.0.5:80", false, true},
		{"[fe80::1%eth0]:80", false, true},
		{"[::ffff:127.0.0.1]:80", false, true},
		{"100.64.1.1:80", false, true},
		{"169.254.169.254:80", false, false},
		{"[::ffff:169.254.169.254]:80", false, false},
		{"[fd00:ec2::254]:80", false, false},
		{"100.100.100.200:80", false, false},
		{"not-an-address", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.address, func(t *testing.T) {
			for _, p := range []Policy{{}, {AllowPrivate: true}} {
				err := p.Control("tcp", tt.address, nil)
				want := tt.strict
				if p.AllowPrivate {
					want = tt.priv
				}
				if (err == nil) != want {
					t.Errorf("%+v.Control(%s) = %v, want allowed %v", p, tt.address, err, want)
				}
				if err != nil && !errors.Is(err, ErrBlocked) {
					t.Errorf("error %v does not match ErrBlocked", err)
				}
			}
		})
	}
}

func TestPolicyCheckURL(t *testing.T) {
	tests := []struct {
		url    string
		policy Policy
		want   string // substring of the error; "" for none
	}{
		{"https://api.example.com/v1?key=secret", Policy{}, ""},
		{"http://example.com:8080/", Policy{}, ""},
		{"ftp://example.com/", Policy{}, `scheme "ftp" is not http or https`},
		{"file:///etc/passwd", Policy{AllowPrivate: true}, `scheme "file"`},
		{"example.com/path", Policy{}, `scheme ""`},
		{"http:///path", Policy{}, "no host"},
		{"http://127.0.0.1:9/", Policy{}, "address 127.0.0.1 is loopback"},
		{"http://127.0.0.1:9/", Policy{AllowPrivate: true}, ""},
		{"http://10.0.0.5/?token=secret", Policy{}, "address 10.0.0.5 is private"},
		{"http://[::1]/", Policy{}, "address ::1 is loopback"},
		{"http://[fe80::1%25eth0]/", Policy{}, "address fe80::1 is link-local"},
		{"http://[::ffff:10.0.0.1]/", Policy{}, "is private"},
		{"http://169.254.169.254/latest/meta-data/", Policy{AllowPrivate: true}, "is a cloud metadata service"},
		{"http://[fd00:ec2::254]/", Policy{AllowPrivate: true}, "is a cloud metadata service"},
		{"http://localhost:8080/", Policy{}, "host localhost is loopback"},
		{"http://api.LOCALHOST./", Policy{}, "is loopback"},
		{"http://localhost:8080/", Policy{AllowPrivate: true}, ""},
		{"http://2130706433/", Policy{}, "not one in standard form"},
		{"http://0x7f.1/", Policy{}, "not one in standard form"},
		{"http://127.1/", Policy{AllowPrivate: true}, "not one in standard form"},
		{"http://0x7f000001./", Policy{}, "not one in standard form"},
		{"http://cafe.example/", Policy{}, ""},
		{"http://exa mple.com/?key=secret", Policy{}, "invalid URL"},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			err := tt.policy.CheckURL(tt.url)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("CheckURL: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("CheckURL = %v, want an error containing %q", err, tt.want)
			case err != nil && strings.Contains(err.Error(), "secret"):
				t.Fatalf("error %q quotes the query", err)
			}
		})
	}
}

func TestBlockedErrorOverridable(t *testing.T) {
	tests := []struct {
		err  *BlockedError
		want bool
	}{
		{&BlockedError{Class: Private}, true},
		{&BlockedError{Host: "localhost", Class: Loopback}, true},
		{&BlockedError{Class: Metadata}, false},
		{&BlockedError{Reason: "scheme"}, false},
	}
	for _, tt := range tests {
		if got := tt.err.Overridable(); got != tt.want {
			t.Errorf("%v: Overridable() = %v, want %v", tt.err, got, tt.want)
		}
	}
}
