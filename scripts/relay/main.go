// Command relay is a measuring stick, not part of the gateway: the least
// work any MCP-to-REST gateway must do per tools/call (decode the
// JSON-RPC envelope, POST the arguments to the backend, wrap the reply as a
// result), written with the same net/http server and client mcpgate uses.
// `BASELINE=1 scripts/load.sh` runs it in the gateway's place, so that the
// gateway's own CPU per call is its total minus this floor.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"

	"github.com/mcpgate/mcpgate/scripts/internal/stick"
)

func main() {
	if len(os.Args) != 2 {
		log.Fatal("usage: relay BACKEND_URL")
	}
	ln, err := stick.Listen()
	if err != nil {
		log.Fatal(err)
	}
	r := &relay{backend: os.Args[1], client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
	log.Fatal(http.Serve(ln, r))
}

// relay forwards tools/call arguments to one backend URL.
type relay struct {
	backend string
	client  *http.Client
}

// ServeHTTP answers initialize and tools/call, and accepts notifications.
func (rl *relay) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	stick.Serve(w, r, "relay", rl.call)
}

// call posts the arguments to the backend and wraps its answer.
func (rl *relay) call(w http.ResponseWriter, msg *stick.Message) {
	resp, err := rl.client.Post(rl.backend, "application/json", bytes.NewReader(msg.Params.Arguments))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	text, _ := json.Marshal(string(out))
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":%s}],"structuredContent":%s}}`, msg.ID, text, out)
}
