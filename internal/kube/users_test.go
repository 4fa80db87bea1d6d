package kube

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/client-go/rest"
)

func baseConfig() *rest.Config {
	return &rest.Config{
		Host:        "https://127.0.0.1:6443",
		BearerToken: "console-token",
		Username:    "console", Password: "pw",
		Impersonate: rest.ImpersonationConfig{UserName: "someone"},
		TLSClientConfig: rest.TLSClientConfig{
			CAData: []byte("ca"), CertData: []byte("cert"), KeyData: []byte("key"),
		},
	}
}

func TestTokenConfigKeepsOnlyTheUsersToken(t *testing.T) {
	c := TokenConfig(baseConfig(), "user-token")
	if c.BearerToken != "user-token" || c.Username != "" || c.Password != "" || c.BearerTokenFile != "" {
		t.Errorf("credentials: %+v", c)
	}
	if len(c.CertData) != 0 || len(c.KeyData) != 0 || c.Impersonate.UserName != "" {
		t.Errorf("the console's client certificate or impersonation survived")
	}
	if c.Host != "https://127.0.0.1:6443" || string(c.CAData) != "ca" {
		t.Errorf("server or CA lost: %s %q", c.Host, c.CAData)
	}
}

func TestImpersonatingConfig(t *testing.T) {
	groups := []string{"team-a"}
	c := ImpersonatingConfig(baseConfig(), "alice", groups)
	groups[0] = "changed"
	if c.Impersonate.UserName != "alice" || len(c.Impersonate.Groups) != 1 || c.Impersonate.Groups[0] != "team-a" {
		t.Errorf("impersonation %+v", c.Impersonate)
	}
	if c.BearerToken != "console-token" {
		t.Error("impersonation must use the console's credentials")
	}
}

func TestUsersCachesClientsPerIdentity(t *testing.T) {
	u, err := NewUsers(&rest.Config{Host: "https://127.0.0.1:6443", BearerToken: "console-token"}, 2)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	console, err := u.For(ctx)
	if err != nil || console != u.Console() {
		t.Fatalf("no identity, not strict: want the console's clients, got %p %v", console, err)
	}
	u.Strict = true
	if _, err := u.For(ctx); !errors.Is(err, ErrNoIdentity) {
		t.Fatalf("strict without identity: %v", err)
	}
	if ok, err := (UserAccess{Users: u}).Can(ctx, "list", "", "pods", "", ""); ok || err != nil {
		t.Fatalf("strict access without identity: %v %v", ok, err)
	}

	alice := WithIdentity(ctx, Identity{User: "alice", Act: ActWithToken, Token: "a-token"})
	alice2 := WithIdentity(ctx, Identity{User: "alice", Act: ActWithToken, Token: "another-token"})
	bob := WithIdentity(ctx, Identity{User: "bob", Groups: []string{"g"}, Act: ActImpersonating})
	a1, _ := u.For(alice)
	a2, _ := u.For(alice)
	if a1 == nil || a1 != a2 || a1 == u.Console() {
		t.Fatal("the same identity must reuse its clients")
	}
	other, _ := u.For(alice2)
	if other == a1 {
		t.Fatal("a different token must get different clients")
	}
	b, err := u.For(bob)
	if err != nil || b == a1 {
		t.Fatalf("impersonated identity: %v", err)
	}
	if u.clients.Len() != 2 {
		t.Fatalf("LRU bound 2 holds %d", u.clients.Len())
	}
	if a3, _ := u.For(alice); a3 == a1 {
		t.Fatal("the least recently used identity should have been evicted")
	}
	if _, err := u.For(WithIdentity(ctx, Identity{User: "x", Act: ActWithToken})); !errors.Is(err, ErrNoIdentity) {
		t.Fatalf("token identity without token: %v", err)
	}
}

