//go:build integration

package handlers

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/clusterdesk/clusterdesk/internal/auth"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/live/sseclient"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// consoleNamespace makes a namespace for the console's own objects with the
// console's service account bound to deploy/'s Role for sign-outs (so the
// test proves those rights suffice), and returns that account's client
// config. Everything is deleted after the test.
func consoleNamespace(t *testing.T) (string, *rest.Config) {
	t.Helper()
	ctx := context.Background()
	admin := kubernetes.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin))
	ns := fmt.Sprintf("clusterdesk-it-sessions-%d", time.Now().UnixNano())
	if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var role rbacv1.Role
	for _, o := range testcluster.ReadManifests(t, filepath.Join("..", "deploy", "base", "clusterdesk.yaml")) {
		if o.GetKind() == "Role" && o.GetName() == "clusterdesk-sessions" {
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &role); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(role.Rules) == 0 {
		t.Fatal("deploy/base has no Role clusterdesk-sessions with rules")
	}
	role.ObjectMeta = metav1.ObjectMeta{Name: "clusterdesk-sessions", Namespace: ns}
	t.Cleanup(func() {
		_ = admin.CoordinationV1().Leases(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: kube.RevocationLabel})
		_ = admin.RbacV1().RoleBindings(ns).Delete(ctx, role.Name, metav1.DeleteOptions{})
		_ = admin.RbacV1().Roles(ns).Delete(ctx, role.Name, metav1.DeleteOptions{})
		_ = admin.CoreV1().ServiceAccounts(ns).Delete(ctx, "clusterdesk", metav1.DeleteOptions{})
		testcluster.DeleteNamespace(t, admin, ns)
	})
	if _, err := admin.RbacV1().Roles(ns).Create(ctx, &role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role.Name, Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "clusterdesk", Namespace: ns}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "clusterdesk"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	hour := int64(3600)
	tr, err := admin.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "clusterdesk", &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &hour}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := rest.AnonymousClientConfig(testcluster.RestConfig(t, testcluster.Admin))
	cfg.BearerToken = tr.Status.Token
	return ns, cfg
}

// replica is one console process: its own cache, live hub, per-user clients
// and watch of the shared sign-outs, sealing with the shared keys.
type replica struct {
	h      http.Handler
	srv    *httptest.Server
	shared *auth.SharedRevoker
}

