#!/usr/bin/env bash
# load.sh [SESSIONS] [DURATION]: measures tools/call through the gateway.
#
# Starts two mcpgate processes on loopback: a backend (serve --demo, whose
# built-in demo REST API answers the calls) and the gateway under test,
# configured with one REST tool pointing at the backend. Then `mcpgate
# load` drives N concurrent sessions against the gateway and reports
# calls/s, p50/p90/p99 latency, and the gateway's own CPU time per call
# (read from /proc, so the backend's and the load generator's CPU are
# excluded).
#
# BASELINE=1 runs scripts/relay (the least work any MCP-to-REST gateway must
# do per call) in the gateway's place: the gateway's own CPU per call is
# its figure minus the relay's.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bench.sh "$@" # $sessions, $duration, $work, $bin, wait_addr

"$bin" serve --demo --addr 127.0.0.1:0 --data-dir "$work/backend" >"$work/backend.out" 2>"$work/backend.err" &
backend=$(wait_addr $! "$work/backend.err")

cat >"$work/gateway.yaml" <<YAML
users: [{name: bench}]
agents:
  - id: bench
    owner: bench
    mcp_enabled: true
    skills:
      - name: units
        kind: rest
        base_url: http://$backend/_demo/api
        allow_private: true
        tools:
          - name: convert_units
            description: Convert a value between units.
            input_schema: {type: object, properties: {value: {type: number}, from: {type: string}, to: {type: string}}, required: [value, from, to]}
            request: {method: POST, path: /convert/units, body: all}
YAML
if [ -n "${BASELINE:-}" ]; then
  go build -o "$work/relay" ./scripts/relay
  "$work/relay" "http://$backend/_demo/api/convert/units" 2>"$work/gateway.err" &
  gateway_pid=$!
  port=$(wait_addr $gateway_pid "$work/gateway.err")
  key=none
else
  "$bin" serve --config "$work/gateway.yaml" --addr 127.0.0.1:0 --data-dir "$work/gateway" ${PPROF:+--pprof-addr $PPROF} 2>"$work/gateway.err" &
  gateway_pid=$!
  port=$(wait_addr $gateway_pid "$work/gateway.err")
  key=$("$bin" key create --user bench --data-dir "$work/gateway")
fi

"$bin" load --url "http://$port/bench/mcp" --key "$key" --sessions "$sessions" --duration "$duration" \
  --tool convert_units --args '{"value":10,"from":"km","to":"mi"}' --pid "$gateway_pid"