func TestIdentityNeverShowsItsToken(t *testing.T) {
	id := Identity{User: "alice", Groups: []string{"g1", "g2"}, Act: ActWithToken, Token: "very-secret-token"}
	if s := id.String(); strings.Contains(s, "very-secret") || !strings.Contains(s, "alice") {
		t.Errorf("String() = %q", s)
	}
	if k := cacheKey(id); strings.Contains(k, "very-secret") || len(k) != 32 {
		t.Errorf("cache key holds the token or is not a SHA-256")
	}
	if cacheKey(id) == cacheKey(Identity{User: "alice", Groups: []string{"g1,g2"}, Act: ActWithToken, Token: "very-secret-token"}) {
		t.Error("groups [g1 g2] and [g1,g2] share a key")
	}
}

func TestAccessReportsCacheHitsAndMisses(t *testing.T) {
	asked := 0
	a := newReviewAccess(func(context.Context, *authorizationv1.ResourceAttributes) (bool, error) {
		asked++
		return true, nil
	})
	hits, misses := 0, 0
	a.observe = func(hit bool) {
		if hit {
			hits++
		} else {
			misses++
		}
	}
	for range 3 {
		if ok, err := a.Can(context.Background(), "list", "", "nodes", "", ""); !ok || err != nil {
			t.Fatal(ok, err)
		}
	}
	if _, err := a.Can(context.Background(), "delete", "", "nodes", "", "n1"); err != nil {
		t.Fatal(err)
	}
	if hits != 2 || misses != 2 || asked != 2 {
		t.Fatalf("hits %d misses %d reviews %d, want 2 2 2", hits, misses, asked)
	}
}

func TestAccessAnswersAreBounded(t *testing.T) {
	a := newReviewAccess(func(context.Context, *authorizationv1.ResourceAttributes) (bool, error) { return true, nil })
	for i := range accessMaxAnswers * 3 {
		if _, err := a.Can(context.Background(), "get", "", "nodes", "", fmt.Sprint("node-", i)); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(a.answers); n > accessMaxAnswers {
		t.Fatalf("%d answers kept, bound %d", n, accessMaxAnswers)
	}
}

// BenchmarkUserAccessCached is the cost a page pays per access question once
// the answer is cached: finding the identity's clients and its answer.
func BenchmarkUserAccessCached(b *testing.B) {
	u, err := NewUsers(&rest.Config{Host: "https://127.0.0.1:6443"}, 0)
	if err != nil {
		b.Fatal(err)
	}
	ctx := WithIdentity(context.Background(), Identity{User: "alice", Groups: []string{"g"}, Act: ActWithToken, Token: "t"})
	c, err := u.For(ctx)
	if err != nil {
		b.Fatal(err)
	}
	c.Access.review = func(context.Context, *authorizationv1.ResourceAttributes) (bool, error) { return true, nil }
	a := UserAccess{Users: u}
	b.ReportAllocs()
	for b.Loop() {
		if ok, err := a.Can(ctx, "list", "storage.k8s.io", "csidrivers", "", ""); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}

func TestAccessCanURLAsksWithNonResourceAttributes(t *testing.T) {
	var asked []authorizationv1.NonResourceAttributes
	resourceQuestions := 0
	a := newReviewAccess(func(context.Context, *authorizationv1.ResourceAttributes) (bool, error) {
		resourceQuestions++
		return true, nil
	})
	a.reviewURL = func(_ context.Context, attrs *authorizationv1.NonResourceAttributes) (bool, error) {
		asked = append(asked, *attrs)
		return attrs.Path == "/metrics", nil
	}
	for range 2 {
		if ok, err := a.CanURL(t.Context(), "get", "/metrics"); !ok || err != nil {
			t.Fatalf("get /metrics = %v, %v", ok, err)
		}
	}
	if ok, _ := a.CanURL(t.Context(), "get", "/debug/pprof"); ok {
		t.Error("get /debug/pprof allowed")
	}
	if len(asked) != 2 || asked[0] != (authorizationv1.NonResourceAttributes{Verb: "get", Path: "/metrics"}) {
		t.Errorf("asked %+v; want /metrics once (cached) and /debug/pprof once", asked)
	}
	if resourceQuestions != 0 {
		t.Errorf("%d URL questions asked as resource questions", resourceQuestions)
	}
	// A URL answer never stands in for a resource answer with the same words.
	if ok, _ := a.Can(t.Context(), "get", "", "", "", "/debug/pprof"); !ok || resourceQuestions != 1 {
		t.Error("resource question got the URL's cached answer")
	}
}
