#!/usr/bin/env bash
# chaos.sh [PHASE] [SESSIONS]: runs the chaos test (e2e/chaos) standalone,
# with longer phases than `go test ./...` uses, and prints its report.
#
# Three replicas of mcpgate on one PostgreSQL database behind a round-robin
# proxy, under keyed load from `mcpgate load` with SESSIONS sessions
# (default 16). PHASE (default 20s) apart: replica 1 is killed with
# SIGKILL, replica 2 is terminated with SIGTERM (it drains), both are
# started again, and the load goes on for two more phases. The report
# (failures by class, calls retried, lost sessions, the longest gap
# without a successful call, executions per second in each stretch,
# keys the backend got twice, the load average) is printed at the end and
# kept in MCPGATE_CHAOS_REPORT when set.
#
# The binary is built without the race detector (RACE=1 builds it with
# it), so the numbers are those of a release build. It needs
# MCPGATE_TEST_POSTGRES, or runs scripts/start-postgres.sh (as root) for a
# throwaway server.
set -euo pipefail
cd "$(dirname "$0")/.."

phase=${1:-20s}
sessions=${2:-16}
if [[ -z "${MCPGATE_TEST_POSTGRES:-}" ]]; then
	eval "$(scripts/start-postgres.sh)"
fi
report=${MCPGATE_CHAOS_REPORT:-$(mktemp -t mcpgate-chaos.XXXXXX)}
race=()
if [[ -n "${RACE:-}" ]]; then
	race=(-race)
fi

MCPGATE_CHAOS_PHASE=$phase MCPGATE_CHAOS_SESSIONS=$sessions MCPGATE_CHAOS_REPORT=$report \
	go test "${race[@]}" ./e2e/chaos -run '^TestChaos$' -count=1 -v -timeout 60m
echo "--- report ($report) ---"
cat "$report"
