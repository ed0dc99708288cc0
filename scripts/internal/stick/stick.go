// Package stick holds what the measuring sticks under scripts share (they
// are not part of the gateway): a loopback listener announced in the line
// mcpgate logs, and the answers to the JSON-RPC requests other than
// tools/call.
package stick

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
)

// Listen listens on a free loopback port and writes its address to stderr
// in the line mcpgate logs, so that scripts/bench.sh finds it.
func Listen() (net.Listener, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "msg=\"mcpgate listening\" addr=%s\n", ln.Addr())
	return ln, nil
}

// Message is the part of a JSON-RPC request the sticks read.
type Message struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Arguments json.RawMessage `json:"arguments"`
	} `json:"params"`
}

// Serve decodes the JSON-RPC request of r and answers it with JSON:
// initialize with an empty result in the session sessionID, tools/call
// through call, anything else (a notification) with 202.
func Serve(w http.ResponseWriter, r *http.Request, sessionID string, call func(http.ResponseWriter, *Message)) {
	body, _ := io.ReadAll(r.Body)
	var msg Message
	if err := json.Unmarshal(body, &msg); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	switch msg.Method {
	case "initialize":
		w.Header().Set("Mcp-Session-Id", sessionID)
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{}}`, msg.ID)
	case "tools/call":
		call(w, &msg)
	default:
		w.WriteHeader(http.StatusAccepted)
	}
}
