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
	"net"
	"net/http"
	"os"
)

func main() {
	if len(os.Args) != 2 {
		log.Fatal("usage: relay BACKEND_URL")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	// The same line mcpgate logs, so scripts/load.sh finds the address.
	fmt.Fprintf(os.Stderr, "msg=\"mcpgate listening\" addr=%s\n", ln.Addr())
	r := &relay{backend: os.Args[1], client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
	log.Fatal(http.Serve(ln, r))
}

// relay forwards tools/call arguments to one backend URL.
type relay struct {
	backend string
	client  *http.Client
}

// message is the part of a JSON-RPC request the relay reads.
type message struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Arguments json.RawMessage `json:"arguments"`
	} `json:"params"`
}

// ServeHTTP answers initialize and tools/call, and accepts notifications.
func (rl *relay) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var msg message
	if err := json.Unmarshal(body, &msg); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	switch msg.Method {
	case "initialize":
		w.Header().Set("Mcp-Session-Id", "relay")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{}}`, msg.ID)
	case "tools/call":
		rl.call(w, &msg)
	default:
		w.WriteHeader(http.StatusAccepted)
	}
}

// call posts the arguments to the backend and wraps its answer.
func (rl *relay) call(w http.ResponseWriter, msg *message) {
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
