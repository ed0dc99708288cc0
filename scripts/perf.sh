#!/usr/bin/env bash
# perf.sh [--duration D] [--sessions N] [--relay-rate R] [--idle N] [--agent-calls N] [--agent-rate R] [--agent-wide W] [--postgres DSN] [--only relay|rest|agent|ab|ab-agent|latency|pgo]:
# issue 16's benchmark suite. Prints every target figure as one table.
# --only relay measures only the relayed figures (direct, then relayed).
#
# All on loopback, in one run, so that the ratios compare figures taken
# under the same load of the machine:
#   - relayed tools/call: the go-sdk conformance fixture called directly,
#     then through a gateway relaying it (skill of kind mcp); the gateway's
#     CPU per call over the fixture's own, and the p50 latency added, at
#     --sessions and (in the whole suite) again at one session, where no
#     call waits behind another;
#     and, for reference, the same through scripts/forward (a byte
#     forwarder that parses nothing: the floor of any process in the
#     middle on this machine); at one session also through
#     scripts/mcprelay, the plainest MCP relay (decode the envelope,
#     relay, answer; nothing checked or recorded), on net/http, on the
#     gateway's own h1, and with HTTP/1.1 and the envelope by hand (-raw);
#     then the fixture called directly and through the gateway again,
#     both paced at --relay-rate calls/s in all (load --rate; 0 skips
#     them): a process's CPU per call depends on how many calls it serves
#     a second (a busier process finds more work without sleeping), and
#     in a closed loop the relayed leg runs at fewer calls/s than the
#     direct one, so this ratio compares the two at the same rate;
#   - REST tools/call: a gateway with one REST tool on the demo backend,
#     then scripts/relay (the minimal relay) in its place; the ratio of
#     their CPU per call;
#   - agent round trip: e2e's TestAgentLoad, 8 sessions, the pull worker,
#     on SQLite, and on PostgreSQL when --postgres or MCPGATE_TEST_POSTGRES
#     names a server; first in a closed loop (each session calls again as
#     soon as it has its answer: the most calls/s), then, on SQLite, paced
#     at --agent-rate calls/s in all (load --rate: the p50 at that offered
#     load, a late call counting from when it was due);
#     and, for reference, right before it, the same load on
#     scripts/agentfloor (a middle process that hands each call to its
#     worker process over an event stream and answers with the worker's
#     reply, storing nothing: the floor of three processes and four
#     loopback hops on this machine);
#     then, on SQLite, the same calls from --agent-wide sessions (default
#     256; 0 skips it) in a closed loop, as many calls in flight at once:
#     the gateway's CPU per call there over the closed loop's at 8;
#   - idle sessions: a fresh SQLite gateway, --idle sessions opened by
#     `mcpgate load --idle` and its RSS from /proc, per session; then again
#     on another fresh gateway with every session holding its GET stream
#     (needs twice --idle open files: `ulimit -n`);
#   - tools/list on an agent with 1,000 tools, every page (one page at the
#     default --page-size of 1,000); the latency of the HTTP exchanges,
#     without the load client's own decoding of the 160 KB of JSON.
# CPU figures are the whole process's user+system time from /proc.
# Gateways run at the default log level, info, and so write the access
# log (a line an MCP request) to a file, as a deployment does;
# LOG_LEVEL=warn measures them without it (the suite's level before
# round 10).
# Defaults are short (3s a leg, 4 sessions, 10,000 idle sessions, 8×500
# agent calls); the flags make them longer. KEEP=1 keeps the temporary
# directory with every process's log. PPROF=127.0.0.1:PORT starts the
# gateway with --pprof-addr (for a CPU profile or trace under load).
# OLD=BINARY (with --only relay) also relays through a second gateway run
# by that older binary, right after the new one (with OLD_FIRST=1 right
# before it), and prints its row too.
# --only ab (with OLD=BINARY) relays through the new gateway and the old
# one at the same time, ROUNDS times (default 5), each with half of
# --sessions and paced at a quarter of --relay-rate, and prints their CPU
# per call side by side: the way to tell a change of a few per cent from
# the machine's noise (ab_rounds says why). --only ab-agent does the same
# with the agent round trip: each gateway on SQLite with its own echo
# worker (e2e/testagent), 4 sessions each, paced at a quarter of
# --agent-rate.
# --only agent measures only the agent round trip on SQLite, closed loop
# and paced, with the floor right before it.
# --only latency measures one session's relayed latency added: the
# direct leg, the byte forwarder, scripts/mcprelay (the plainest MCP relay,
# on net/http, on h1 and by hand) and the gateway (and OLD=BINARY's) called in turn,
# call by call, ROUNDS runs (default 5) of --duration each (run_latency
# says why); NEW=BINARY runs the gateway under test from BINARY instead
# of this tree's build (with OLD, the two builds in either place of the
# turns); TURN_GAP=D waits D after each call (`load --turn-gap`), so
# that what one leg's process does after its response (the gateway's
# access line, its deferred audit record) does not meet the next leg's
# call.
# --only pgo profiles a gateway under the relayed, REST, agent and
# tools/list loads and writes the merged CPU profile to
# cmd/mcpgate/default.pgo, which builds of the binary then optimize with
# (profile-guided optimization; docs/performance.md says when to renew it).
# --only rest measures only the REST figure: the minimal relay, then the
# gateway, ROUNDS times (default 3); with OLD=BINARY a gateway of that
# binary runs beside the new one, each round measuring the relay, the new
# and the old gateway back to back, and the table has a row for each.
set -euo pipefail
cd "$(dirname "$0")/.."

