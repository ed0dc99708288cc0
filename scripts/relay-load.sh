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
# The gateway logs at info (its access log to a file) unless LOG_LEVEL says
# otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bench.sh "$@" # $sessions, $duration, $work, $bin, free_port, wait_port
go build -o "$work/fixture" github.com/modelcontextprotocol/go-sdk/conformance/everything-server

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
"$bin" serve --config "$work/gateway.yaml" --addr "127.0.0.1:$port" --data-dir "$work/gateway" --log-level "${LOG_LEVEL:-info}" ${PPROF:+--pprof-addr $PPROF} 2>"$work/gateway.err" &
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
