package mcp

// Bounds of the response buffers the server reuses.
const (
	// pooledMin is the smallest response buffer worth reusing. Smaller
	// ones, most replies, cost the allocator little.
	pooledMin = 16 << 10
	// pooledMax is the largest buffer kept for reuse, so that one huge
	// reply does not stay in memory.
	pooledMax = 4 << 20
)

// responseBuf returns an empty buffer for a response of about size bytes:
// a reused one for large responses (a tools/list page of 1,000 tools is
// about 110 KB; allocating one per request made the runtime return and
// fetch that memory again and again).
func (s *Server) responseBuf(size int) []byte {
	if size < pooledMin {
		return make([]byte, 0, size)
	}
	if p, ok := s.bufs.Get().(*[]byte); ok && cap(*p) >= size {
		return (*p)[:0]
	}
	return make([]byte, 0, size)
}

// freeBuf hands b back for reuse once nothing refers to it any more.
func (s *Server) freeBuf(b []byte) {
	if cap(b) < pooledMin || cap(b) > pooledMax {
		return
	}
	s.bufs.Put(&b)
}