duration=3s sessions=4 relay_rate=2000 idle=10000 agent_calls=1500 agent_rate=2000 agent_wide=256 pg=${MCPGATE_TEST_POSTGRES:-} only=
while [ $# -gt 0 ]; do
  case "$1" in
    --duration) duration=$2 ;;
    --sessions) sessions=$2 ;;
    --relay-rate) relay_rate=$2 ;;
    --idle) idle=$2 ;;
    --agent-calls) agent_calls=$2 ;;
    --agent-rate) agent_rate=$2 ;;
    --agent-wide) agent_wide=$2 ;;
    --postgres) pg=$2 ;;
    --only) only=$2 ;;
    *) echo "usage: $0 [--duration D] [--sessions N] [--relay-rate R] [--idle N] [--agent-calls N] [--agent-rate R] [--agent-wide W] [--postgres DSN] [--only relay|rest|agent|ab|ab-agent|latency|pgo]" >&2; exit 2 ;;
  esac
  shift 2
done

source scripts/bench.sh "$sessions" "$duration" # $work, $bin, free_port, wait_port, wait_addr
[ -n "${KEEP:-}" ] && trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; echo "kept $work" >&2' EXIT
go build -o "$work/fixture" github.com/modelcontextprotocol/go-sdk/conformance/everything-server
go build -o "$work/relay" ./scripts/relay
go build -o "$work/forward" ./scripts/forward
go build -o "$work/mcprelay" ./scripts/mcprelay
go build -o "$work/agentfloor" ./scripts/agentfloor

# field NAME FILE prints the value of NAME=… on the file's summary line.
field() { grep -o "$1=[0-9.]*" "$2" | tail -1 | cut -d= -f2; }
# ratio A B [DECIMALS] prints A/B with two decimals, or DECIMALS.
ratio() { awk -v a="$1" -v b="$2" -v n="${3:-2}" 'BEGIN { if (b > 0) printf "%." n "f", a / b; else print "-" }'; }
# added_row LABEL LEG DIRECT prints the p50 latency leg LEG adds to leg
# DIRECT's.
added_row() {
  local d r
  d=$(field p50_us "$work/$3") r=$(field p50_us "$work/$2")
  echo "| $1 | $((r - d)) µs ($r − $d) | ≤ 150 µs |"
}
# relay_row NAME [LOAD] prints the relayed rows of leg NAME against the
# direct leg: the CPU ratio, and the latency added (at LOAD, when given).
relay_row() {
  local d_cpu r_cpu
  d_cpu=$(field cpu_us_per_call "$work/direct") r_cpu=$(field cpu_us_per_call "$work/$1")
  echo "| $1 tools/call: gateway CPU / fixture CPU per call | $(ratio "$r_cpu" "$d_cpu")× ($r_cpu / $d_cpu µs) | ≤ 0.5× |"
  added_row "$1 tools/call: p50 latency added${2:+, $2}" "$1" direct
}
# paced_rows prints the relayed leg's rows against the direct one, both
# paced at --relay-rate, when they ran.
paced_rows() {
  [ -s "$work/relayed-paced" ] || return 0
  local d_cpu r_cpu d_p50 r_p50
  d_cpu=$(field cpu_us_per_call "$work/direct-paced") r_cpu=$(field cpu_us_per_call "$work/relayed-paced")
  d_p50=$(field p50_us "$work/direct-paced") r_p50=$(field p50_us "$work/relayed-paced")
  echo "| relayed tools/call, both legs paced at $relay_rate calls/s: gateway CPU / fixture CPU per call | $(ratio "$r_cpu" "$d_cpu")× ($r_cpu / $d_cpu µs) | (≤ 0.5×, at equal rates) |"
  echo "| relayed tools/call, both legs paced at $relay_rate calls/s: p50 latency added | $((r_p50 - d_p50)) µs ($r_p50 − $d_p50) | (reference) |"
}
# run_paced runs the direct and relayed legs again, paced at --relay-rate.
run_paced() {
  [ "$relay_rate" != 0 ] || return 0
  run direct-paced --rate "$relay_rate" --url "http://127.0.0.1:$upstream/mcp" --key none --tool test_simple_text --args '{}' --pid "$fixture_pid"
  run_relayed relayed-paced --rate "$relay_rate"
}
# floor_rows prints the byte forwarder's rows (the floor of a process in
# the middle, no target) and the gateway's CPU per call over its own.
floor_rows() {
  local d_cpu f_cpu r_cpu d_p50 f_p50
  d_cpu=$(field cpu_us_per_call "$work/direct") f_cpu=$(field cpu_us_per_call "$work/forwarded")
  r_cpu=$(field cpu_us_per_call "$work/relayed")
  d_p50=$(field p50_us "$work/direct") f_p50=$(field p50_us "$work/forwarded")
  echo "| byte forwarder (the floor): its CPU / fixture CPU per call | $(ratio "$f_cpu" "$d_cpu")× ($f_cpu / $d_cpu µs) | (reference) |"
  echo "| byte forwarder (the floor): p50 latency added, $sessions sessions | $((f_p50 - d_p50)) µs ($f_p50 − $d_p50) | (reference) |"
  echo "| relayed tools/call: gateway CPU / byte forwarder CPU per call | $(ratio "$r_cpu" "$f_cpu")× | (reference) |"
}
# run NAME ARGS… runs `mcpgate load` with ARGS, keeping its output in $work/NAME.
run() {
  local name=$1; shift
  echo "== $name" >&2
  "$bin" load --sessions "$sessions" --duration "$duration" "$@" | tee "$work/$name" >&2
}

