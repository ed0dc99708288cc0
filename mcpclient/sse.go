package mcpclient

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"
)

// maxEvent is the largest event of a server's stream.
const maxEvent = 16 << 20

// stream is the state of an event stream across its connections: the last
// event id and the advised retry.
type stream struct {
	lastID  string
	retry   time.Duration
	readers *readerPool // where the reader comes from; nil for a new one
}

// read reads events from body, handing each event's data to deliver, until
// deliver reports the answer (answered true) or the connection ends (the
// error, io.EOF for a clean end). An incomplete event is dropped.
func (st *stream) read(body io.Reader, deliver func(data []byte) bool) (answered bool, err error) {
	br := st.readers.get(body)
	defer st.readers.put(br)
	var data []byte
	for {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			var rest []byte
			rest, err = readLong(br, line)
			line = rest
		}
		if err != nil {
			return false, err
		}
		line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
		name, value := field(line)
		switch string(name) {
		case "":
			if len(data) > 0 && deliver(data) {
				return true, nil
			}
			data = data[:0]
		case "data":
			if len(data) > 0 {
				data = append(data, '\n')
			}
			data = append(data, value...)
			if len(data) > maxEvent {
				return false, fmt.Errorf("an event of the upstream's stream exceeds %d bytes", maxEvent)
			}
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				st.lastID = string(value)
			}
		case "retry":
			if ms, err := strconv.ParseInt(string(value), 10, 64); err == nil && ms >= 0 {
				st.retry = time.Duration(ms) * time.Millisecond
			}
		}
	}
}

// readLong reads the rest of a line longer than the reader's buffer.
func readLong(br *bufio.Reader, first []byte) ([]byte, error) {
	line := append([]byte(nil), first...)
	for len(line) <= maxEvent {
		more, err := br.ReadSlice('\n')
		line = append(line, more...)
		if err != bufio.ErrBufferFull {
			return line, err
		}
	}
	return nil, fmt.Errorf("a line of the upstream's stream exceeds %d bytes", maxEvent)
}

// field splits a line into its field name and value; a blank line has no
// name, a comment the name ":".
func field(line []byte) (name, value []byte) {
	if len(line) == 0 {
		return nil, nil
	}
	if line[0] == ':' {
		return line[:1], nil
	}
	f, v, _ := bytes.Cut(line, []byte(":"))
	return f, bytes.TrimPrefix(v, []byte(" "))
}

// readerPool holds the buffered readers of a transport's event streams,
// one per stream being read: a relayed call should not cost a new buffer.
// The zero value is ready; a nil pool makes a reader each time.
type readerPool struct{ p sync.Pool }

// get returns a reader of body.
func (rp *readerPool) get(body io.Reader) *bufio.Reader {
	if rp != nil {
		if br, ok := rp.p.Get().(*bufio.Reader); ok {
			br.Reset(body)
			return br
		}
	}
	return bufio.NewReaderSize(body, 32<<10)
}

// put gives br back.
func (rp *readerPool) put(br *bufio.Reader) {
	if rp != nil {
		br.Reset(nil)
		rp.p.Put(br)
	}
}
