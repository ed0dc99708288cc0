package agentkit

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/mcpgate/mcpgate"
)

// maxEvent bounds one line of the inbox stream (an envelope with its
// arguments and parts).
const maxEvent = 8 << 20

// event is one server-sent event; comments arrive as events without data.
type event struct {
	id   string
	name string
	data string
}

// seq returns the event's ID as a sequence number, 0 when it is none.
func (e event) seq() int64 {
	n, _ := strconv.ParseInt(e.id, 10, 64)
	return n
}

// message decodes the event's data as an envelope.
func (e event) message() (*mcpgate.Message, error) {
	if e.name != "" && e.name != "message" {
		return nil, fmt.Errorf("unexpected event %q", e.name)
	}
	var m mcpgate.Message
	if err := json.Unmarshal([]byte(e.data), &m); err != nil {
		return nil, fmt.Errorf("decode envelope: %w", err)
	}
	if m.ID == "" || m.ChannelID == "" {
		return nil, fmt.Errorf("envelope without id or channel_id")
	}
	return &m, nil
}

// readEvents calls fn for each event of an SSE stream, and for each
// comment line (as an empty event, so that pings count as life), until
// the stream ends; it returns nil at EOF.
func readEvents(r io.Reader, fn func(event)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxEvent)
	var ev event
	var data []string
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			ev.data = strings.Join(data, "\n")
			fn(ev)
			ev, data = event{}, nil
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "":
			fn(event{})
		case "id":
			ev.id = value
		case "event":
			ev.name = value
		case "data":
			data = append(data, value)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read inbox stream: %w", err)
	}
	return nil
}
