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

// read reads events from body, handing each event's data to deliver
// (a buffer the next event reuses, which deliver must not keep), until
// deliver reports the answer (answered true) or the connection ends (the
// error, io.EOF for a clean end). An incomplete event is dropped.
func (st *stream) read(body io.Reader, deliver func(data []byte) bool) (answered bool, err error) {
	er := st.readers.get(body)
	defer st.readers.put(er)
	br, data := er.br, er.data[:0]
	defer func() { er.data = data }()
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
// one per stream being read, with the buffer of their events' data: a
// relayed call should not cost new buffers. The zero value is ready; a
// nil pool makes a reader each time.
type readerPool struct{ p sync.Pool }

// eventReader is a stream's buffered reader and the buffer its events'
// data is gathered in (handed to deliver, which must not keep it).
type eventReader struct {
	br   *bufio.Reader
	data []byte
}

// maxPooledData is the largest event buffer kept for the next stream.
const maxPooledData = 64 << 10

// get returns a reader of body.
func (rp *readerPool) get(body io.Reader) *eventReader {
	if rp != nil {
		if er, ok := rp.p.Get().(*eventReader); ok {
			er.br.Reset(body)
			return er
		}
	}
	return &eventReader{br: bufio.NewReaderSize(body, 32<<10)}
}

// put gives er back.
func (rp *readerPool) put(er *eventReader) {
	if rp != nil {
		er.br.Reset(nil)
		if cap(er.data) > maxPooledData {
			er.data = nil
		}
		rp.p.Put(er)
	}
}
