package auth

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpgate/mcpgate"
)

// fakeTokens accepts one token.
type fakeTokens struct {
	token string
	calls int
}

func (f *fakeTokens) VerifyAccessToken(_ *http.Request, token string) (*mcpgate.Credential, error) {
	f.calls++
	if token != f.token {
		return nil, mcpgate.Errorf(mcpgate.EUNAUTHORIZED, "the access token is invalid")
	}
	return &mcpgate.Credential{Kind: mcpgate.CredentialOAuth, ID: "grt_1", UserID: "u1", Agents: []string{"a1"}}, nil
}

func TestAuthenticateAccessTokens(t *testing.T) {
	keys := &fakeKeys{}
	_, userSecret := keys.add(mcpgate.KeyUser, "u1", "")
	tokens := &fakeTokens{token: "eyJhbGciOiJIUzI1NiJ9.e30.sig"}
	a := NewAuthenticator(keys, &Options{Tokens: tokens})

	got, err := a.Authenticate(newRequest("Bearer "+tokens.token, ""))
	if err != nil {
		t.Fatal(err)
	}
	want := &mcpgate.Credential{Kind: mcpgate.CredentialOAuth, ID: "grt_1", UserID: "u1", Agents: []string{"a1"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("credential (-want +got):\n%s", diff)
	}
	_, err = a.Authenticate(newRequest("Bearer eyJhbGciOiJIUzI1NiJ9.e30.other", ""))
	mustUnauthorized(t, err, "the access token is invalid")
	_, err = a.Authenticate(newRequest("Bearer not-a-jwt", ""))
	mustUnauthorized(t, err, "not a recognized API key")
	if _, err := a.Authenticate(newRequest("Bearer "+userSecret, "")); err != nil {
		t.Errorf("user key: %v", err)
	}
	if tokens.calls != 2 {
		t.Errorf("verifier calls = %d, want 2 (API keys and malformed bearers never reach it)", tokens.calls)
	}
	_, err = a.Authenticate(newRequest("Bearer "+tokens.token, "bak_x"))
	mustUnauthorized(t, err, "two different credentials")
}
