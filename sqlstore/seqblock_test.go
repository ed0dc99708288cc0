package sqlstore

import "testing"

// TestSeqBlockNeverGoesBack: a reservation that starts at or below a seq
// reserved or given meanwhile is dropped, and seqs are given in turn.
func TestSeqBlockNeverGoesBack(t *testing.T) {
	var b seqBlocks
	if _, ok := b.take("a"); ok {
		t.Fatal("a seq given before any was reserved")
	}
	b.set("a", 11, 12) // a post of Tx took 10 and reserved up to 12
	b.set("a", 3, 10)  // a leader's reservation that ended at 10
	for _, want := range []int64{11, 12} {
		if got, ok := b.take("a"); !ok || got != want {
			t.Fatalf("take = %d, %v; want %d", got, ok, want)
		}
	}
	if _, ok := b.take("a"); ok {
		t.Fatal("a seq given past the block")
	}
	if last, short := b.last("a", 1); last != 12 || !short {
		t.Errorf("last = %d, %v; want 12, short", last, short)
	}
}

// TestSeqBlocksDrop: after drop no seq is given from the blocks, and the
// next reservation still starts above every seq reserved before.
func TestSeqBlocksDrop(t *testing.T) {
	var b seqBlocks
	b.set("a", 1, 1024)
	if got, ok := b.take("a"); !ok || got != 1 {
		t.Fatalf("take = %d, %v; want 1", got, ok)
	}
	b.drop()
	if got, ok := b.take("a"); ok {
		t.Fatalf("seq %d given after drop", got)
	}
	if last, short := b.last("a", 1); last != 1024 || !short {
		t.Errorf("last = %d, %v; want 1024, short", last, short)
	}
}
