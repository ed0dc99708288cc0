#!/usr/bin/env bash
# agent-load.sh [SESSIONSxCALLS]: measures the agent round trip.
#
# Runs e2e's TestAgentLoad: the real mcpgate binary on loopback, one pull
# worker built on agentkit (e2e/testagent in echo mode, so the agent does
# no work of its own), and `mcpgate load` with SESSIONS concurrent MCP
# sessions making SESSIONS×CALLS tools/call in all (host → gateway → agent
# → gateway → host). It prints calls/s, p50/p90/p99 latency and the
# gateway's CPU per call on SQLite, and on PostgreSQL too when
# MCPGATE_TEST_POSTGRES is set (see scripts/start-postgres.sh). Default:
# 16x100; 1x200 gives the latency of one caller alone.
set -euo pipefail
cd "$(dirname "$0")/.."
export MCPGATE_AGENT_LOAD="${1:-16x100}"
go test ./e2e -run '^TestAgentLoad$' -count=1 -v 2>&1 | grep -E 'calls|latency|CPU|^(---|===|ok|FAIL|PASS)|_test.go' || true
