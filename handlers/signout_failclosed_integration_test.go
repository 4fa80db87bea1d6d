//go:build integration

package handlers

import (
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/clusterdesk/clusterdesk/internal/auth"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// shortLag makes a replica count as behind 5 s after its watch last proved
// current (heartbeats every 1.7 s), so that the tests wait seconds, not the
// default 30 s.
func shortLag(s *auth.SharedRevoker) { s.MaxLag = 5 * time.Second }

func sharedTestKeys(t *testing.T) *auth.Keys {
	t.Helper()
	keys, err := auth.ParseKeys([]byte(base64.StdEncoding.EncodeToString([]byte(uniq("clusterdesk-it-failclosed-key-0123456789")))))
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// signInOn signs in on r with token and returns the session cookie.
func signInOn(t *testing.T, r *replica, token string) *http.Cookie {
	t.Helper()
	rec := httptest.NewRecorder()
	r.h.ServeHTTP(rec, tokenSignInRequest(t, r.h, token))
	return sessionCookie(t, rec)
}

// signOutOn posts the logout form on r with cookie; the lead's sign-out
// must succeed (it writes the revocation Lease).
func signOutOn(t *testing.T, r *replica, cookie *http.Cookie) {
	t.Helper()
	form := pageCSRFToken(t, r.h, withCookie(cookie))
	out := httptest.NewRequest(http.MethodPost, "/logout", strings.NewReader("_csrf="+form))
	out.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	out.Header.Set("Sec-Fetch-Site", "same-origin")
	out.AddCookie(cookie)
	rec := httptest.NewRecorder()
	r.h.ServeHTTP(rec, out)
	if rec.Code != http.StatusOK {
		t.Fatalf("logout: status %d: %.300s", rec.Code, rec.Body.String())
	}
}

func (r *replica) readyz(t *testing.T) (int, string) {
	t.Helper()
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Get(r.srv.URL + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// Attack: sign out on A, then delete the revocation Lease with the admin
// client (or anyone who may delete Leases in the console's namespace). Once
// both replicas' watches have delivered the deletion (each has heard a
// heartbeat it sent after it), the cookie must still be refused on both, and
// the Lease must be back for replicas that start later. Before the fix the
// deletion made both replicas forget the sign-out: the cookie worked again.
func TestDeletingASignOutLeaseRevivesNoSession(t *testing.T) {
	ns, console := consoleNamespace(t)
	keys := sharedTestKeys(t)
	a := newReplica(t, keys, ns, console, shortLag)
	b := newReplica(t, keys, ns, console, shortLag)
	person := testcluster.NewServiceAccount(t, "clusterdesk-it-failclosed-reader", writerRules)
	cookie := signInOn(t, a, person.Token)
	if code := b.get(t, cookie, "/csrs"); code != http.StatusOK {
		t.Fatalf("A's session on B: status %d", code)
	}
	signOutOn(t, a, cookie)
	waitFor(t, "B to refuse the signed-out cookie", 60*time.Second, func() bool { return b.get(t, cookie, "/csrs") == http.StatusUnauthorized })

	sess, err := auth.NewSessionsWithKeys(keys).Peek(requestWithCookie(cookie))
	if err != nil {
		t.Fatal(err)
	}
	name := auth.SessionRevocationName(sess.ID)
	admin := kubernetes.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin))
	ctx := context.Background()
	if err := admin.CoordinationV1().Leases(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deleted := time.Now()
	// A heartbeat sent after the deletion and heard back means the watch
	// delivered the deletion before it: no timing assumed.
	waitFor(t, "both watches to deliver the deletion", 60*time.Second, func() bool {
		return a.shared.KnownAt().After(deleted) && b.shared.KnownAt().After(deleted)
	})
	for where, r := range map[string]*replica{"A": a, "B": b} {
		if code := r.get(t, cookie, "/csrs"); code != http.StatusUnauthorized {
			t.Errorf("the signed-out cookie on %s after its Lease was deleted: status %d, want 401", where, code)
		}
	}
	waitFor(t, "a replica to write the Lease back", 60*time.Second, func() bool {
		_, err := admin.CoordinationV1().Leases(ns).Get(ctx, name, metav1.GetOptions{})
		return err == nil
	})
	t.Logf("the deleted revocation Lease was back %v after its deletion", time.Since(deleted).Round(time.Millisecond))

	// Edited rather than deleted: the label taken off (out of the watch's
	// selection) and the times shrunk to nothing.
	l, err := admin.CoordinationV1().Leases(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	delete(l.Labels, kube.RevocationLabel)
	one := int32(1)
	l.Spec.LeaseDurationSeconds = &one
	if _, err := admin.CoordinationV1().Leases(ns).Update(ctx, l, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	edited := time.Now()
	waitFor(t, "both watches to deliver the edit", 60*time.Second, func() bool {
		return a.shared.KnownAt().After(edited) && b.shared.KnownAt().After(edited)
	})
	for where, r := range map[string]*replica{"A": a, "B": b} {
		if code := r.get(t, cookie, "/csrs"); code != http.StatusUnauthorized {
			t.Errorf("the signed-out cookie on %s after its Lease lost its label: status %d, want 401", where, code)
		}
	}
	waitFor(t, "a replica to put the label back", 60*time.Second, func() bool {
		l, err := admin.CoordinationV1().Leases(ns).Get(ctx, name, metav1.GetOptions{})
		return err == nil && l.Labels[kube.RevocationLabel] == kube.RevokeSession && l.Spec.LeaseDurationSeconds != nil && *l.Spec.LeaseDurationSeconds > 60
	})
	// A replica that starts now learns it from the cluster alone.
	c := newReplica(t, keys, ns, console, shortLag)
	if code := c.get(t, cookie, "/csrs"); code != http.StatusUnauthorized {
		t.Errorf("the signed-out cookie on a replica started after the tampering: status %d, want 401", code)
	}
}

// Attack: B's watch of the sign-outs breaks (its connection to the API server
// goes through a proxy the test cuts; A and the sign-in's token reviews talk
// to the API server directly). The person signs out on A. Before the fix B
// kept accepting the signed-out cookie for as long as its watch was down.
// Now B counts as behind once MaxLag has passed without a heartbeat and
// refuses every session, a fresh sign-in made on B included (the rule in
// auth.SharedRevoker), and /readyz says why; once the connection is back,
// B catches up and refuses the signed-out cookie and accepts the fresh one.
func TestReplicaWithABrokenSignOutWatchFailsClosed(t *testing.T) {
	ns, console := consoleNamespace(t)
	keys := sharedTestKeys(t)
	proxy := testcluster.NewProxy(t)
	viaProxy := rest.CopyConfig(console)
	viaProxy.Host = proxy.Config(t, testcluster.Admin).Host
	a := newReplica(t, keys, ns, console, shortLag)
	b := newReplica(t, keys, ns, viaProxy, shortLag)
	person := testcluster.NewServiceAccount(t, "clusterdesk-it-failclosed-cut", writerRules)
	cookie := signInOn(t, a, person.Token)
	if code := b.get(t, cookie, "/csrs"); code != http.StatusOK {
		t.Fatalf("A's session on B: status %d", code)
	}
	if code, body := b.readyz(t); code != http.StatusOK || !strings.Contains(body, "sign-outs: current") {
		t.Fatalf("B's /readyz before the cut: %d %q", code, body)
	}

	proxy.Cut()
	cut := time.Now()
	signOutOn(t, a, cookie)
	waitFor(t, "B to refuse the cookie signed out on A while its watch is cut", 60*time.Second, func() bool {
		return b.get(t, cookie, "/csrs") == http.StatusUnauthorized
	})
	t.Logf("B refused the cookie %v after its watch was cut (MaxLag %v)", time.Since(cut).Round(time.Millisecond), b.shared.MaxLag)
	code, body := b.readyz(t)
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "sign-outs: behind") {
		t.Errorf("B's /readyz while behind: %d %q, want 503 saying the sign-outs are behind", code, body)
	}
	t.Logf("B's /readyz while behind: %d %q", code, body)
	if code, _ := a.readyz(t); code != http.StatusOK {
		t.Errorf("A's /readyz: %d", code)
	}
	fresh := signInOn(t, b, person.Token)
	if code := b.get(t, fresh, "/csrs"); code != http.StatusUnauthorized {
		t.Errorf("a fresh sign-in on B while behind: status %d, want 401 (B cannot know whether it is signed out elsewhere)", code)
	}
	if code := a.get(t, fresh, "/csrs"); code != http.StatusOK {
		t.Errorf("the fresh sign-in from B on A: status %d", code)
	}

	proxy.Restore(t)
	restored := time.Now()
	waitFor(t, "B to be current again", 120*time.Second, b.shared.Ready)
	t.Logf("B was current again %v after the connection came back", time.Since(restored).Round(time.Millisecond))
	if code := b.get(t, cookie, "/csrs"); code != http.StatusUnauthorized {
		t.Errorf("the cookie signed out during the cut, on B once current: status %d, want 401", code)
	}
	if code := b.get(t, fresh, "/csrs"); code != http.StatusOK {
		t.Errorf("the fresh sign-in on B once current: status %d", code)
	}
	if code, body := b.readyz(t); code != http.StatusOK {
		t.Errorf("B's /readyz once current: %d %q", code, body)
	}
}
