package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// approvalsIn lists the approvals a key sees in a state.
func (s *gated) approvalsIn(t *testing.T, key, state string) (int, []approval) {
	t.Helper()
	req, _ := http.NewRequest("GET", s.g.URL+"/api/v1/approvals?state="+state, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	status, body := do(t, req)
	var list struct{ Approvals []approval }
	json.Unmarshal(body, &list)
	return status, list.Approvals
}

// callOn makes a tools/call of delete on a session in the background,
// with a progress token when token is not "".
func callOn(sess *rpcSession, id int, path, token string) <-chan *rpcResponse {
	meta := ""
	if token != "" {
		meta = fmt.Sprintf(`,"_meta":{"progressToken":%q}`, token)
	}
	out := make(chan *rpcResponse, 1)
	go func() {
		out <- sess.post(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"delete","arguments":{"path":%q}%s}}`, id, path, meta))
	}()
	return out
}

var waitingFor = regexp.MustCompile(`waiting for approval by bob, (\d+m)?\d+s left`)

// TestApprovalWaitAndWithdraw drives the binary: a waiting call hears
// whom it waits for and how long is left (as progress when it sent a
// progress token, and as a log message); only the agent's owner, the
// skill's approvers and admins see and decide its approval, anyone else
// gets an empty list and 404; and a call canceled with
// notifications/cancelled, or whose session ends, withdraws its approval.
func TestApprovalWaitAndWithdraw(t *testing.T) {
	t.Parallel() // waits on timers and child processes
	s := newGated(t)
	runCLI(t, s.env, "user", "create", "carol")
	carol := strings.TrimSpace(runCLI(t, s.env, "key", "create", "--user", "carol"))

	done := callOn(s.session, 10, "/tmp/w", "tok-1")
	a := s.pending(t)
	if st, list := s.approvalsIn(t, carol, "pending"); st != 200 || len(list) != 0 {
		t.Fatalf("carol, no reviewer, lists %d %+v; want 200 and none", st, list)
	}
	if st := s.decide(t, carol, a.ID, "approve", ""); st != http.StatusNotFound {
		t.Fatalf("carol's approve: %d, want 404", st)
	}
	if st, list := s.approvalsIn(t, s.bob, "pending"); st != 200 || len(list) != 1 || list[0].ID != a.ID {
		t.Fatalf("bob, an approver who does not own the agent, lists %d %+v", st, list)
	}
	if st := s.decide(t, s.bob, a.ID, "approve", ""); st != 200 {
		t.Fatalf("bob's approve: %d", st)
	}
	r := <-done
	if text, isErr := resultText(t, r); isErr || !strings.Contains(text, "/tmp/w") {
		t.Fatalf("approved call: %s", r.Body)
	}
	if !strings.Contains(r.Body, `"notifications/progress"`) || !strings.Contains(r.Body, `"progressToken":"tok-1"`) ||
		!strings.Contains(r.Body, `"notifications/message"`) || len(waitingFor.FindAllString(r.Body, -1)) < 2 {
		t.Fatalf("the waiting call was not told whom it waits for, as progress and as a log message:\n%s", r.Body)
	}

	done = callOn(s.session, 11, "/tmp/quiet", "")
	if st := s.decide(t, s.alice, s.pending(t).ID, "approve", ""); st != 200 {
		t.Fatalf("approve: %d", st)
	}
	if r := <-done; strings.Contains(r.Body, `"notifications/progress"`) || !waitingFor.MatchString(r.Body) {
		t.Fatalf("a call without a progress token: want the log message only:\n%s", r.Body)
	}
	checkWithdrawn(t, s)
}

// checkWithdrawn cancels one waiting call with notifications/cancelled
// and ends the session of another; each withdraws its approval.
func checkWithdrawn(t *testing.T, s *gated) {
	t.Helper()
	done := callOn(s.session, 12, "/tmp/cancel", "")
	a := s.pending(t)
	s.session.post(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":12,"reason":"the user gave up"}}`)
	<-done
	waitWithdrawn(t, s, a.ID)

	other := openSession(t, s.g.URL+"/files/mcp", bearer(s.alice))
	done = callOn(other, 13, "/tmp/ended", "")
	a = s.pending(t)
	req, _ := http.NewRequest("DELETE", other.url, nil)
	req.Header.Set("Authorization", "Bearer "+s.alice)
	req.Header.Set("Mcp-Session-Id", other.id)
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	if st, body := do(t, req); st != 200 && st != 204 {
		t.Fatalf("DELETE session: %d %s", st, body)
	}
	<-done
	waitWithdrawn(t, s, a.ID)
	if n := len(s.api.seen()); n != 2 {
		t.Fatalf("backend ran %d times; want only the two approved calls", n)
	}
}

// waitWithdrawn waits until approval id is withdrawn.
func waitWithdrawn(t *testing.T, s *gated, id string) {
	t.Helper()
	eventually(t, func() bool {
		_, list := s.approvalsIn(t, s.alice, "withdrawn")
		for _, a := range list {
			if a.ID == id {
				return true
			}
		}
		return false
	})
}
