package mcpclient

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"time"
)

// maxEvent is the largest event of a server's stream.
const maxEvent = 16 << 20

// stream is the state of an event stream across its connections: the last
// event id and the advised retry.
type stream struct {
	lastID string
	retry  time.Duration
}

// read reads events from body, handing each event's data to deliver, until
// deliver reports the answer (answered true) or the connection ends (the
// error, io.EOF for a clean end). An incomplete event is dropped.
func (st *stream) read(body io.Reader, deliver func(data []byte) bool) (answered bool, err error) {
	br := bufio.NewReaderSize(body, 32<<10)
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
		switch name {
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
func field(line []byte) (name string, value []byte) {
	if len(line) == 0 {
		return "", nil
	}
	if line[0] == ':' {
		return ":", nil
	}
	f, v, _ := bytes.Cut(line, []byte(":"))
	return string(f), bytes.TrimPrefix(v, []byte(" "))
}
