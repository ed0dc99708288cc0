package storetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
)

func oauthTests() []test {
	return []test{
		{"Clients", testOAuthClients},
		{"ListAndDeleteClients", testOAuthListDeleteClients},
		{"Grants", testOAuthGrants},
		{"RevokeGrantRevokesFamilies", testOAuthRevokeGrant},
		{"Families", testOAuthFamilies},
		{"CodeUsedOnce", testOAuthCodeUsedOnce},
		{"CodeUsedOnceConcurrently", testOAuthCodeConcurrent},
		{"RefreshTokens", testOAuthRefreshTokens},
		{"SigningKeys", testOAuthSigningKeys},
		{"DeleteExpired", testOAuthDeleteExpired},
		{"DeleteUserCascades", testOAuthDeleteUser},
	}
}

func testOAuthClients(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	c := &mcpgate.OAuthClient{ID: "cl_1", Name: "Inspector", RedirectURIs: []string{"http://127.0.0.1:6274/cb", "https://app.example/cb"},
		AuthMethod: mcpgate.AuthMethodBasic, SecretHash: "abcd", ClientURI: "https://app.example", LogoURI: "https://app.example/logo.png"}
	must(t, s.CreateOAuthClient(ctx, c))
	mustStoredTime(t, "CreatedAt", c.CreatedAt)
	got, err := s.FindOAuthClient(ctx, "cl_1")
	must(t, err)
	mustEqual(t, "FindOAuthClient", got, c)
	mustCode(t, s.CreateOAuthClient(ctx, &mcpgate.OAuthClient{ID: "cl_1", AuthMethod: mcpgate.AuthMethodNone}), mcpgate.ECONFLICT)
	_, err = s.FindOAuthClient(ctx, "cl_missing")
	mustCode(t, err, mcpgate.ENOTFOUND)
}

func testOAuthListDeleteClients(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	list, err := s.ListOAuthClients(ctx)
	must(t, err)
	if len(list) != 0 {
		t.Fatalf("ListOAuthClients of an empty store = %v", list)
	}
	b := &mcpgate.OAuthClient{ID: "cl_b", RedirectURIs: []string{"http://127.0.0.1/cb"}, AuthMethod: mcpgate.AuthMethodNone}
	a := &mcpgate.OAuthClient{ID: "cl_a", Name: "A", RedirectURIs: []string{"http://127.0.0.1/cb"}, AuthMethod: mcpgate.AuthMethodNone}
	must(t, s.CreateOAuthClient(ctx, b))
	must(t, s.CreateOAuthClient(ctx, a))
	list, err = s.ListOAuthClients(ctx)
	must(t, err)
	mustEqual(t, "ListOAuthClients", list, []*mcpgate.OAuthClient{a, b})

	alice, bob := mustUser(t, s, "alice"), mustUser(t, s, "bob")
	ga := &mcpgate.OAuthGrant{UserID: alice.ID, ClientID: "cl_a"}
	gb := &mcpgate.OAuthGrant{UserID: bob.ID, ClientID: "cl_a"}
	keep := &mcpgate.OAuthGrant{UserID: alice.ID, ClientID: "cl_b"}
	for _, g := range []*mcpgate.OAuthGrant{ga, gb, keep} {
		must(t, s.SaveOAuthGrant(ctx, g))
	}
	fa, fb, fkeep := mustFamily(t, s, "fam_a", ga), mustFamily(t, s, "fam_b", gb), mustFamily(t, s, "fam_keep", keep)
	at := time.Date(2030, 1, 2, 3, 4, 5, 6000, time.UTC)
	must(t, s.DeleteOAuthClient(ctx, "cl_a", at))
	_, err = s.FindOAuthClient(ctx, "cl_a")
	mustCode(t, err, mcpgate.ENOTFOUND)
	for _, u := range []*mcpgate.User{alice, bob} {
		_, err = s.FindOAuthGrant(ctx, u.ID, "cl_a")
		mustCode(t, err, mcpgate.ENOTFOUND)
	}
	for _, f := range []*mcpgate.OAuthFamily{fa, fb} {
		got, err := s.FindOAuthFamily(ctx, f.ID)
		must(t, err)
		if got.RevokedAt == nil || !got.RevokedAt.Equal(at) {
			t.Errorf("family %s RevokedAt = %v, want %v", f.ID, got.RevokedAt, at)
		}
	}
	got, err := s.FindOAuthFamily(ctx, fkeep.ID)
	must(t, err)
	mustEqual(t, "another client's family", got, fkeep)
	left, err := s.FindOAuthGrant(ctx, alice.ID, "cl_b")
	must(t, err)
	mustEqual(t, "another client's grant", left, keep)
	mustCode(t, s.DeleteOAuthClient(ctx, "cl_a", at), mcpgate.ENOTFOUND)
}

