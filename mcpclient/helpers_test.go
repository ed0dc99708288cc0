package mcpclient

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/fixture"
)

// everythingBin is the go-sdk conformance server, a test fixture built
// once by TestMain.
var everythingBin string

func TestMain(m *testing.M) { fixture.RunWithEverything(m, &everythingBin) }

// everythingHTTP starts the fixture over Streamable HTTP with sessions and
// returns its endpoint.
func everythingHTTP(t *testing.T) string {
	t.Helper()
	return everythingServe(t, "-stateless=false")
}

// everythingServe starts the fixture over Streamable HTTP with mode, its
// -stateless flag, and returns its endpoint.
func everythingServe(t *testing.T, mode string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(everythingBin, "-http="+addr, mode)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for range 300 {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return "http://" + addr + "/mcp"
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the fixture did not listen")
	return ""
}

// everythingStdio starts the fixture over stdio and returns a transport.
func everythingStdio(t *testing.T) Transport {
	t.Helper()
	cmd := exec.Command(everythingBin)
	ownGroup(cmd)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); cmd.Process.Kill(); cmd.Wait() })
	return NewStdio(out, in)
}

// connect connects a session, failing t on error, and closes it at the end.
func connect(t *testing.T, tr Transport, o *Options) *Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := Connect(ctx, tr, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// callCtx is a context for one call of a test.
func callCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// sseEvent writes one event with an id.
func sseEvent(w http.ResponseWriter, id, data string) {
	if id != "" {
		fmt.Fprintf(w, "id: %s\n", id)
	}
	fmt.Fprintf(w, "data: %s\n\n", data)
	w.(http.Flusher).Flush()
}

// rpcID returns the id member of a JSON-RPC message.
func rpcID(t testing.TB, body []byte) string {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if err := json.Unmarshal(body, &m); err != nil {
		t.Errorf("bad message %s", body)
	}
	return string(m.ID)
}

// initResult is an initialize result of version v.
func initResult(id, v string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"result":{"protocolVersion":"` + v + `","capabilities":{"tools":{}},"serverInfo":{"name":"fake","version":"1"},"x-unknown":1.00000000000000000001}}`
}

// contains reports whether raw holds s.
func contains(raw json.RawMessage, s string) bool { return strings.Contains(string(raw), s) }
