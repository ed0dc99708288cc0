package mcp

import "testing"

// TestResponseBufReuse: a large response's buffer, once freed, serves the
// next large response (a page of 1,000 tools used to allocate ~160 KB per
// request); small and huge ones are left to the allocator.
func TestResponseBufReuse(t *testing.T) {
	s := &Server{}
	reused := false
	for range 20 { // sync.Pool may drop what it is given (always may under -race)
		b := s.responseBuf(100 << 10)
		b = append(b, "x"...)
		s.freeBuf(b)
		if next := s.responseBuf(90 << 10); len(next) == 0 && cap(next) >= 100<<10 && &next[:1][0] == &b[0] {
			reused = true
			break
		}
	}
	if !reused {
		t.Error("a freed 100 KB buffer was never handed out again")
	}
	for _, size := range []int{100, pooledMax + 1} {
		b := s.responseBuf(size)
		s.freeBuf(b)
		if next := s.responseBuf(size); cap(next) > 0 && &next[:1][0] == &b[:1][0] {
			t.Errorf("a buffer of %d bytes was reused", size)
		}
	}
}