func testOAuthGrants(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	alice, bob := mustUser(t, s, "alice"), mustUser(t, s, "bob")
	g := &mcpgate.OAuthGrant{UserID: alice.ID, ClientID: "https://app.example/client.json", Agents: []string{"weather"}}
	must(t, s.SaveOAuthGrant(ctx, g))
	if g.ID == "" {
		t.Fatal("SaveOAuthGrant left the ID empty")
	}
	mustStoredTime(t, "CreatedAt", g.CreatedAt)
	tick(g.UpdatedAt)
	again := &mcpgate.OAuthGrant{UserID: alice.ID, ClientID: g.ClientID, Agents: []string{"news", "weather"}}
	must(t, s.SaveOAuthGrant(ctx, again))
	if again.ID != g.ID || !again.CreatedAt.Equal(g.CreatedAt) || !again.UpdatedAt.After(g.UpdatedAt) {
		t.Errorf("saved again = %+v, want the ID and CreatedAt of %+v and a later UpdatedAt", again, g)
	}
	got, err := s.FindOAuthGrant(ctx, alice.ID, g.ClientID)
	must(t, err)
	mustEqual(t, "FindOAuthGrant", got, again)
	_, err = s.FindOAuthGrant(ctx, bob.ID, g.ClientID)
	mustCode(t, err, mcpgate.ENOTFOUND)
	other := &mcpgate.OAuthGrant{UserID: alice.ID, ClientID: "cl_a", Agents: nil}
	must(t, s.SaveOAuthGrant(ctx, other))
	list, err := s.ListOAuthGrants(ctx, alice.ID)
	must(t, err)
	mustEqual(t, "ListOAuthGrants", list, []*mcpgate.OAuthGrant{other, again})
	mustCode(t, s.SaveOAuthGrant(ctx, &mcpgate.OAuthGrant{UserID: "usr_missing", ClientID: "cl_a"}), mcpgate.EINVALID)
}

func testOAuthRevokeGrant(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	u := mustUser(t, s, "alice")
	g := &mcpgate.OAuthGrant{UserID: u.ID, ClientID: "cl_1", Agents: []string{"weather"}}
	must(t, s.SaveOAuthGrant(ctx, g))
	f1, f2 := mustFamily(t, s, "fam_1", g), mustFamily(t, s, "fam_2", g)
	other := mustFamily(t, s, "fam_other", &mcpgate.OAuthGrant{ID: "grt_other", UserID: u.ID, ClientID: "cl_2"})
	at := time.Date(2030, 1, 2, 3, 4, 5, 6000, time.UTC)
	must(t, s.RevokeOAuthGrant(ctx, g.ID, at))
	for _, f := range []*mcpgate.OAuthFamily{f1, f2} {
		got, err := s.FindOAuthFamily(ctx, f.ID)
		must(t, err)
		if got.RevokedAt == nil || !got.RevokedAt.Equal(at) {
			t.Errorf("family %s RevokedAt = %v, want %v", f.ID, got.RevokedAt, at)
		}
	}
	got, err := s.FindOAuthFamily(ctx, other.ID)
	must(t, err)
	mustEqual(t, "other family", got, other)
	_, err = s.FindOAuthGrant(ctx, u.ID, "cl_1")
	mustCode(t, err, mcpgate.ENOTFOUND)
	mustCode(t, s.RevokeOAuthGrant(ctx, g.ID, at), mcpgate.ENOTFOUND)
}

func testOAuthFamilies(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	u := mustUser(t, s, "alice")
	f := mustFamily(t, s, "fam_1", &mcpgate.OAuthGrant{ID: "grt_1", UserID: u.ID, ClientID: "cl_1"})
	mustStoredTime(t, "CreatedAt", f.CreatedAt)
	got, err := s.FindOAuthFamily(ctx, "fam_1")
	must(t, err)
	mustEqual(t, "FindOAuthFamily", got, f)
	mustCode(t, s.CreateOAuthFamily(ctx, &mcpgate.OAuthFamily{ID: "fam_1", UserID: u.ID}), mcpgate.ECONFLICT)
	mustCode(t, s.CreateOAuthFamily(ctx, &mcpgate.OAuthFamily{ID: "fam_2", UserID: "usr_missing"}), mcpgate.EINVALID)
	at := time.Date(2030, 1, 2, 3, 4, 5, 6000, time.UTC)
	must(t, s.RevokeOAuthFamily(ctx, "fam_1", at))
	must(t, s.RevokeOAuthFamily(ctx, "fam_1", at.Add(time.Hour)))
	got, err = s.FindOAuthFamily(ctx, "fam_1")
	must(t, err)
	if got.RevokedAt == nil || !got.RevokedAt.Equal(at) {
		t.Errorf("RevokedAt = %v, want the first revocation %v", got.RevokedAt, at)
	}
	mustCode(t, s.RevokeOAuthFamily(ctx, "fam_missing", at), mcpgate.ENOTFOUND)
	_, err = s.FindOAuthFamily(ctx, "fam_missing")
	mustCode(t, err, mcpgate.ENOTFOUND)
}

