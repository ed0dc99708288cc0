package agentkit

import (
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

// FuzzReadEvents checks that the inbox stream parser never panics, reads
// the same events however the stream is split into reads, and that
// decoding any event it yields never panics either.
func FuzzReadEvents(f *testing.F) {
	f.Add(": ping\n\nid: 7\nevent: message\ndata: {\"id\":\"msg_1\",\"channel_id\":\"ch_1\"}\n\n")
	f.Add("data\ndata:\ndata: a\r\n\r\nid:\nevent\n\n")
	f.Add("id: 9223372036854775808\ndata: {\"id\":\"m\",\"channel_id\":\"c\",\"seq\":-1}\n\n:\n\n")
	f.Add("retry: 10\nfield without colon\n\n\n")
	f.Fuzz(func(t *testing.T, stream string) {
		var whole, bytewise []event
		errWhole := readEvents(strings.NewReader(stream), func(e event) { whole = append(whole, e) })
		errBytes := readEvents(iotest.OneByteReader(strings.NewReader(stream)), func(e event) { bytewise = append(bytewise, e) })
		if (errWhole == nil) != (errBytes == nil) {
			t.Fatalf("errors differ: %v and %v", errWhole, errBytes)
		}
		if diff := cmp.Diff(whole, bytewise, cmp.AllowUnexported(event{})); diff != "" {
			t.Fatalf("events differ with one-byte reads (-whole +bytewise):\n%s", diff)
		}
		for _, e := range whole {
			_ = e.seq()
			if m, err := e.message(); err == nil && (m.ID == "" || m.ChannelID == "") {
				t.Fatalf("event %+v decoded to an envelope without id or channel", e)
			}
		}
	})
}
