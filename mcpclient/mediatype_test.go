package mcpclient

import (
	"mime"
	"testing"
)

// mediaType agrees with mime.ParseMediaType, and reads the media types
// of replies without allocating.
func TestMediaType(t *testing.T) {
	for _, v := range []string{
		"text/event-stream", "application/json", "Application/JSON", " text/event-stream ; charset=utf-8",
		"application/json;charset=utf-8", "application/json; =bad", "text/html", "", "text/event-stream/x",
		"application/jsonx", "garbage", "text/plain; charset=\"utf-8\"",
	} {
		want, _, _ := mime.ParseMediaType(v)
		if got := mediaType(v); got != want {
			t.Errorf("mediaType(%q) = %q, want %q", v, got, want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { mediaType("text/event-stream; charset=utf-8") }); n != 0 {
		t.Errorf("mediaType allocates %v times, want 0", n)
	}
}

// FuzzMediaType holds mediaType to mime.ParseMediaType.
func FuzzMediaType(f *testing.F) {
	for _, v := range []string{"text/event-stream", "application/json; charset=utf-8", "Text/Event-Stream;", "a/b; c=d"} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v string) {
		want, _, _ := mime.ParseMediaType(v)
		if got := mediaType(v); got != want {
			t.Errorf("mediaType(%q) = %q, want %q", v, got, want)
		}
	})
}