# start_gateway NAME CONFIG [BINARY] starts a gateway on SQLite in
# $work/NAME and sets $gw_pid, $gw_port, $gw_key and $gw_bin, the binary
# that runs it. Only that binary touches the gateway's database: another
# would migrate it to its own schema under the running gateway.
start_gateway() {
  gw_port=$(free_port) gw_bin=${3:-$bin}
  "$gw_bin" serve --config "$2" --addr "127.0.0.1:$gw_port" --data-dir "$work/$1" --log-level "${LOG_LEVEL:-info}" \
    ${PPROF:+--pprof-addr "$PPROF"} 2>"$work/$1.err" &
  gw_pid=$!
  wait_port "$gw_port"
  for _ in $(seq 300); do # the config may still be applying
    gw_key=$("$gw_bin" key create --user bench --data-dir "$work/$1" 2>/dev/null) && return 0
    sleep 0.1
  done
  echo "$0: the gateway never knew user bench:" >&2; cat "$work/$1.err" >&2; return 1
}

# run_floor runs the agent legs' load, closed loop then paced, on
# scripts/agentfloor and its worker, keeping the outputs in $work/floor
# and $work/floor-paced.
run_floor() {
  "$work/agentfloor" 2>"$work/agentfloor.err" &
  local mid=$! addr worker
  addr=$(wait_addr $mid "$work/agentfloor.err")
  "$work/agentfloor" -worker "http://$addr" -concurrency 16 2>"$work/agentfloor-worker.err" &
  worker=$!
  local args=(load --url "http://$addr/mcp" --key none --tool echo --args '{"message":"ping"}' --sessions 8
    --requests $((8 * agent_calls)) --duration 50s --pid "$mid")
  echo "== agent floor (scripts/agentfloor)" >&2
  "$bin" "${args[@]}" | tee "$work/floor" >&2
  "$bin" "${args[@]}" --rate "$agent_rate" | tee "$work/floor-paced" >&2
  kill "$mid" "$worker"
}
# run_agent runs e2e's TestAgentLoad on the databases its pattern names,
# splitting its summaries into $work/agent-sqlite[-paced] and
# $work/agent-postgres.
run_agent() {
  echo "== agent (go test ./e2e -run TestAgentLoad)" >&2
  local wide=$agent_wide
  [ "$wide" = 0 ] && wide=
  MCPGATE_TEST_POSTGRES=$pg MCPGATE_AGENT_LOAD="8x$agent_calls" MCPGATE_AGENT_RATE=$agent_rate MCPGATE_AGENT_WIDE=$wide \
    go test ./e2e -run "$1" -count=1 -v 2>&1 |
    tee "$work/agent.log" | grep -E 'calls|latency|CPU|^(---|ok|FAIL)' >&2 || true
  awk '/=== RUN +TestAgentLoad\/sqlite/ { f = "sqlite"; p = "" } /=== RUN +TestAgentLoad\/postgres/ { f = "postgres"; p = "" }
    /paced at/ { p = "-paced" } /many in flight/ { p = "-wide" } /summary:/ { print > (dir "/agent-" f p) }' dir="$work" "$work/agent.log"
}
# agent_row DB prints the agent round trip's rows on DB.
agent_row() {
  if [ -s "$work/agent-$1" ]; then
    printf '| agent round trip, %-8s, 8 sessions, closed loop | p50 %s µs, %s calls/s | ≤ 1,000 µs, ≥ 2,000 calls/s |\n' "$1" \
      "$(field p50_us "$work/agent-$1")" "$(field calls_per_s "$work/agent-$1")"
  else
    printf '| agent round trip, %-8s | not run | ≤ 1,000 µs, ≥ 2,000 calls/s |\n' "$1"
  fi
  if [ -s "$work/agent-$1-paced" ]; then
    printf '| agent round trip, %-8s, 8 sessions, %s calls/s offered | p50 %s µs, %s calls/s | ≤ 1,000 µs, ≥ 2,000 calls/s |\n' "$1" \
      "$agent_rate" "$(field p50_us "$work/agent-$1-paced")" "$(field calls_per_s "$work/agent-$1-paced")"
  fi
  if [ -s "$work/agent-$1-wide" ]; then
    printf '| agent round trip, %s, %s sessions, closed loop (as many calls in flight): gateway CPU per call / at 8 sessions | %s calls/s, %s× (%s / %s µs) | (reference) |\n' "$1" \
      "$agent_wide" "$(field calls_per_s "$work/agent-$1-wide")" \
      "$(ratio "$(field cpu_us_per_call "$work/agent-$1-wide")" "$(field cpu_us_per_call "$work/agent-$1")")" \
      "$(field cpu_us_per_call "$work/agent-$1-wide")" "$(field cpu_us_per_call "$work/agent-$1")"
  fi
}
# floor_agent_rows prints the agent floor's rows, and the gateway's paced
# p50 over the floor's.
floor_agent_rows() {
  echo "| agent floor (scripts/agentfloor: 3 processes, 4 hops, nothing stored), closed loop | p50 $(field p50_us "$work/floor") µs, $(field calls_per_s "$work/floor") calls/s | (reference) |"
  echo "| agent floor, $agent_rate calls/s offered | p50 $(field p50_us "$work/floor-paced") µs | (reference) |"
  if [ -s "$work/agent-sqlite-paced" ]; then
    echo "| agent round trip, sqlite, $agent_rate calls/s offered: p50 / the floor's | $(ratio "$(field p50_us "$work/agent-sqlite-paced")" "$(field p50_us "$work/floor-paced")")× | (reference) |"
  fi
}
# ab_rounds WHAT SESSIONS RATE PATH TOOL ARGS loads the new gateway
# ($new_port, $new_key, $new_pid) and the old one ($gw_port, $gw_key,
# $gw_pid) at the same time, ROUNDS times (default 5) after a round that
# warms both up, each with SESSIONS sessions paced at RATE calls/s calling
# TOOL at PATH, and prints their CPU per call side by side. Run side by
# side, both legs meet the same load of the machine and serve the same
# rate, so the ratio of their CPU per call holds still where legs run one
# after the other move by ±10 % between runs on this machine; paced, the
# cheaper one does not also serve more calls a second, which would make
# each call cheaper still.
ab_rounds() {
  local what=$1 each=$2 rate=$3 path=$4 tool=$5 args=$6 n o i
  # ab_leg NAME PORT KEY PID loads one gateway for a round.
  ab_leg() { "$bin" load --sessions "$each" --duration "$duration" --rate "$rate" --url "http://127.0.0.1:$2$path" --key "$3" \
    --tool "$tool" --args "$args" --pid "$4" >"$work/$1" 2>&1; }
  echo
  echo "issue 16 $what A/B, both at once, $each sessions and $rate calls/s each, $duration a round, $(nproc) cores"
  echo "| round | load average | new calls/s | old calls/s | new p50 µs | old p50 µs | new µs/call | old µs/call | new / old |"
  echo "|---|---|---|---|---|---|---|---|---|"
  for i in $(seq 0 "${ROUNDS:-5}"); do
    if [ $((i % 2)) = 1 ]; then # each starts first in every other round
      ab_leg new-$i "$new_port" "$new_key" "$new_pid" &
      ab_leg old-$i "$gw_port" "$gw_key" "$gw_pid"
    else
      ab_leg old-$i "$gw_port" "$gw_key" "$gw_pid" &
      ab_leg new-$i "$new_port" "$new_key" "$new_pid"
    fi
    wait $!
    [ "$i" = 0 ] && continue
    n=$(field cpu_us_per_call "$work/new-$i") o=$(field cpu_us_per_call "$work/old-$i")
    echo "| $i | $(cut -d' ' -f1-3 /proc/loadavg) | $(field calls_per_s "$work/new-$i") | $(field calls_per_s "$work/old-$i") |" \
      "$(field p50_us "$work/new-$i") | $(field p50_us "$work/old-$i") | $n | $o | $(ratio "$n" "$o" 3)× |"
  done
}
# start_worker NAME starts e2e's echo worker for agent echo of the gateway
# started last, in $work/NAME, and waits until its inbox stream is open.
start_worker() {
  local key
  key=$("$gw_bin" key create --agent echo --name worker --data-dir "$work/$1")
  MCPGATE_AGENT_KEY=$key "$work/testagent" -url "http://127.0.0.1:$gw_port" -mode echo -quiet -concurrency 16 >"$work/$1-worker.err" 2>&1 &
  for _ in $(seq 300); do
    grep -q "inbox connected" "$work/$1-worker.err" && return 0
    sleep 0.1
  done
  echo "$0: the worker of $1 never connected:" >&2; cat "$work/$1-worker.err" >&2; return 1
}
# run_ab_agent measures the agent round trip of the new gateway and of OLD
# at once (ab_rounds): each on SQLite with its own echo worker, 4 sessions,
# paced at --agent-rate / 4.
run_ab_agent() {
  go build -o "$work/testagent" ./e2e/testagent
  printf 'users: [{name: bench}]\nagents:\n  - {id: echo, owner: bench, mcp_enabled: true, skills: [{name: echo, kind: agent, timeout: 30s}]}\n' >"$work/agent.yaml"
  start_gateway agent "$work/agent.yaml"
  start_worker agent
  new_pid=$gw_pid new_port=$gw_port new_key=$gw_key
  PPROF='' start_gateway agent-old "$work/agent.yaml" "$OLD"
  start_worker agent-old
  ab_rounds "agent round trip" 4 $((agent_rate / 4)) /echo/mcp echo '{"message":"ping"}'
}
if [ "$only" = ab-agent ]; then
  [ -n "${OLD:-}" ] || { echo "$0: --only ab-agent needs OLD=BINARY" >&2; exit 2; }
  run_ab_agent
  exit 0
