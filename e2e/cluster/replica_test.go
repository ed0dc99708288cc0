package cluster

import "testing"

// FreeAddr never returns the same address twice, though the kernel may
// hand a just-closed port out again.
func TestFreeAddrNeverRepeats(t *testing.T) {
	seen := map[string]bool{}
	for range 2000 {
		addr, err := FreeAddr()
		if err != nil {
			t.Fatal(err)
		}
		if seen[addr] {
			t.Fatalf("%s returned twice", addr)
		}
		seen[addr] = true
	}
}