// newReplica starts a replica watching the sign-outs with console's
// identity (and address); opts set the revoker up before it runs.
func newReplica(t *testing.T, keys *auth.Keys, ns string, console *rest.Config, opts ...func(*auth.SharedRevoker)) *replica {
	t.Helper()
	stack := newLiveStack(t)
	cfg := testcluster.RestConfig(t, testcluster.Admin)
	users := strictUsers(t, cfg)
	sessions := auth.NewSessionsWithKeys(keys)
	revocations, err := kube.NewRevocations(console, ns)
	if err != nil {
		t.Fatal(err)
	}
	shared := auth.NewSharedRevoker(revocations, sessions.Absolute)
	sessions.Revocations = shared
	for _, o := range opts {
		o(shared)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	synced, err := revocations.Watch(ctx, shared)
	if err != nil {
		t.Fatal(err)
	}
	shared.SetReady(synced)
	go shared.Run(ctx)
	waitFor(t, "the sign-outs watch to list and deliver a heartbeat", 30*time.Second, shared.Ready)

	deps := Deps{Log: stack.log, Cluster: stack.cache, Sessions: sessions, User: testcluster.Admin, Users: users, Live: stack.updates}
	r := &replica{h: newConsole(t, deps, perUserClients(users), tokenMode(reviewAs(cfg))).e, shared: shared}
	r.srv = httptest.NewServer(r.h)
	t.Cleanup(r.srv.Close)
	return r
}

func (r *replica) get(t *testing.T, cookie *http.Cookie, path string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, r.srv.URL+path, nil)
	req.AddCookie(cookie)
	client := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// Stateless replicas (issue 17, item 1): two consoles sharing keys and the
// cluster, no sticky sessions. A session signed in on A works on B, with a
// form A rendered; signed out on B, its cookie is refused on A and A's open
// event stream is told session-expired, both learnt through the cluster.
func TestReplicasShareSessionsAndSignOuts(t *testing.T) {
	ns, console := consoleNamespace(t)
	keys, err := auth.ParseKeys([]byte(base64.StdEncoding.EncodeToString([]byte(uniq("clusterdesk-it-sessions-key-0123456789")))))
	if err != nil {
		t.Fatal(err)
	}
	a := newReplica(t, keys, ns, console)
	b := newReplica(t, keys, ns, console)
	person := testcluster.NewServiceAccount(t, "clusterdesk-it-sessions-reader", writerRules)

	rec := httptest.NewRecorder()
	a.h.ServeHTTP(rec, tokenSignInRequest(t, a.h, person.Token))
	cookie := sessionCookie(t, rec)
	t.Logf("a devcluster service-account token of %d bytes makes a session cookie of %d bytes (name and value)",
		len(person.Token), len(cookie.Name)+len(cookie.Value))
	if strings.Contains(cookie.Value, person.Token[:40]) {
		t.Fatal("the cookie shows the token")
	}

	if code := b.get(t, cookie, "/csrs"); code != http.StatusOK {
		t.Fatalf("A's session on B: /csrs status %d", code)
	}
	events := subscribe(t, a.srv, cookie, "kinds=csrs")
	await(t, events, 10*time.Second, "hello", func(ev sseclient.Event) bool { return ev.Event == "hello" })

	// Log out on B with the form token A rendered.
	formOfA := pageCSRFToken(t, a.h, withCookie(cookie))
	out := httptest.NewRequest(http.MethodPost, "/logout", strings.NewReader("_csrf="+formOfA))
	out.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	out.Header.Set("Sec-Fetch-Site", "same-origin")
	out.AddCookie(cookie)
	rec = httptest.NewRecorder()
	b.h.ServeHTTP(rec, out)
	if rec.Code != http.StatusOK {
		t.Fatalf("logout on B with A's form: status %d: %.300s", rec.Code, rec.Body.String())
	}
	loggedOut := time.Now()
	if code := b.get(t, cookie, "/csrs"); code != http.StatusUnauthorized {
		t.Errorf("the saved cookie on B right after logout: status %d, want 401", code)
	}

	// A learns of it from its watch: poll, no claim on speed.
	waitFor(t, "replica A to refuse the signed-out cookie", 60*time.Second, func() bool {
		return a.get(t, cookie, "/csrs") == http.StatusUnauthorized
	})
	t.Logf("replica A refused the cookie %v after the logout on B", time.Since(loggedOut).Round(time.Millisecond))
	ev := await(t, events, 60*time.Second, "session-expired on A", func(ev sseclient.Event) bool { return ev.Event == sessionEndedEvent })
	if !strings.Contains(ev.Data, "banner-session-expired") {
		t.Errorf("session-expired carries no banner: %.200s", ev.Data)
	}
	t.Logf("A's stream told session-expired %v after the logout on B", time.Since(loggedOut).Round(time.Millisecond))

	// One Lease per logout, named by the session's hash, none else (besides
	// the replicas' heartbeat).
	admin := kubernetes.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin))
	leases, err := admin.CoordinationV1().Leases(ns).List(context.Background(), metav1.ListOptions{LabelSelector: kube.RevocationLabel + " in (session,user,all)"})
	if err != nil {
		t.Fatal(err)
	}
	sess, err := auth.NewSessionsWithKeys(keys).Peek(requestWithCookie(cookie))
	if err != nil {
		t.Fatal(err)
	}
	if len(leases.Items) != 1 || leases.Items[0].Name != auth.SessionRevocationName(sess.ID) {
		t.Fatalf("%d revocation Leases after one logout, want the session's one", len(leases.Items))
	}
	if strings.Contains(leases.Items[0].String(), sess.ID) {
		t.Error("the Lease reveals the session id")
	}
}

func requestWithCookie(c *http.Cookie) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.AddCookie(c)
	return r
}
