package api

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/auth"
)

// keyJSON is a key as the API shows it.
type keyJSON struct {
	ID, Name, Key string
	ExpiresAt     *time.Time `json:"expires_at"`
	Hash          any        `json:"hash"`
}

// TestAPIKeyShowAndChange checks GET and PATCH /api/v1/keys/{id} and keys
// made with an expiry.
func TestAPIKeyShowAndChange(t *testing.T) {
	f := mustAPIFixture(t)
	at := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	var created keyJSON
	f.call(t, "POST", "/api/v1/keys", f.alice, `{"kind":"user","name":"laptop","expires_at":"`+at.Format(time.RFC3339)+`"}`).want(t, http.StatusCreated).decode(t, &created)
	if created.ExpiresAt == nil || !created.ExpiresAt.Equal(at) {
		t.Errorf("created key expires at %v, want %v", created.ExpiresAt, at)
	}
	var shown keyJSON
	f.call(t, "GET", "/api/v1/keys/"+created.ID, f.alice, "").want(t, http.StatusOK).decode(t, &shown)
	if shown.ID != created.ID || shown.Name != "laptop" || shown.Key != "" || shown.Hash != nil || shown.ExpiresAt == nil || !shown.ExpiresAt.Equal(at) {
		t.Errorf("shown key = %+v", shown)
	}
	f.call(t, "GET", "/api/v1/keys/"+created.ID, f.bob, "").wantError(t, http.StatusNotFound, "not_found", "", "")
	f.call(t, "GET", "/api/v1/keys/"+created.ID, f.shopKey, "").wantError(t, http.StatusForbidden, "forbidden", "", "")
	f.call(t, "GET", "/api/v1/keys/key_nope", f.alice, "").want(t, http.StatusNotFound)

	var changed keyJSON
	f.call(t, "PATCH", "/api/v1/keys/"+created.ID, f.alice, `{"name":"desktop"}`).want(t, http.StatusOK).decode(t, &changed)
	if changed.Name != "desktop" || changed.ExpiresAt == nil || !changed.ExpiresAt.Equal(at) {
		t.Errorf("after a name change: %+v, want the expiry kept", changed)
	}
	var never keyJSON
	f.call(t, "PATCH", "/api/v1/keys/"+created.ID, f.alice, `{"expires_at":null}`).want(t, http.StatusOK).decode(t, &never)
	if never.Name != "desktop" || never.ExpiresAt != nil {
		t.Errorf("after expires_at null: %+v, want no expiry", never)
	}
	f.call(t, "PATCH", "/api/v1/keys/"+created.ID, f.alice, `{"expires_at":"soon"}`).wantError(t, http.StatusBadRequest, "invalid", "expires_at", "RFC 3339")
	f.call(t, "PATCH", "/api/v1/keys/"+created.ID, f.alice, `{"expires_at":"2001-01-01T00:00:00Z"}`).wantError(t, http.StatusBadRequest, "invalid", "expires_at", "has passed")
	f.call(t, "PATCH", "/api/v1/keys/"+created.ID, f.bob, `{"name":"mine"}`).want(t, http.StatusNotFound)
	f.call(t, "POST", "/api/v1/keys", f.alice, `{"kind":"user","expires_at":"2001-01-01T00:00:00Z"}`).wantError(t, http.StatusBadRequest, "invalid", "expires_at", "has passed")
}

// TestAPIExpiredKey checks that an expired key gets 401 saying so.
func TestAPIExpiredKey(t *testing.T) {
	f := mustAPIFixture(t)
	ctx := context.Background()
	u, err := f.store.FindUserByName(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	k, secret := auth.NewKey(mcpgate.KeyUser, u.ID, "", "old")
	past := time.Now().Add(-time.Minute)
	k.ExpiresAt = &past
	if err := f.store.CreateKey(ctx, k); err != nil {
		t.Fatal(err)
	}
	r := f.call(t, "GET", "/api/v1/agents", secret, "")
	r.wantError(t, http.StatusUnauthorized, "unauthorized", "", "this API key expired at")
	if !strings.Contains(r.body, "mcpgate key set "+k.ID) {
		t.Errorf("the 401 does not say how to extend the key: %s", r.body)
	}
}
