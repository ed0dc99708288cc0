package e2e

import (
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/pushsig"
)

// The agents of the pull tests: csvagent answers the analyst; testagent
// workers play the others.
var pullAgents = []agentSkill{
	{id: "analyst", skill: "orders", timeout: "20s", extra: csvQueryTool()},
	{id: "sleepy", skill: "sleepy", timeout: "2s"},
	{id: "canceller", skill: "canceller", timeout: "20s"},
	// fragile's timeout is long: its caller must hear that the worker
	// died well before it (issue 19).
	{id: "fragile", skill: "fragile", timeout: "60s"},
	{id: "crashy", skill: "crashy", timeout: "30s"},
	{id: "ghost", skill: "ghost", timeout: "30s"},
}

// TestAgentPull runs the example CSV agent as a pull worker and drives it
// with the TypeScript SDK client: a single call, a streamed one, history
// within a session and across sessions by context_id, and a declared tool.
func TestAgentPull(t *testing.T) {
	t.Parallel() // it mostly waits: see the package comment
	g := startAgentGateway(t, pullAgents)
	csv := filepath.Join(g.dir, "orders.csv")
	if err := os.WriteFile(csv, []byte(ordersCSV), 0o600); err != nil {
		t.Fatal(err)
	}
	startAgentWorker(t, g, "../examples/csvagent", "analyst", "-file", csv)
	url, auth := g.mcpURL("analyst"), bearer(g.userKey)

	t.Run("single call and tools/list", func(t *testing.T) {
		rep, ok := runClient(t, clientPlan{URL: url, Headers: auth, Calls: []clientCall{{Name: "orders", Arguments: map[string]any{"message": "how many rows?"}}}})
		if !ok || rep.Calls[0].Result == nil {
			t.Fatalf("client: %+v %+v", rep.Error, rep.Calls)
		}
		if got := rep.Calls[0].Result.Content[0].Text; got != "5 rows." {
			t.Errorf("answer %q", got)
		}
		if got := rep.Calls[0].Result.StructuredContent["matched"]; got != 5.0 {
			t.Errorf("structuredContent.matched = %v", got)
		}
		names := reportNames(rep)
		if !slices.Contains(names, "orders") || !slices.Contains(names, "csv_query") {
			t.Errorf("tools/list = %v, want the chat tool orders and csv_query", names)
		}
	})
	t.Run("streamed with progress", func(t *testing.T) {
		c := ask("orders", "average of amount where region = EU")
		c.Progress = true
		o := g.call(t, "analyst", c)
		wantText(t, o, "The average of amount where region = EU is 20 (over 2 rows).")
		if len(o.Progress) == 0 || !strings.Contains(o.Progress[0]["message"].(string), "reading 5 rows") {
			t.Errorf("progress = %v, want the delta \"reading 5 rows…\"", o.Progress)
		}
	})
	t.Run("history in one session", func(t *testing.T) {
		s := runAgentPlan(t, agentPlan{URL: url, Headers: auth, Sessions: [][]agentCall{{
			ask("orders", "average of amount where region = EU"), ask("orders", "and the max?"),
		}}})[0]
		wantText(t, s[1], "The maximum of amount where region = EU is 30 (over 2 rows).")
	})
	t.Run("context_id across sessions", func(t *testing.T) {
		next := ask("orders", "and the max?")
		next.ContextFromPrevious = true
		rep := runAgentPlan(t, agentPlan{URL: url, Headers: auth, Sessions: [][]agentCall{
			{ask("orders", "sum of amount where region = US")}, {next},
		}})
		first, second := rep[0][0], rep[1][0]
		if first.Result == nil || first.Result.Meta["mcpgate/context_id"] == nil {
			t.Fatalf("first result has no _meta mcpgate/context_id: %+v", first.Result)
		}
		wantText(t, second, "The maximum of amount where region = US is 50 (over 2 rows).")
	})
	t.Run("declared tool", func(t *testing.T) {
		o := g.call(t, "analyst", agentCall{Name: "csv_query", Arguments: map[string]any{"op": "sum", "column": "amount", "by": "region"}})
		wantText(t, o, "The sum of amount per region:\nUS: 70\nEU: 40\nAPAC: 5")
		if o.Result == nil || len(o.Result.StructuredContent["groups"].([]any)) != 3 {
			t.Errorf("structuredContent = %+v", o.Result)
		}
	})
	t.Run("help for anything else", func(t *testing.T) {
		o := g.call(t, "analyst", ask("orders", "tell me a joke"))
		if !strings.Contains(o.text(), "I answer questions about orders.csv") {
			t.Errorf("help answer: %q", o.text())
		}
	})
}

