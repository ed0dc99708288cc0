#!/usr/bin/env bash
# relay-load.sh [SESSIONS] [DURATION]: measures tools/call relayed to an
# upstream MCP server.
#
# Starts the Go SDK's conformance fixture (everything-server) on loopback
# as the upstream and a gateway whose agent relays it (a skill of kind
# mcp), then drives N sessions calling the fixture's test_simple_text tool
# through the gateway, reporting calls/s, latency and the gateway process's
# own CPU per call. DIRECT=1 drives the fixture itself instead, with the
# same client: the difference in latency is what the relay adds, and the
# gateway's CPU per call is all its own (the upstream's is excluded).
set -euo pipefail
cd "$(dirname "$0")/.."
sessions=${1:-8}
duration=${2:-10s}
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT

go build -o "$work/mcpgate" ./cmd/mcpgate
go build -o "$work/fixture" github.com/modelcontextprotocol/go-sdk/conformance/everything-server
bin="$work/mcpgate"

# free_port prints a loopback port nothing listens on.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# wait_port waits up to 30s for something to listen on 127.0.0.1:$1.
wait_port() {
  for _ in $(seq 300); do
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
    sleep 0.1
  done
  echo "relay-load.sh: nothing listens on port $1" >&2
  return 1
}

upstream=$(free_port)
"$work/fixture" -http="127.0.0.1:$upstream" -stateless=false 2>"$work/fixture.err" &
fixture_pid=$!
wait_port "$upstream"

if [ -n "${DIRECT:-}" ]; then
  "$bin" load --url "http://127.0.0.1:$upstream/mcp" --key none --sessions "$sessions" --duration "$duration" \
    --tool test_simple_text --args '{}' --pid "$fixture_pid"
  exit
fi

cat >"$work/gateway.yaml" <<YAML
users: [{name: bench}]
agents:
  - id: bench
    owner: bench
    mcp_enabled: true
    skills:
      - name: fixture
        kind: mcp
        url: http://127.0.0.1:$upstream/mcp
        allow_private: true
YAML
port=$(free_port)
"$bin" serve --config "$work/gateway.yaml" --addr "127.0.0.1:$port" --data-dir "$work/gateway" --log-level warn ${PPROF:+--pprof-addr $PPROF} 2>"$work/gateway.err" &
gateway_pid=$!
wait_port "$port"
key=$("$bin" key create --user bench --data-dir "$work/gateway")
# Discovery runs in the background: wait until the tool is listed.
for _ in $(seq 300); do
  "$bin" agent show bench --data-dir "$work/gateway" | grep -q 'test_simple_text' && break
  sleep 0.1
done
"$bin" load --url "http://127.0.0.1:$port/bench/mcp" --key "$key" --sessions "$sessions" --duration "$duration" \
  --tool test_simple_text --args '{}' --pid "$gateway_pid"
