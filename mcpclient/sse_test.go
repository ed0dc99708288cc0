package mcpclient

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"
)

// These tests came from the upstream package's event-stream capture, which
// this package's stream reader replaced.

// readAll reads in, in reads of at most chunk bytes and returns every
// event's data, the stream's state and the error that ended it.
func readAll(in []byte, chunk int) ([]string, *stream, error) {
	st := &stream{}
	var events []string
	_, err := st.read(&chunkReader{b: in, n: chunk}, func(data []byte) bool {
		events = append(events, string(data))
		return false
	})
	return events, st, err
}

// chunkReader returns at most n bytes per Read.
type chunkReader struct {
	b []byte
	n int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	k := min(len(p), r.n, len(r.b))
	copy(p, r.b[:k])
	r.b = r.b[k:]
	return k, nil
}

func TestStreamFields(t *testing.T) {
	in := "id: a_0\nretry: 10\ndata: \n\nid: a_1\r\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n: keep\nid\n"
	events, st, err := readAll([]byte(in), len(in))
	if err != io.EOF {
		t.Fatal(err)
	}
	if len(events) != 1 || !strings.Contains(events[0], `"result"`) {
		t.Errorf("events %q", events)
	}
	if st.lastID != "" || st.retry != 10*time.Millisecond {
		t.Errorf("last id %q, retry %v; want reset by the bare id field, 10ms", st.lastID, st.retry)
	}
}

// endless is an event stream whose one data line never ends.
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	copy(p, "data: ")
	return len(p), nil
}

func TestStreamBoundsAnEvent(t *testing.T) {
	st := &stream{}
	_, err := st.read(endless{}, func([]byte) bool { return false })
	if err == nil || !strings.Contains(err.Error(), "exceeds") {
		t.Fatalf("err %v: an endless event must fail the stream", err)
	}
}

// FuzzStream checks that the stream reader never panics, does not depend
// on how the stream is split into reads, and hands a response's result on
// byte for byte.
func FuzzStream(f *testing.F) {
	f.Add([]byte("event: message\nid: 1\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"n\":12345678901234567890}}\n\n"), uint8(3))
	f.Add([]byte("data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"t1\",\"progress\":1}}\r\n\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"error\":{\"code\":-32602,\"message\":\"bad\"}}\n\n"), uint8(1))
	f.Add([]byte("data: {\"jsonrpc\":\"2.0\",\ndata: \"id\":1,\"result\":{}}\n\n: comment\n\n"), uint8(7))
	f.Add([]byte("retry: 10\n\ndata:\n\n"), uint8(2))
	f.Fuzz(func(t *testing.T, in []byte, chunk uint8) {
		whole, wst, werr := readAll(in, len(in)+1)
		split, sst, serr := readAll(in, int(chunk%16)+1)
		if strings.Join(whole, "\x00") != strings.Join(split, "\x00") || *wst != *sst || (werr == nil) != (serr == nil) {
			t.Fatalf("split reads changed the stream: %q %+v %v, then %q %+v %v", whole, wst, werr, split, sst, serr)
		}
		value := bytes.TrimSpace(in)
		if json.Valid(value) && !bytes.ContainsAny(value, "\r\n") && string(value) != "null" {
			event := []byte(`data: {"jsonrpc":"2.0","id":1,"result":` + string(value) + "}\n\n")
			got, _, _ := readAll(event, int(chunk%16)+1)
			m, ok := decodeMessage([]byte(got[0]))
			if !ok || !bytes.Equal(m.Result, value) {
				t.Fatalf("result %s read as %s", value, got)
			}
		}
	})
}

// A stream read through the transport's pool gathers its events' data in
// the pooled buffer: reading a reply stream allocates nothing once the
// pool holds a reader.
func TestStreamReadAllocs(t *testing.T) {
	const event = "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\n" +
		"data: \"result\":{\"content\":[{\"type\":\"text\",\"text\":\"This is a simple text response for testing.\"}]}}\n\n"
	var pool readerPool
	r := strings.NewReader(event)
	var got []byte
	deliver := func(data []byte) bool { got = append(got[:0], data...); return true }
	read := func() {
		r.Reset(event)
		st := stream{readers: &pool}
		if answered, err := st.read(r, deliver); !answered || err != nil {
			t.Fatalf("answered %v, %v", answered, err)
		}
	}
	read()
	if want := `{"jsonrpc":"2.0","id":1,` + "\n" + `"result"`; !strings.HasPrefix(string(got), want) {
		t.Fatalf("delivered %q", got)
	}
	if raceEnabled {
		t.Skip("the race detector's sync.Pool drops readers")
	}
	if n := testing.AllocsPerRun(100, read); n != 0 {
		t.Errorf("reading a reply stream allocates %v times, want 0", n)
	}
}
