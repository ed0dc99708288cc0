package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// The agents of the dead-worker tests: each skill's timeout is a minute,
// so that an answer within it that is not -32003 shows the gateway knew
// the worker was gone.
var deadAgents = []agentSkill{
	{id: "lonely", skill: "lonely", timeout: "60s"},
	{id: "pair", skill: "pair", timeout: "60s"},
	{id: "remote", skill: "remote", timeout: "60s"},
}

// TestDeadWorkers kills agentkit workers with SIGKILL mid-call, on SQLite
// and on PostgreSQL (issue 19): the caller gets 503 as soon as the last
// worker is gone, a worker started afterwards never runs the withdrawn
// message, and with two workers every call is answered exactly once.
func TestDeadWorkers(t *testing.T) {
	t.Parallel() // it mostly waits: see the package comment
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			var env []string
			if engine == "postgres" {
				env = append(env, postgresEnv(t)...)
			}
			g := startAgentGateway(t, deadAgents, env...)
			t.Run("last worker killed mid-call, restarted later", func(t *testing.T) { testLastWorkerKilled(t, g) })
			t.Run("two workers, one killed", func(t *testing.T) { testOneOfTwoKilled(t, g) })
			if engine == "postgres" {
				t.Run("replica holding the worker killed", func(t *testing.T) { testReplicaKilled(t, g) })
			}
		})
	}
}

// testLastWorkerKilled: the call waiting on the only worker ends with 503
// naming the agent once the worker is killed, long before the skill's
// timeout; a worker started after that answers a new call and never gets
// the stale message.
func testLastWorkerKilled(t *testing.T, g *agentGateway) {
	w := startAgentWorker(t, g, "./testagent", "lonely", "-mode", "stall")
	done := g.callLater(t, "lonely", ask("lonely", "hold on"))
	stale := mustMatch(t, gotLine, waitFor(t, w.out.String, "got msg_"))
	killed := time.Now()
	if err := w.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	o := <-done
	t.Logf("detection: the caller had its answer %s after the worker was killed", time.Since(killed).Round(time.Millisecond))
	wantUnavailable(t, o, "lonely")

	again := startAgentWorker(t, g, "./testagent", "lonely", "-mode", "echo")
	wantText(t, g.call(t, "lonely", ask("lonely", "fresh")), "echo: fresh")
	if strings.Contains(again.out.String(), "got "+stale) {
		t.Errorf("the restarted worker ran the message %s its caller had given up on:\n%s", stale, again.out.String())
	}
}

// wantUnavailable fails unless o is the agent_service_unavailable error
// (503) naming the agent.
func wantUnavailable(t *testing.T, o *agentOutcome, agentID string) {
	t.Helper()
	if o.Error == nil || o.Error.Code != -32000 || o.Error.Data["reason"] != "agent_service_unavailable" ||
		o.Error.Data["status"] != float64(503) || !strings.Contains(o.Error.Message, agentID) {
		t.Fatalf("outcome %s %+v, want agent_service_unavailable (503) naming %s", o.text(), o.Error, agentID)
	}
}

// testOneOfTwoKilled: a stalling worker takes the first call, an echoing
// one joins, more calls come, and the stalling one is killed: what it held
// goes to the other at once, and every call gets its own answer, each
// message run once by the survivor.
func testOneOfTwoKilled(t *testing.T, g *agentGateway) {
	doomed := startAgentWorker(t, g, "./testagent", "pair", "-mode", "stall")
	const n = 6
	outcomes := make([]<-chan *agentOutcome, n)
	outcomes[0] = g.callLater(t, "pair", ask("pair", "call 0"))
	waitFor(t, doomed.out.String, "got msg_")
	survivor := startAgentWorker(t, g, "./testagent", "pair", "-mode", "echo")
	for i := 1; i < n; i++ {
		outcomes[i] = g.callLater(t, "pair", ask("pair", fmt.Sprintf("call %d", i)))
	}
	if err := doomed.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	for i, c := range outcomes {
		wantText(t, <-c, fmt.Sprintf("echo: call %d", i))
	}
	runs := map[string]int{}
	for _, m := range gotLine.FindAllStringSubmatch(survivor.out.String(), -1) {
		runs[m[1]]++
	}
	if len(runs) != n {
		t.Errorf("the survivor ran %d messages, want %d: %v", len(runs), n, runs)
	}
	for id, k := range runs {
		if k != 1 {
			t.Errorf("the survivor ran %s %d times", id, k)
		}
	}
}

// testReplicaKilled: a second gateway on the same database takes a call
// whose only worker is connected to the first; the first is killed with
// SIGKILL, and the call on the second ends with 503 once the first's
// presence lapses.
func testReplicaKilled(t *testing.T, g *agentGateway) {
	replica := startGateway(t, g.env, "--agent-visibility", "1s")
	w := startAgentWorker(t, g, "./testagent", "remote", "-mode", "stall")
	other := &agentGateway{gateway: replica, env: g.env, userKey: g.userKey, dir: g.dir}
	done := other.callLater(t, "remote", ask("remote", "across replicas"))
	waitFor(t, w.out.String, "got msg_")
	killed := time.Now()
	if err := g.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-g.done // the process is reaped before its cleanup looks at it
	o := <-done
	t.Logf("detection: the caller on the other replica had its answer %s after the worker's replica was killed", time.Since(killed).Round(time.Millisecond))
	wantUnavailable(t, o, "remote")
}