fi
if [ "$only" = agent ]; then
  run_floor
  run_agent '^TestAgentLoad$/sqlite'
  echo
  echo "issue 16 agent targets, $(date -u +%FT%TZ), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "| figure | measured | target |"
  echo "|---|---|---|"
  agent_row sqlite
  floor_agent_rows
  exit 0
fi

# Backends: the demo REST API and the conformance fixture.
"$bin" serve --demo --addr 127.0.0.1:0 --data-dir "$work/backend" >"$work/backend.out" 2>"$work/backend.err" &
backend=$(wait_addr $! "$work/backend.err")
upstream=$(free_port)
"$work/fixture" -http="127.0.0.1:$upstream" -stateless=false 2>"$work/fixture.err" &
fixture_pid=$!
wait_port "$upstream"

{
  cat <<YAML
users: [{name: bench}]
agents:
  - id: rest
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
  - id: relay
    owner: bench
    mcp_enabled: true
    skills:
      - name: fixture
        kind: mcp
        url: http://127.0.0.1:$upstream/mcp
        allow_private: true
  - id: many
    owner: bench
    mcp_enabled: true
    skills:
      - name: api
        kind: rest
        base_url: http://$backend/_demo/api
        allow_private: true
        tools:
YAML
  for i in $(seq -w 0 999); do
    echo "          - {name: tool_$i, description: Tool $i., input_schema: {type: object, properties: {value: {type: number}}}, request: {method: POST, path: /convert/units, body: all}}"
  done
} >"$work/gateway.yaml"
# wait_tools NAME [BINARY] waits for the gateway in $work/NAME (run by
# BINARY, the new one by default) to have discovered the fixture's tools,
# which runs in the background.
wait_tools() {
  for _ in $(seq 300); do
    "${2:-$bin}" agent show relay --data-dir "$work/$1" | grep -q test_simple_text && break
    sleep 0.1
  done
}
units='{"value":10,"from":"km","to":"mi"}'
if [ "$only" = rest ]; then
  "$work/relay" "http://$backend/_demo/api/convert/units" 2>"$work/baseline.err" &
  baseline_pid=$!
  baseline=$(wait_addr $baseline_pid "$work/baseline.err")
  start_gateway gateway "$work/gateway.yaml"
  new_pid=$gw_pid new_port=$gw_port new_key=$gw_key
  [ -n "${OLD:-}" ] && PPROF='' start_gateway gateway-old "$work/gateway.yaml" "$OLD"
  echo
  echo "issue 16 REST target, $sessions sessions × $duration a leg, $(nproc) cores"
  echo "| round | load average | relay µs/call | new µs/call | new / relay |${OLD:+ old µs/call | old / relay | new / old |}"
  echo "|---|---|---|---|---|${OLD:+---|---|---|}"
  # run_old N measures round N's leg of the old gateway.
  run_old() { run old-$1 --url "http://127.0.0.1:$gw_port/rest/mcp" --key "$gw_key" --tool convert_units --args "$units" --pid "$gw_pid"; }
  for i in $(seq "${ROUNDS:-3}"); do
    run baseline-$i --url "http://$baseline/mcp" --key none --tool convert_units --args "$units" --pid "$baseline_pid"
    # Even rounds run the old gateway first, so that neither always follows the relay.
    [ -n "${OLD:-}" ] && [ $((i % 2)) = 0 ] && run_old "$i"
    run rest-$i --url "http://127.0.0.1:$new_port/rest/mcp" --key "$new_key" --tool convert_units --args "$units" --pid "$new_pid"
    [ -n "${OLD:-}" ] && [ $((i % 2)) = 1 ] && run_old "$i"
    b=$(field cpu_us_per_call "$work/baseline-$i") n=$(field cpu_us_per_call "$work/rest-$i")
    row="| $i | $(cut -d' ' -f1-3 /proc/loadavg) | $b | $n | $(ratio "$n" "$b")× |"
    if [ -n "${OLD:-}" ]; then
      o=$(field cpu_us_per_call "$work/old-$i")
      row="$row $o | $(ratio "$o" "$b")× | $(ratio "$n" "$o")× |"
    fi
    echo "$row"
  done
  exit 0
