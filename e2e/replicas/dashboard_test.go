package replicas

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/mcpgate/mcpgate/e2e/headless"
)

// noPoll runs in the approvals page before its own script: it takes the
// page's 15 s poll away (so that only the live stream can bring a new
// approval) and keeps the page's EventSource where the test can see that
// it is open.
const noPoll = `window.setInterval = function () { return 0; };
(function () {
  var ES = window.EventSource;
  window.liveStreams = [];
  window.EventSource = function (url) { var es = new ES(url); window.liveStreams.push(es); return es; };
})();`

// testDashboardElsewhere opens the approvals queue in headless Chromium on
// replica 1, signed in as alice, with the page's poll taken away, and
// holds a gated call on replica 0: the approval appears on the page by
// itself, brought by the page's live stream from replica 1, which heard of
// it from replica 0 over the bus. The call is then rejected.
func testDashboardElsewhere(t *testing.T, e *env) {
	ctx, cancel := headless.Start(t, headless.Chromium(t))
	defer cancel()
	signIn(t, ctx, e.URL, "alice")
	inject := chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: noPoll})
		return err
	})
	headless.Browse(t, ctx, "open the queue on replica 1", inject, chromedp.Navigate(e.Replica(1).URL+"/ui/approvals/"),
		chromedp.WaitVisible(chromedp.CSS("#live-note")))
	waitUntil(t, 20*time.Second, "the queue's live stream open", func() bool {
		return headless.Evaluate[bool](t, ctx, `window.liveStreams.length === 1 && window.liveStreams[0].readyState === 1`)
	})
	s := openRPC(t, e.URL+"/tools/mcp", e.key, `{}`)
	done := make(chan *rpcReply, 1)
	go func() {
		done <- s.on(e, 0, "tools").post(`{"jsonrpc":"2.0","id":"d1","method":"tools/call","params":{"name":"gated_echo","arguments":{"text":"on the dashboard elsewhere"}}}`)
	}()
	waitUntil(t, 30*time.Second, "the approval on replica 1's page", func() bool {
		return headless.Evaluate[bool](t, ctx, `Array.from(document.querySelectorAll("section.approval pre")).some(function (p) { return p.textContent.indexOf("on the dashboard elsewhere") >= 0; })`)
	})
	id := pendingApproval(t, e, "on the dashboard elsewhere")
	req, _ := http.NewRequest("POST", e.URL+"/api/v1/approvals/"+id+"/reject", strings.NewReader(`{"reason":"seen"}`))
	req.Header.Set("Authorization", "Bearer "+e.key)
	req.Header.Set("Content-Type", "application/json")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("reject: %v %v", err, resp)
	} else {
		resp.Body.Close()
	}
	if r := <-done; !strings.Contains(string(r.Result), "rejected") {
		t.Fatalf("the rejected call: %s", r.Body)
	}
}

// signIn signs in to the dashboard at base as user.
func signIn(t *testing.T, ctx context.Context, base, user string) {
	t.Helper()
	headless.Browse(t, ctx, "open the dashboard", chromedp.Navigate(base+"/ui/"), chromedp.WaitVisible(chromedp.CSS(`input[name="username"]`)))
	headless.Browse(t, ctx, "sign in as "+user,
		chromedp.SendKeys(chromedp.CSS(`input[name="username"]`), user),
		chromedp.SendKeys(chromedp.CSS(`input[name="password"]`), password),
		chromedp.Submit(chromedp.CSS(`input[name="password"]`)),
		chromedp.WaitVisible(chromedp.CSS(`nav form.logout`)))
}