func testOAuthCodeUsedOnce(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	u := mustUser(t, s, "alice")
	f := mustFamily(t, s, "fam_1", &mcpgate.OAuthGrant{ID: "grt_1", UserID: u.ID, ClientID: "cl_1"})
	c := mustOAuthCode(t, s, "hash_1", f)
	mustCode(t, s.CreateOAuthCode(ctx, c), mcpgate.ECONFLICT)
	mustCode(t, s.CreateOAuthCode(ctx, &mcpgate.OAuthCode{Hash: "hash_2", FamilyID: "fam_missing"}), mcpgate.EINVALID)
	at := time.Date(2030, 1, 2, 3, 4, 5, 6000, time.UTC)
	first, err := s.UseOAuthCode(ctx, "hash_1", at)
	must(t, err)
	mustEqual(t, "first use", first, c)
	second, err := s.UseOAuthCode(ctx, "hash_1", at.Add(time.Second))
	must(t, err)
	if second.UsedAt == nil || !second.UsedAt.Equal(at) {
		t.Errorf("second use: UsedAt = %v, want the first use %v", second.UsedAt, at)
	}
	_, err = s.UseOAuthCode(ctx, "hash_missing", at)
	mustCode(t, err, mcpgate.ENOTFOUND)
}

func testOAuthCodeConcurrent(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	u := mustUser(t, s, "alice")
	f := mustFamily(t, s, "fam_1", &mcpgate.OAuthGrant{ID: "grt_1", UserID: u.ID, ClientID: "cl_1"})
	mustOAuthCode(t, s, "hash_1", f)
	const n = 8
	var wg sync.WaitGroup
	var mu sync.Mutex
	firsts := 0
	for range n {
		wg.Go(func() {
			c, err := s.UseOAuthCode(ctx, "hash_1", time.Now())
			if err != nil {
				t.Error(err)
				return
			}
			if c.UsedAt == nil {
				mu.Lock()
				firsts++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if firsts != 1 {
		t.Errorf("%d of %d concurrent uses were first, want exactly 1", firsts, n)
	}
}

func testOAuthRefreshTokens(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	u := mustUser(t, s, "alice")
	f := mustFamily(t, s, "fam_1", &mcpgate.OAuthGrant{ID: "grt_1", UserID: u.ID, ClientID: "cl_1"})
	created := time.Date(2030, 1, 2, 3, 4, 5, 6000, time.UTC)
	rt := &mcpgate.OAuthRefreshToken{Hash: "rt_1", FamilyID: f.ID, ClientID: "cl_1", UserID: u.ID, Resource: "https://gw.example/weather/mcp",
		Scope: "mcp", Agents: []string{"weather"}, CreatedAt: created, ExpiresAt: created.Add(30 * 24 * time.Hour)}
	must(t, s.CreateOAuthRefreshToken(ctx, rt))
	mustCode(t, s.CreateOAuthRefreshToken(ctx, rt), mcpgate.ECONFLICT)
	mustCode(t, s.CreateOAuthRefreshToken(ctx, &mcpgate.OAuthRefreshToken{Hash: "rt_2", FamilyID: "fam_missing"}), mcpgate.EINVALID)
	got, err := s.FindOAuthRefreshToken(ctx, "rt_1")
	must(t, err)
	mustEqual(t, "FindOAuthRefreshToken", got, rt)
	first, err := s.UseOAuthRefreshToken(ctx, "rt_1", created.Add(time.Minute))
	must(t, err)
	mustEqual(t, "first use", first, rt)
	again, err := s.UseOAuthRefreshToken(ctx, "rt_1", created.Add(time.Hour))
	must(t, err)
	if again.UsedAt == nil || !again.UsedAt.Equal(created.Add(time.Minute)) {
		t.Errorf("second use: UsedAt = %v, want the first use", again.UsedAt)
	}
	_, err = s.UseOAuthRefreshToken(ctx, "rt_missing", created)
	mustCode(t, err, mcpgate.ENOTFOUND)
	_, err = s.FindOAuthRefreshToken(ctx, "rt_missing")
	mustCode(t, err, mcpgate.ENOTFOUND)
}

func testOAuthSigningKeys(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	keys, err := s.ListOAuthSigningKeys(ctx)
	must(t, err)
	mustEqual(t, "no keys", keys, []*mcpgate.OAuthSigningKey(nil))
	k1 := &mcpgate.OAuthSigningKey{ID: "sk_1", Secret: []byte{0, 1, 2, 250}}
	must(t, s.CreateOAuthSigningKey(ctx, k1))
	mustStoredTime(t, "CreatedAt", k1.CreatedAt)
	tick(k1.CreatedAt)
	k2 := &mcpgate.OAuthSigningKey{ID: "sk_2", Secret: []byte("another secret")}
	must(t, s.CreateOAuthSigningKey(ctx, k2))
	mustCode(t, s.CreateOAuthSigningKey(ctx, &mcpgate.OAuthSigningKey{ID: "sk_1", Secret: []byte{1}}), mcpgate.ECONFLICT)
	keys, err = s.ListOAuthSigningKeys(ctx)
	must(t, err)
	mustEqual(t, "keys newest first", keys, []*mcpgate.OAuthSigningKey{k2, k1})
	k1.Secret = []byte("sealed now")
	must(t, s.UpdateOAuthSigningKey(ctx, k1))
	mustCode(t, s.UpdateOAuthSigningKey(ctx, &mcpgate.OAuthSigningKey{ID: "sk_missing", Secret: []byte{1}}), mcpgate.ENOTFOUND)
	keys, err = s.ListOAuthSigningKeys(ctx)
	must(t, err)
	mustEqual(t, "keys after an update", keys, []*mcpgate.OAuthSigningKey{k2, k1})
}

func testOAuthDeleteExpired(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	u := mustUser(t, s, "alice")
	f := mustFamily(t, s, "fam_1", &mcpgate.OAuthGrant{ID: "grt_1", UserID: u.ID, ClientID: "cl_1"})
	cutoff := time.Now()
	old := &mcpgate.OAuthCode{Hash: "old", FamilyID: f.ID, CreatedAt: cutoff.Add(-2 * time.Minute), ExpiresAt: cutoff.Add(-time.Minute)}
	fresh := &mcpgate.OAuthCode{Hash: "fresh", FamilyID: f.ID, CreatedAt: cutoff, ExpiresAt: cutoff.Add(time.Minute)}
	oldRT := &mcpgate.OAuthRefreshToken{Hash: "old_rt", FamilyID: f.ID, CreatedAt: cutoff.Add(-time.Hour), ExpiresAt: cutoff.Add(-time.Second)}
	for _, c := range []*mcpgate.OAuthCode{old, fresh} {
		must(t, s.CreateOAuthCode(ctx, c))
	}
	must(t, s.CreateOAuthRefreshToken(ctx, oldRT))
	n, err := s.DeleteExpiredOAuth(ctx, cutoff)
	must(t, err)
	if n != 2 {
		t.Errorf("DeleteExpiredOAuth = %d, want 2", n)
	}
	_, err = s.UseOAuthCode(ctx, "old", cutoff)
	mustCode(t, err, mcpgate.ENOTFOUND)
	_, err = s.UseOAuthCode(ctx, "fresh", cutoff)
	must(t, err)
}

func testOAuthDeleteUser(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	u := mustUser(t, s, "alice")
	g := &mcpgate.OAuthGrant{UserID: u.ID, ClientID: "cl_1", Agents: []string{"weather"}}
	must(t, s.SaveOAuthGrant(ctx, g))
	f := mustFamily(t, s, "fam_1", g)
	mustOAuthCode(t, s, "hash_1", f)
	must(t, s.DeleteUser(ctx, u.ID))
	_, err := s.FindOAuthFamily(ctx, f.ID)
	mustCode(t, err, mcpgate.ENOTFOUND)
	grants, err := s.ListOAuthGrants(ctx, u.ID)
	must(t, err)
	mustEqual(t, "grants", grants, []*mcpgate.OAuthGrant(nil))
}

func mustFamily(tb testing.TB, s mcpgate.Store, id string, g *mcpgate.OAuthGrant) *mcpgate.OAuthFamily {
	tb.Helper()
	f := &mcpgate.OAuthFamily{ID: id, GrantID: g.ID, ClientID: g.ClientID, UserID: g.UserID}
	must(tb, s.CreateOAuthFamily(context.Background(), f))
	return f
}

func mustOAuthCode(tb testing.TB, s mcpgate.Store, hash string, f *mcpgate.OAuthFamily) *mcpgate.OAuthCode {
	tb.Helper()
	created := time.Now()
	c := &mcpgate.OAuthCode{Hash: hash, FamilyID: f.ID, ClientID: f.ClientID, UserID: f.UserID, RedirectURI: "http://127.0.0.1:1/cb",
		Challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM", Resource: "https://gw.example/weather/mcp", Scope: "mcp",
		Agents: []string{"weather"}, CreatedAt: created, ExpiresAt: created.Add(time.Minute)}
	must(tb, s.CreateOAuthCode(context.Background(), c))
	return c
}
