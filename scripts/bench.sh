# bench.sh is sourced by the load scripts (load.sh, relay-load.sh) from the
# repository root, with their arguments: `source scripts/bench.sh "$@"`.
#
# It reads SESSIONS (default 8) and DURATION (default 10s) from those
# arguments into $sessions and $duration, builds mcpgate into $bin inside
# the temporary directory $work, and on exit stops the script's background
# processes and removes $work. It also defines the helpers that wait for a
# process to listen.

sessions=${1:-8}
duration=${2:-10s}
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT

go build -o "$work/mcpgate" ./cmd/mcpgate
bin="$work/mcpgate"

# script is the sourcing script's name, for its error messages.
script=$(basename "$0")

# listen_addr prints the address a gateway logged it listens on (at log
# level info).
listen_addr() { grep -o 'mcpgate listening" addr=[0-9.:]*' "$1" 2>/dev/null | head -1 | cut -d= -f2; }

# wait_addr waits up to 30s for process $1 to log its address in file $2,
# and prints it.
wait_addr() {
  for _ in $(seq 300); do
    addr=$(listen_addr "$2")
    if [ -n "$addr" ]; then echo "$addr"; return 0; fi
    kill -0 "$1" 2>/dev/null || { echo "$script: process $1 exited:" >&2; cat "$2" >&2; return 1; }
    sleep 0.1
  done
  echo "$script: process $1 did not start within 30s" >&2
  return 1
}

# free_port prints a loopback port nothing listens on.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# wait_port waits up to 30s for something to listen on 127.0.0.1:$1.
wait_port() {
  for _ in $(seq 300); do
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
    sleep 0.1
  done
  echo "$script: nothing listens on port $1" >&2
  return 1
}
