//go:build integration

package handlers

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	certificatesv1 "k8s.io/api/certificates/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/clusterdesk/clusterdesk/internal/auth"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

const itProxySecret = "integration-proxy-secret-0123456789"

// signedInServer is the console in one sign-in mode on the devcluster, with a
// browser signed in as one identity.
type signedInServer struct {
	e    http.Handler
	sign func(r *http.Request)
}

// person is who signs in: a user name, its groups and its bearer token.
type person struct {
	user   string
	groups []string
	token  string
}

func staticUser(t *testing.T, identity string) person {
	t.Helper()
	token := testcluster.RestConfig(t, identity).BearerToken
	if token == "" {
		t.Fatalf("the devcluster's %s kubeconfig has no bearer token", identity)
	}
	return person{user: identity, groups: []string{"system:authenticated"}, token: token}
}

// newSignedInServer starts the console in mode with cfg as its own identity
// (the cache, impersonation; in local mode everyone acts with it) and signs
// in as p (local mode: through the one-time URL, acting as cfg).
func newSignedInServer(t *testing.T, mode auth.Mode, cfg *rest.Config, p person) *signedInServer {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	cache, err := kube.NewCache(cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go cache.Run(ctx)
	waitFor(t, "the cache to sync", 60*time.Second, cache.Ready)

	users := usersOf(t, cfg, mode != auth.ModeLocal)
	sessions := auth.NewSessions()
	gate := &auth.Gate{Mode: mode, Sessions: sessions, LocalUser: p.user}
	var loginToken string
	deps := Deps{Log: log, Cluster: cache, Sessions: sessions, Gate: gate, User: p.user}
	switch mode {
	case auth.ModeLocal:
		deps.Logins = auth.NewLoginTokens(func(tok string) { loginToken = tok })
	case auth.ModeToken:
		deps.TokenReview = reviewAs(cfg)
	case auth.ModeProxy:
		gate.Sessions = nil
		gate.Proxy = &auth.Proxy{UserHeader: "X-Forwarded-User", GroupsHeader: "X-Forwarded-Groups",
			SecretHeader: auth.DefaultProxySecretHeader, Secret: []byte(itProxySecret)}
	}
	if err := gate.Check(); err != nil {
		t.Fatal(err)
	}
	s := &signedInServer{e: newConsole(t, deps, perUserClients(users)).e}

	switch mode {
	case auth.ModeLocal:
		rec := s.do(httptest.NewRequest(http.MethodGet, "/login?token="+loginToken, nil))
		c := sessionCookie(t, rec)
		s.sign = func(r *http.Request) { r.AddCookie(c) }
	case auth.ModeToken:
		c := sessionCookie(t, s.do(tokenSignInRequest(t, s.e, p.token)))
		s.sign = func(r *http.Request) { r.AddCookie(c) }
	case auth.ModeProxy:
		s.sign = func(r *http.Request) {
			r.RemoteAddr = "127.0.0.1:40000" // the proxy beside the console
			r.Header.Set(auth.DefaultProxySecretHeader, itProxySecret)
			r.Header.Set("X-Forwarded-User", p.user)
			r.Header.Set("X-Forwarded-Groups", strings.Join(p.groups, ","))
		}
	}
	return s
}

func (s *signedInServer) do(r *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	s.e.ServeHTTP(rec, r)
	return rec
}

func (s *signedInServer) get(t *testing.T, path string) (int, *goquery.Document) {
	t.Helper()
	r := httptest.NewRequest(http.MethodGet, path, nil)
	s.sign(r)
	rec := s.do(r)
	doc, err := goquery.NewDocumentFromReader(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	return rec.Code, doc
}

// post sends a same-origin form with the page's CSRF token (the check passes
// as for a browser).
func (s *signedInServer) post(t *testing.T, path string, form url.Values) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, path, strings.NewReader(form.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.Header.Set("Sec-Fetch-Site", "same-origin")
	r.Header.Set("X-CSRF-Token", pageCSRFToken(t, s.e, s.sign))
	s.sign(r)
	return s.do(r)
}

// writerRules: CSIDrivers and CSRs, nothing else (no FlowSchemas, no CRDs).
var writerRules = []rbacv1.PolicyRule{
	{APIGroups: []string{"storage.k8s.io"}, Resources: []string{"csidrivers"}, Verbs: []string{"get", "list", "watch", "create", "delete"}},
	{APIGroups: []string{"certificates.k8s.io"}, Resources: []string{"certificatesigningrequests"}, Verbs: []string{"get", "list", "watch"}},
	{APIGroups: []string{"certificates.k8s.io"}, Resources: []string{"certificatesigningrequests/approval"}, Verbs: []string{"update"}},
	{APIGroups: []string{"certificates.k8s.io"}, Resources: []string{"signers"}, ResourceNames: []string{certificatesv1.KubeAPIServerClientSignerName}, Verbs: []string{"approve"}},
}

// In every mode the person reads and writes as themself — a service account
// (whose token a person would paste) in local and token mode, a user bound to
// the same rules in proxy mode (a proxy may not name a system: user): kinds
// they may not list are forbidden although the console's own identity (admin
// in token and proxy mode) may list them; their CSIDriver and CSR approval
// reach the API server as them — with their own token, or admin
// impersonating them — and managedFields name clusterdesk as the manager.
func TestEachSignInModeReadsAndWritesAsTheUser(t *testing.T) {
	sa := testcluster.NewServiceAccount(t, "clusterdesk-it-writer", writerRules)
	writer := person{user: sa.User, groups: sa.Groups, token: sa.Token}
	adminCfg := testcluster.RestConfig(t, testcluster.Admin)
	admin := kubernetes.NewForConfigOrDie(adminCfg)
	// A proxy names people, never a service account: system: names from it
	// are refused (auth/proxy_names.go). Proxy mode's writer is a user bound
	// to the same rules.
	proxyWriter := person{user: "clusterdesk-it-proxy-writer", groups: []string{"clusterdesk-it-team"}}
	bindUser(t, admin, sa, proxyWriter.user)
	for _, tc := range []struct {
		mode          auth.Mode
		console       *rest.Config
		who           person
		wantUser      string // user.username in the audit events
		wantImpersons string // impersonatedUser.username, "" for none
	}{
		{auth.ModeLocal, sa.RestConfig(t), writer, sa.User, ""},
		{auth.ModeToken, adminCfg, writer, sa.User, ""},
		{auth.ModeProxy, adminCfg, proxyWriter, testcluster.Admin, proxyWriter.user},
	} {
		t.Run(string(tc.mode), func(t *testing.T) {
			s := newSignedInServer(t, tc.mode, tc.console, tc.who)
			signedIn := tc.who.user // who the pages and the API server see
			checkAudit := func(verb, resource, sub, name string, code int) {
				t.Helper()
				ev := testcluster.WaitAuditEvent(t, 15*time.Second, func(ev testcluster.AuditEvent) bool {
					return ev.Stage == "ResponseComplete" && ev.Verb == verb && ev.ObjectRef != nil &&
						ev.ObjectRef.Resource == resource && ev.ObjectRef.Name == name && ev.ObjectRef.Subresource == sub &&
						ev.ResponseStatus != nil && ev.ResponseStatus.Code == code
				})
				gotImp := ""
				if ev.ImpersonatedUser != nil {
					gotImp = ev.ImpersonatedUser.Username
				}
				if ev.User.Username != tc.wantUser || gotImp != tc.wantImpersons || !strings.HasPrefix(ev.UserAgent, kube.UserAgent) {
					t.Errorf("audit log, %s %s/%s %s: user %q impersonating %q (agent %q), want %q impersonating %q",
						verb, resource, sub, name, ev.User.Username, gotImp, ev.UserAgent, tc.wantUser, tc.wantImpersons)
				}
			}

			code, home := s.get(t, "/")
			if code != http.StatusOK || strings.TrimSpace(home.Find(`[data-testid="user"]`).Text()) != signedIn {
				t.Fatalf("home: status %d, acting as %q", code, home.Find(`[data-testid="user"]`).Text())
			}
			// Counts too: the home page tells a kind the user may not list as
			// forbidden, without its count.
			card := home.Find(`[data-testid="home-kind-flowschemas"]`)
			if count := strings.TrimSpace(card.Find(`[data-testid="kind-count"]`).Text()); count != "—" || !strings.Contains(card.Text(), "Forbidden") {
				t.Errorf("home: the FlowSchemas card shows count %q (%q), want — and Forbidden", count, strings.Join(strings.Fields(card.Text()), " "))
			}
			// Reads: CSIDrivers and CSRs only.
			for _, path := range []string{"/csidrivers", "/csrs"} {
				if code, doc := s.get(t, path); code != http.StatusOK || doc.Find(`[data-testid="banner-forbidden"]`).Length() != 0 {
					t.Fatalf("%s: status %d", path, code)
				}
			}
			for _, path := range []string{"/flowschemas", "/crds", "/validatingwebhooks"} {
				code, doc := s.get(t, path)
				if code != http.StatusForbidden || doc.Find(`[data-testid="banner-forbidden"]`).Length() != 1 || doc.Find(`[data-testid="list-row"]`).Length() != 0 {
					t.Errorf("%s: status %d, %d rows: want 403, the forbidden banner and no data", path, code, doc.Find(`[data-testid="list-row"]`).Length())
				}
			}

			// A write through the editor: create a CSIDriver.
			driver := uniq("ident-"+string(tc.mode)) + ".clusterdesk.test"
			t.Cleanup(func() {
				_ = admin.StorageV1().CSIDrivers().Delete(context.Background(), driver, metav1.DeleteOptions{})
			})
			if rec := s.post(t, "/csidrivers/create", url.Values{"yaml": {csiDriverYAML(driver)}}); rec.Code != http.StatusSeeOther {
				t.Fatalf("create: status %d: %s", rec.Code, rec.Body.String()[:min(400, rec.Body.Len())])
			}
			got, err := admin.StorageV1().CSIDrivers().Get(context.Background(), driver, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(got.ManagedFields, func(m metav1.ManagedFieldsEntry) bool { return m.Manager == kube.FieldManager }) {
				t.Errorf("managedFields do not name %s: %+v", kube.FieldManager, got.ManagedFields)
			}
			checkAudit("create", "csidrivers", "", driver, http.StatusCreated)

			// A write through the CSR writer: approve a pending CSR.
			name := testcluster.CreateCSR(t, testcluster.CSR{Suffix: string(tc.mode)})
			var uid string // as the page shows it
			waitFor(t, "the approve button", 15*time.Second, func() bool {
				code, doc := s.get(t, "/csrs/"+name)
				uid = doc.Find(`[data-testid="action-approve-form"] input[name="uid"]`).AttrOr("value", "")
				return code == http.StatusOK && doc.Find(`[data-testid="action-approve"]`).Length() > 0
			})
			if rec := s.post(t, "/csrs/"+name+"/approve", url.Values{"uid": {uid}, "message": {"identity test"}}); rec.Code != http.StatusSeeOther {
				t.Fatalf("approve: status %d: %s", rec.Code, rec.Body.String()[:min(400, rec.Body.Len())])
			}
			csr, err := admin.CertificatesV1().CertificateSigningRequests().Get(context.Background(), name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(csr.Status.Conditions, func(c certificatesv1.CertificateSigningRequestCondition) bool {
				return c.Type == certificatesv1.CertificateApproved && strings.Contains(c.Message, "by "+signedIn+" via clusterdesk")
			}) {
				t.Errorf("the CSR's Approved condition does not name %s: %+v", signedIn, csr.Status.Conditions)
			}
			checkAudit("update", "certificatesigningrequests", "approval", name, http.StatusOK)
		})
	}
}

// bindUser binds user to the service account's ClusterRole (same name), as
// an administrator binds a person the proxy names.
func bindUser(t *testing.T, admin kubernetes.Interface, sa testcluster.ServiceAccount, user string) {
	t.Helper()
	role := sa.User[strings.LastIndex(sa.User, ":")+1:]
	b := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role + "-user"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	}
	if _, err := admin.RbacV1().ClusterRoleBindings().Create(context.Background(), b, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("binding %s: %v", user, err)
	}
}

// A token-mode auditor sees every kind but no edit or delete links, and the
// API server refuses its write; an admin token on the same console gets the links.
func TestTokenModeControlsFollowTheUsersRights(t *testing.T) {
	adminCfg := testcluster.RestConfig(t, testcluster.Admin)
	auditor := newSignedInServer(t, auth.ModeToken, adminCfg, staticUser(t, testcluster.Auditor))
	code, doc := auditor.get(t, "/flowschemas/exempt")
	if code != http.StatusOK || doc.Find(`[data-testid="detail-name"]`).Length() != 1 {
		t.Fatalf("auditor detail: status %d", code)
	}
	if n := doc.Find(`[data-testid="edit-link"], [data-testid="delete-link"]`).Length(); n != 0 {
		t.Errorf("the auditor is offered %d edit/delete links", n)
	}
	name := testcluster.CreateCSR(t, testcluster.CSR{Suffix: "auditor"})
	waitFor(t, "the cache to see the CSR", 15*time.Second, func() bool {
		code, _ := auditor.get(t, "/csrs/"+name)
		return code == http.StatusOK
	})
	if _, doc := auditor.get(t, "/csrs/"+name); doc.Find(`[data-testid="action-approve"]`).Length() != 0 {
		t.Error("the auditor is offered Approve")
	}
	if rec := auditor.post(t, "/csrs/"+name+"/approve", url.Values{"uid": {liveUID(t, name)}}); rec.Code != http.StatusForbidden {
		t.Fatalf("auditor approve: status %d, want the API server's 403", rec.Code)
	}

	admin := newSignedInServer(t, auth.ModeToken, adminCfg, staticUser(t, testcluster.Admin))
	_, doc = admin.get(t, "/flowschemas/exempt")
	if doc.Find(`[data-testid="edit-link"]`).Length() != 1 || doc.Find(`[data-testid="delete-link"]`).Length() != 1 {
		t.Error("an admin token is not offered the edit and delete links")
	}
}
