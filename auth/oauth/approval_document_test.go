package oauth_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
)

// TestNoSilentApprovalOfUnusableAgent: a grant that covers an agent the
// user has since disabled, or no longer owns, must not be approved
// without the user: the token would be refused at the MCP endpoint and
// the client would come straight back for another one, in a loop. The
// consent page is shown instead, saying what is wrong.
func TestNoSilentApprovalOfUnusableAgent(t *testing.T) {
	for _, tt := range []struct {
		name   string
		change func(a *mcpgate.Agent, bob *mcpgate.User)
	}{
		{"disabled", func(a *mcpgate.Agent, _ *mcpgate.User) { a.MCPEnabled = false }},
		{"given away", func(a *mcpgate.Agent, bob *mcpgate.User) { a.OwnerID = bob.ID }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := mustFixture(t, nil)
			c := f.mustRegister(t, "none")
			f.mustTokens(t, c, f.agentURL("shop"), "shop")
			ctx := context.Background()
			a, err := f.store.FindAgent(ctx, "shop")
			if err != nil {
				t.Fatal(err)
			}
			bob, err := f.store.FindUserByName(ctx, "bob")
			if err != nil {
				t.Fatal(err)
			}
			tt.change(a, bob)
			if err := f.store.UpdateAgent(ctx, a); err != nil {
				t.Fatal(err)
			}
			b := f.newBrowser(t)
			login := b.get(t, f.base+"/oauth/authorize?"+f.authParams(c, newPKCE(), f.agentURL("shop")).Encode())
			next := f.login(t, b, login, "alice", alicePassword)
			b.get(t, f.base+next.location).mustBe(t, http.StatusOK, "not one of your MCP-enabled agents", ">Deny<")

			// The base resource with only that agent granted: the same.
			login = b.get(t, f.base+"/oauth/authorize?"+f.authParams(c, newPKCE(), f.base).Encode())
			if login.status != http.StatusOK {
				t.Fatalf("base resource: status %d (to %s), want the consent page", login.status, login.location)
			}
		})
	}
}

// TestHungUpDocumentFetchNotCached: a browser that hangs up while the
// client's metadata document is being fetched must not leave the failure
// ("context canceled") in the cache, which would refuse that client to
// every user for a while: a cheap denial of service against any popular
// client ID.
func TestHungUpDocumentFetchNotCached(t *testing.T) {
	f := mustFixture(t, nil)
	redirect := "http://127.0.0.1:9/callback"
	docURL := f.base + "/docs/slow/app.json"
	arrived, release, done := make(chan struct{}, 1), make(chan struct{}), make(chan struct{}, 1)
	f.mux.HandleFunc("GET /docs/slow/app.json", func(w http.ResponseWriter, r *http.Request) {
		defer func() { done <- struct{}{} }()
		arrived <- struct{}{}
		select {
		case <-release:
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"client_id": %q, "redirect_uris": [%q]}`, docURL, redirect)
		case <-r.Context().Done():
		}
	})
	c := &client{ID: docURL, RedirectURI: redirect}
	authorize := f.base + "/oauth/authorize?" + f.authParams(c, newPKCE(), f.agentURL("shop")).Encode()

	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authorize, nil)
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		resp, err := f.http.Client().Do(req)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	<-arrived
	cancel()
	<-errc
	time.Sleep(200 * time.Millisecond) // the gateway notices the hang-up
	close(release)
	<-done
	time.Sleep(50 * time.Millisecond) // the first fetch's outcome is cached

	f.newBrowser(t).get(t, authorize).mustBe(t, http.StatusOK, `name="username"`)
}

// TestDocumentRedirectNotFollowed: the authorization server MUST NOT follow
// redirects when it fetches a Client ID Metadata Document (draft-ietf-
// oauth-client-id-metadata-document, Client Information Discovery); a
// redirect is an error, even to a document that would pass.
func TestDocumentRedirectNotFollowed(t *testing.T) {
	f := mustFixture(t, nil)
	redirect := "http://127.0.0.1:9/callback"
	docURL := f.base + "/docs/moved/app.json"
	target := f.setDoc("moved.json", fmt.Sprintf(`{"client_id": %q, "redirect_uris": [%q]}`, docURL, redirect))
	f.mux.HandleFunc("GET /docs/moved/app.json", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target, http.StatusFound)
	})
	q := f.authParams(&client{ID: docURL, RedirectURI: redirect}, newPKCE(), f.agentURL("shop"))
	f.newBrowser(t).get(t, f.base+"/oauth/authorize?"+q.Encode()).mustBe(t, http.StatusBadRequest, "302")
}