// TestAgentFailures checks the calls that get no answer: timeout, agent
// offline, cancel from the host, a worker killed mid-call, and the
// redelivery of a message to a new worker after a crash.
func TestAgentFailures(t *testing.T) {
	t.Parallel() // it mostly waits: see the package comment
	g := startAgentGateway(t, pullAgents)

	t.Run("timeout", func(t *testing.T) {
		startAgentWorker(t, g, "./testagent", "sleepy", "-mode", "stall")
		o := g.call(t, "sleepy", ask("sleepy", "are you there?"))
		if o.Error == nil || o.Error.Code != -32003 || !strings.Contains(o.Error.Message, "Agent reply timeout") {
			t.Errorf("outcome %s, want -32003 Agent reply timeout", o.text())
		}
	})
	t.Run("offline at once", func(t *testing.T) {
		o := g.call(t, "ghost", ask("ghost", "anyone?"))
		if o.Error == nil || o.Error.Code != -32000 || o.Error.Data["reason"] != "agent_service_unavailable" {
			t.Fatalf("outcome %s %+v, want -32000 with data.reason agent_service_unavailable", o.text(), o.Error)
		}
		if o.MS > 5000 {
			t.Errorf("the offline error took %.0f ms; the skill's timeout is 30 s, it must come at once", o.MS)
		}
	})
	t.Run("cancel from the host", func(t *testing.T) {
		w := startAgentWorker(t, g, "./testagent", "canceller", "-mode", "stall")
		c := ask("canceller", "take your time")
		c.AbortOnProgress = true
		o := g.call(t, "canceller", c)
		if !o.Aborted || o.Result != nil {
			t.Errorf("outcome %s aborted=%v, want the call aborted", o.text(), o.Aborted)
		}
		id := mustMatch(t, gotLine, w.out.String())
		waitFor(t, w.out.String, "cancelled "+id)
	})
	t.Run("worker killed mid-call", func(t *testing.T) {
		// When the only worker dies, the call ends as soon as its presence
		// is gone, with the offline error, not at the skill's timeout as
		// it did before issue 19.
		w := startAgentWorker(t, g, "./testagent", "fragile", "-mode", "stall")
		done := g.callLater(t, "fragile", ask("fragile", "hold on"))
		waitFor(t, w.out.String, "got msg_")
		w.cmd.Process.Kill()
		o := <-done
		if o.Error == nil || o.Error.Code != -32000 || o.Error.Data["reason"] != "agent_service_unavailable" {
			t.Errorf("outcome %s, want -32000 agent_service_unavailable after the worker died", o.text())
		}
	})
	t.Run("redelivery after a crash", func(t *testing.T) {
		// The second worker is connected before the first dies: with no
		// worker left the call would end offline (issue 19); with one,
		// the dead worker's message goes to it at once.
		first := startAgentWorker(t, g, "./testagent", "crashy", "-mode", "stall")
		done := g.callLater(t, "crashy", ask("crashy", "hello"))
		id := mustMatch(t, gotLine, waitFor(t, first.out.String, "got msg_"))
		second := startAgentWorker(t, g, "./testagent", "crashy", "-mode", "echo")
		first.cmd.Process.Kill()
		waitFor(t, second.out.String, "got "+id)
		wantText(t, <-done, "echo: hello")
	})
}

// TestAgentPush runs csvagent as a push receiver: the gateway POSTs each
// signed envelope to it, the reply comes back in the response, deltas and
// history go through the messages API; a forged envelope is refused.
func TestAgentPush(t *testing.T) {
	t.Parallel() // it mostly waits: see the package comment
	addr := freeAddr(t)
	push := agentSkill{id: "pusher", skill: "pushed", timeout: "20s",
		extra: "        delivery: push\n        push_url: http://" + addr + "/\n        push_secret: ${env:PUSH_SECRET}\n        allow_private: true\n"}
	g := startAgentGateway(t, []agentSkill{push}, "PUSH_SECRET=s3cret-for-push")
	csv := filepath.Join(g.dir, "orders.csv")
	if err := os.WriteFile(csv, []byte(ordersCSV), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"MCPGATE_AGENT_KEY=" + g.agentKey(t, "pusher"), "PUSH_SECRET=s3cret-for-push"}
	_, out := startProcess(t, env, buildTool(t, "../examples/csvagent"), "-url", g.URL, "-file", csv, "-push-addr", addr, "-push-secret-env", "PUSH_SECRET")
	waitFor(t, out.String, "push receiver listening")

	c := ask("pushed", "average of amount where region = EU")
	c.Progress = true
	s := runAgentPlan(t, agentPlan{URL: g.mcpURL("pusher"), Headers: bearer(g.userKey), Sessions: [][]agentCall{{c, ask("pushed", "and the min?")}}})[0]
	wantText(t, s[0], "The average of amount where region = EU is 20 (over 2 rows).")
	if len(s[0].Progress) == 0 {
		t.Errorf("no progress from the pushed agent's delta")
	}
	wantText(t, s[1], "The minimum of amount where region = EU is 10 (over 2 rows).")

	body := `{"id":"msg_forged","channel_id":"ch_x","type":"chat_message","body":{"text":"how many rows"}}`
	for name, sig := range map[string]string{
		"wrong secret": pushsig.Sign([]byte("guess"), time.Now(), []byte(body)),
		"too old":      pushsig.Sign([]byte("s3cret-for-push"), time.Now().Add(-6*time.Minute), []byte(body)),
		"unsigned":     "",
	} {
		req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/", strings.NewReader(body))
		req.Header.Set(pushsig.Header, sig)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s envelope: HTTP %d, want 401", name, resp.StatusCode)
		}
	}
}
