package rest

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/iotest"
)

// TestReadLimited checks the body read against its limit: whole, cut one
// byte past the limit (which newResponse drops), in small reads, with a
// Content-Length that is right, too small, too large or absent, and an
// error after the data.
func TestReadLimited(t *testing.T) {
	const limit = 10
	broken := errors.New("connection reset")
	for _, tt := range []struct {
		name          string
		body          io.Reader
		contentLength int64
		want          string
		truncated     bool
		err           error
	}{
		{"empty", strings.NewReader(""), 0, "", false, nil},
		{"short", strings.NewReader("hello"), 5, "hello", false, nil},
		{"exactly the limit", strings.NewReader("0123456789"), 10, "0123456789", false, nil},
		{"over the limit", strings.NewReader("0123456789abc"), 13, "0123456789a", true, nil},
		{"one byte a read", iotest.OneByteReader(strings.NewReader("0123456789abc")), -1, "0123456789a", true, nil},
		{"length too small", strings.NewReader("hello world"), 2, "hello world", true, nil},
		{"length too large", strings.NewReader("hi"), 1000, "hi", false, nil},
		{"error after data", io.MultiReader(strings.NewReader("abc"), iotest.ErrReader(broken)), -1, "abc", false, broken},
		{"error past the limit", io.MultiReader(strings.NewReader("0123456789abc"), iotest.ErrReader(broken)), -1, "0123456789a", true, nil},
	} {
		resp := &http.Response{Body: io.NopCloser(tt.body), ContentLength: tt.contentLength}
		got, truncated, err := readLimited(resp, limit)
		if string(got) != tt.want || truncated != tt.truncated || !errors.Is(err, tt.err) {
			t.Errorf("%s: readLimited = %q, %v, %v; want %q, %v, %v", tt.name, got, truncated, err, tt.want, tt.truncated, tt.err)
		}
	}
}

// TestReadLimitedAllocs checks that a body of known length is read into
// one buffer, its only allocation.
func TestReadLimitedAllocs(t *testing.T) {
	body := strings.NewReader(`{"value":6.21,"unit":"mi"}`)
	resp := &http.Response{Body: io.NopCloser(body), ContentLength: body.Size()}
	n := testing.AllocsPerRun(100, func() {
		body.Seek(0, io.SeekStart)
		readLimited(resp, 1<<20)
	})
	if n > 1 {
		t.Errorf("readLimited: %v allocations, want 1", n)
	}
}