fi
# run_ab measures the relayed path of the new gateway and of OLD at once
# (ab_rounds), each loaded by half the sessions, paced at --relay-rate / 4.
run_ab() {
  start_gateway gateway "$work/gateway.yaml"
  new_pid=$gw_pid new_port=$gw_port new_key=$gw_key
  PPROF='' start_gateway gateway-old "$work/gateway.yaml" "$OLD"
  wait_tools gateway
  wait_tools gateway-old "$OLD"
  ab_rounds relay $(((sessions + 1) / 2)) $((relay_rate / 4)) /relay/mcp test_simple_text '{}'
}
if [ "$only" = ab ]; then
  [ -n "${OLD:-}" ] || { echo "$0: --only ab needs OLD=BINARY" >&2; exit 2; }
  run_ab
  exit 0
fi
# pgo_leg NAME ARGS… runs `mcpgate load` ARGS… on the gateway started
# last for PGO_SECONDS (default 10), while go tool pprof takes the
# gateway's CPU profile of the same seconds into $work/NAME.pprof.
pgo_leg() {
  local name=$1 secs=${PGO_SECONDS:-10}; shift
  echo "== pgo: $name" >&2
  go tool pprof -proto -seconds "$secs" "http://$PPROF/debug/pprof/profile" >"$work/$name.pprof" 2>"$work/$name.pprof.err" &
  local prof=$!
  "$bin" load --duration "${secs}s" --pid "$gw_pid" "$@" >"$work/$name.load" 2>&1
  wait $prof || { cat "$work/$name.pprof.err" >&2; return 1; }
}
# run_pgo profiles one gateway under each of the suite's hot paths (the
# relayed call at one session and at --sessions, the REST call, the agent
# round trip with e2e's echo worker, tools/list of 1,000 tools) and
# merges the profiles into cmd/mcpgate/default.pgo, the profile that go
# build and go run use for profile-guided optimization of the binary.
run_pgo() {
  go build -o "$work/testagent" ./e2e/testagent
  { cat "$work/gateway.yaml"; echo "  - {id: echo, owner: bench, mcp_enabled: true, skills: [{name: echo, kind: agent, timeout: 30s}]}"; } >"$work/pgo.yaml"
  PPROF=127.0.0.1:$(free_port)
  start_gateway gateway "$work/pgo.yaml"
  wait_tools gateway
  start_worker gateway
  local gw="http://127.0.0.1:$gw_port"
  pgo_leg relay-1 --sessions 1 --url "$gw/relay/mcp" --key "$gw_key" --tool test_simple_text --args '{}'
  pgo_leg relay --sessions "$sessions" --url "$gw/relay/mcp" --key "$gw_key" --tool test_simple_text --args '{}'
  pgo_leg rest --sessions "$sessions" --url "$gw/rest/mcp" --key "$gw_key" --tool convert_units --args "$units"
  pgo_leg agent --sessions 8 --url "$gw/echo/mcp" --key "$gw_key" --tool echo --args '{"message":"ping"}'
  pgo_leg list --sessions 1 --url "$gw/many/mcp" --key "$gw_key" --method tools/list
  go tool pprof -proto "$work"/*.pprof >cmd/mcpgate/default.pgo 2>"$work/merge.err" || { cat "$work/merge.err" >&2; return 1; }
  echo "wrote cmd/mcpgate/default.pgo ($(wc -c <cmd/mcpgate/default.pgo) bytes) from $(ls "$work"/*.pprof | wc -l) profiles"
}
if [ "$only" = pgo ]; then
  run_pgo
  exit 0
fi

start_gateway gateway "$work/gateway.yaml" "${NEW:-$bin}"
wait_tools gateway "${NEW:-$bin}"

# run_latency measures one session's latency added: `mcpgate load --turn`
# calls the fixture directly, through the byte forwarder and through the
# gateway (and, with OLD=BINARY, a gateway of that binary) in turn, one
# call at a time, so that every figure meets the machine's load of the
# same milliseconds (legs run one after the other, as in the whole suite,
# can meet loads that differ by more than the gateway adds). ROUNDS runs
# (default 5) of --duration each; it prints each run's figures and their
# medians.
run_latency() {
  latency_turns
  if [ -n "${OLD:-}" ]; then
    PPROF='' start_gateway gateway-old "$work/gateway.yaml" "$OLD"
    wait_tools gateway-old "$OLD"
    turns+=(--turn "old http://127.0.0.1:$gw_port/relay/mcp $gw_key")
  fi
  echo
  echo "issue 16 latency added at one session, the legs in turn call by call, $duration a run, $(nproc) cores"
  echo "| run | load average | direct p50 µs | forwarder added | plainest relay added: net/http | h1 | by hand | gateway added |${OLD:+ old gateway added |}"
  echo "|---|---|---|---|---|---|---|---|${OLD:+---|}"
  latency_runs "${ROUNDS:-5}" latency_row
  echo "| median | | $(turn_median direct p50_us) | $(turn_median forwarder added_us) | $(turn_median mcprelay added_us) | $(turn_median mcprelay-h1 added_us) | $(turn_median mcprelay-raw added_us) | $(turn_median gateway added_us) |${OLD:+ $(turn_median old added_us) |}"
}
# latency_row I prints run I's row of run_latency's table.
latency_row() {
  echo "| $1 | $(cut -d' ' -f1-3 /proc/loadavg) | $(turn_field direct p50_us "$1") | $(turn_field forwarder added_us "$1") |" \
    "$(turn_field mcprelay added_us "$1") | $(turn_field mcprelay-h1 added_us "$1") | $(turn_field mcprelay-raw added_us "$1") |" \
    "$(turn_field gateway added_us "$1") |${OLD:+ $(turn_field old added_us "$1") |}"
}
# latency_turns starts a byte forwarder and the plainest MCP relay (on
# net/http, on h1 and by hand) to the fixture, and sets $turns to the
# --turn flags of the direct leg, those four and the gateway started last.
latency_turns() {
  "$work/forward" "127.0.0.1:$upstream" 2>"$work/forward.err" &
  local fwd flag addr
  fwd=$(wait_addr $! "$work/forward.err")
  turns=(--turn "direct http://127.0.0.1:$upstream/mcp none" --turn "forwarder http://$fwd/mcp none")
  for flag in "" -h1 -raw; do
    "$work/mcprelay" $flag "http://127.0.0.1:$upstream/mcp" 2>"$work/mcprelay$flag.err" &
    addr=$(wait_addr $! "$work/mcprelay$flag.err")
    turns+=(--turn "mcprelay$flag http://$addr/mcp none")
  done
  turns+=(--turn "gateway http://127.0.0.1:$gw_port/relay/mcp $gw_key")
}
# latency_runs N [ROW] warms the processes of $turns up, then makes N runs
# of --duration into $work/latency-1…N, calling function ROW with the
# run's number after each, when given. With OLD, the last two turns (the
# gateway and OLD's) change places every other run: the turn after a
# gateway has read lower by 7-12 µs than the one before it (round 25),
# which a fixed order charges to one binary.
latency_runs() {
  local i order
  "$bin" load --tool test_simple_text --args '{}' --duration 1s "${turns[@]}" >/dev/null
  for i in $(seq "$1"); do
    echo "== latency $i" >&2
    order=("${turns[@]}")
    if [ -n "${OLD:-}" ] && [ $((i % 2)) = 0 ]; then # the two gateways change places every other run
      local n=${#order[@]}
      order[n - 3]=${turns[n - 1]} order[n - 1]=${turns[n - 3]}
    fi
    "$bin" load --tool test_simple_text --args '{}' --duration "$duration" ${TURN_GAP:+--turn-gap "$TURN_GAP"} "${order[@]}" | tee "$work/latency-$i" >&2
    [ -z "${2:-}" ] || "$2" "$i"
  done
  latency_n=$1
}
# turn_field TURN FIELD RUN prints FIELD of TURN's summary line in run RUN.
turn_field() { grep "^turn: name=$1 " "$work/latency-$3" | grep -o "$2=[0-9-]*" | cut -d= -f2; }
# turn_median TURN FIELD prints the median of FIELD of TURN over the runs.
turn_median() {
  local i
  for i in $(seq "$latency_n"); do turn_field "$1" "$2" "$i"; done |
    sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : int((v[NR / 2] + v[NR / 2 + 1]) / 2) }'
}
if [ "$only" = latency ]; then
  run_latency
  exit 0
fi

# run_forwarded NAME runs leg NAME through a byte forwarder to the fixture
# started for it: the floor of any process in the middle.
run_forwarded() {
  "$work/forward" "127.0.0.1:$upstream" 2>"$work/$1.err" &
  local pid=$! addr
  addr=$(wait_addr $pid "$work/$1.err")
  run "$1" --url "http://$addr/mcp" --key none --tool test_simple_text --args '{}' --pid "$pid"
  kill "$pid"
}
run direct --url "http://127.0.0.1:$upstream/mcp" --key none --tool test_simple_text --args '{}' --pid "$fixture_pid"
run_forwarded forwarded
# run_relayed NAME runs the relayed leg NAME through the gateway started last.
run_relayed() {
  local name=$1; shift
  run "$name" "$@" --url "http://127.0.0.1:$gw_port/relay/mcp" --key "$gw_key" --tool test_simple_text --args '{}' --pid "$gw_pid"
}
if [ "$only" = relay ] && [ -n "${OLD:-}" ] && [ -n "${OLD_FIRST:-}" ]; then
  # The old gateway's leg first, the new one idle meanwhile.
  new_pid=$gw_pid new_port=$gw_port new_key=$gw_key
  PPROF='' start_gateway gateway-old "$work/gateway.yaml" "$OLD"
  wait_tools gateway-old "$OLD"
  run_relayed old
  kill "$gw_pid"
  gw_pid=$new_pid gw_port=$new_port gw_key=$new_key
  run_relayed relayed
else
  run_relayed relayed
fi
# The paced legs (skipped when comparing with an old binary).
[ -z "${OLD:-}" ] && run_paced
if [ "$only" = relay ]; then
  if [ -n "${OLD:-}" ] && [ -z "${OLD_FIRST:-}" ]; then
    kill "$gw_pid"
    PPROF='' start_gateway gateway-old "$work/gateway.yaml" "$OLD"
    wait_tools gateway-old "$OLD"
    run_relayed old
  fi
  echo
  echo "issue 16 relay targets, $(date -u +%FT%TZ), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "| figure | measured | target |"
  echo "|---|---|---|"
  relay_row relayed
  [ -n "${OLD:-}" ] && relay_row old
  paced_rows
  floor_rows
  exit 0
fi
# The latency added with no queue: one session each, the fixture called
# directly, through the byte forwarder (the floor of any process in the
# middle, at that moment), through the plainest MCP relay and relayed, in
# turn (run_latency says why).
latency_turns
latency_runs 3
run rest --url "http://127.0.0.1:$gw_port/rest/mcp" --key "$gw_key" --tool convert_units --args "$units" --pid "$gw_pid"
"$work/relay" "http://$backend/_demo/api/convert/units" 2>"$work/baseline.err" &
baseline_pid=$!
baseline=$(wait_addr $baseline_pid "$work/baseline.err")
run baseline --url "http://$baseline/mcp" --key none --tool convert_units --args "$units" --pid "$baseline_pid"
sessions=1 run list --url "http://127.0.0.1:$gw_port/many/mcp" --key "$gw_key" --method tools/list --pid "$gw_pid"
kill "$gw_pid" "$baseline_pid"

printf 'users: [{name: bench}]\nagents: [{id: idle, owner: bench, mcp_enabled: true}]\n' >"$work/idle.yaml"
start_gateway idle "$work/idle.yaml"
echo "== idle" >&2
"$bin" load --url "http://127.0.0.1:$gw_port/idle/mcp" --key "$gw_key" --idle "$idle" --pid "$gw_pid" | tee "$work/idle.out" >&2
kill "$gw_pid"
start_gateway streams "$work/idle.yaml"
echo "== idle, with GET streams" >&2
"$bin" load --url "http://127.0.0.1:$gw_port/idle/mcp" --key "$gw_key" --idle "$idle" --streams --pid "$gw_pid" | tee "$work/streams.out" >&2
kill "$gw_pid"

run_floor
run_agent '^TestAgentLoad$'

# The table.
g_cpu=$(field cpu_us_per_call "$work/rest") b_cpu=$(field cpu_us_per_call "$work/baseline")
echo
echo "issue 16 targets, $(date -u +%FT%TZ), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "| figure | measured | target |"
echo "|---|---|---|"
relay_row relayed "$sessions sessions"
echo "| relayed tools/call: p50 latency added, 1 session (no queue), legs in turn, median of 3 runs | $(turn_median gateway added_us) µs (runs: $(turn_field gateway added_us 1), $(turn_field gateway added_us 2), $(turn_field gateway added_us 3)) | ≤ 150 µs |"
echo "| byte forwarder (the floor): p50 latency added, 1 session, in the same runs | $(turn_median forwarder added_us) µs (runs: $(turn_field forwarder added_us 1), $(turn_field forwarder added_us 2), $(turn_field forwarder added_us 3)) | (reference) |"
for t in "mcprelay:on net/http" "mcprelay-h1:on h1" "mcprelay-raw:with HTTP/1.1 and the envelope by hand"; do
  echo "| the plainest MCP relay ${t#*:} (scripts/mcprelay): p50 latency added, 1 session, in the same runs | $(turn_median "${t%%:*}" added_us) µs (runs: $(turn_field "${t%%:*}" added_us 1), $(turn_field "${t%%:*}" added_us 2), $(turn_field "${t%%:*}" added_us 3)) | (reference) |"
done
paced_rows
floor_rows
echo "| REST tools/call: gateway CPU / minimal relay CPU per call | $(ratio "$g_cpu" "$b_cpu")× ($g_cpu / $b_cpu µs) | ≤ 1.3× |"
agent_row sqlite
agent_row postgres
floor_agent_rows
echo "| idle sessions: gateway RSS per session ($idle on SQLite) | $(field rss_kib_per_session "$work/idle.out") KiB | ≤ 10 KiB |"
echo "| idle sessions holding their GET streams: gateway RSS per session | $(field rss_kib_per_session "$work/streams.out") KiB | (≤ 10 KiB) |"
echo "| tools/list, 1,000 tools, every page, one caller, p50 | $(field p50_us "$work/list") µs | < 1,000 µs |"
