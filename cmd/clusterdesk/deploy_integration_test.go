//go:build integration

package main

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// TestDeployManifestsServerDryRun sends every overlay in deploy/ (base and each
// variant, as `kubectl apply -k` renders it) to the API server as a dry run
// with strict field validation, and each Deployment's pod template as a Pod to
// a namespace enforcing the "restricted" Pod Security Standard.
func TestDeployManifestsServerDryRun(t *testing.T) {
	admin := testcluster.RestConfig(t, testcluster.Admin)
	cs := kubernetes.NewForConfigOrDie(admin)
	ap := testcluster.NewApplier(t, admin)
	ctx := context.Background()
	base := renderOverlay(t, "base")

	// Namespaced objects can be dry-run only in a namespace that exists.
	ns := find(t, base, "Namespace", "clusterdesk")
	if _, err := ap.Create(ctx, ns, false); err != nil {
		t.Fatalf("namespace: %v", err)
	}
	// The pod below needs its ServiceAccount to exist (no controller makes "default" here).
	sa := find(t, base, "ServiceAccount", "clusterdesk")
	if _, err := ap.Create(ctx, sa, false); err != nil {
		t.Fatalf("service account: %v", err)
	}
	t.Cleanup(func() {
		if err := cs.CoreV1().ServiceAccounts(sa.GetNamespace()).Delete(ctx, sa.GetName(), metav1.DeleteOptions{}); err != nil {
			t.Error(err)
		}
		testcluster.DeleteNamespace(t, cs, ns.GetName())
	})

	// The sign-in mode each known variant runs; a new overlay must name one.
	modes := map[string]string{"base": "--auth=token", "proxy": "--auth=proxy", "oidc": "--auth=oidc", "oauth2-proxy": "--auth=proxy", "approver": "--auth=token", "roles": "--auth=token"}
	dirs := overlayDirs(t)
	for _, want := range []string{"base", "proxy", "oidc"} {
		if !slices.Contains(dirs, want) {
			t.Errorf("deploy/ has no %s overlay (found %v)", want, dirs)
		}
	}
	dry := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	for _, dir := range dirs {
		t.Run(dir, func(t *testing.T) {
			objs := renderOverlay(t, dir)
			kinds := map[string]bool{}
			for _, o := range objs {
				kinds[o.GetKind()] = true
				if o.GetKind() == "ServiceAccount" && o.GetName() != sa.GetName() {
					// Another process's identity (the approver's): created for
					// real too, since a pod naming a missing one is refused.
					if _, err := ap.Create(ctx, o, false); err != nil {
						t.Fatalf("service account %s: %v", o.GetName(), err)
					}
					t.Cleanup(func() {
						_ = cs.CoreV1().ServiceAccounts(o.GetNamespace()).Delete(ctx, o.GetName(), metav1.DeleteOptions{})
					})
				}
				if o.GetKind() == "Namespace" || o.GetKind() == "ServiceAccount" {
					continue // created for real above
				}
				t.Run(o.GetKind()+"/"+o.GetName(), func(t *testing.T) {
					if err := ap.DryRun(ctx, o); err != nil {
						t.Errorf("server-side dry run: %v", err)
					}
				})
			}
			for _, k := range []string{"Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding", "Deployment", "PodDisruptionBudget", "Service", "NetworkPolicy"} {
				if !kinds[k] {
					t.Errorf("deploy/%s has no %s", dir, k)
				}
			}

			// The pod template against Pod Security "restricted" (enforced by the
			// Namespace's label); the same pod without its security settings is the
			// control that shows the check bites.
			dep := &appsv1.Deployment{}
			u := find(t, objs, "Deployment", "clusterdesk")
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, dep); err != nil {
				t.Fatal(err)
			}
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "clusterdesk-template", Namespace: ns.GetName()}, Spec: dep.Spec.Template.Spec}
			if _, err := cs.CoreV1().Pods(ns.GetName()).Create(ctx, pod, dry); err != nil {
				t.Errorf("the Deployment's pod is refused in a restricted namespace: %v", err)
			}
			loose := pod.DeepCopy()
			loose.Spec.SecurityContext = nil
			for i := range loose.Spec.Containers {
				loose.Spec.Containers[i].SecurityContext = nil
			}
			if _, err := cs.CoreV1().Pods(ns.GetName()).Create(ctx, loose, dry); !apierrors.IsForbidden(err) {
				t.Errorf("a pod without security settings: err = %v, want Forbidden by Pod Security", err)
			}

			// What the console runs: the variant's sign-in, listening beyond
			// loopback with /metrics on its own port.
			mode, ok := modes[dir]
			if !ok {
				t.Fatalf("deploy/%s: name its sign-in mode in this test", dir)
			}
			c, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
			args, _, _ := unstructured.NestedStringSlice(c[0].(map[string]any), "args")
			got := strings.Join(args, " ")
			for _, want := range []string{mode, "--listen=:8080", "--metrics-listen=:9090"} {
				if !strings.Contains(got, want) {
					t.Errorf("%s Deployment args %q lack %s", dir, got, want)
				}
			}
			checkMemLimit(t, dir, c[0].(map[string]any))

			// Every other Deployment (the approver's) under the same rules.
			for _, o := range objs {
				if o.GetKind() != "Deployment" || o.GetName() == "clusterdesk" {
					continue
				}
				other := &appsv1.Deployment{}
				if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, other); err != nil {
					t.Fatal(err)
				}
				pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: o.GetName() + "-template", Namespace: ns.GetName()}, Spec: other.Spec.Template.Spec}
				if _, err := cs.CoreV1().Pods(ns.GetName()).Create(ctx, pod, dry); err != nil {
					t.Errorf("Deployment %s's pod is refused in a restricted namespace: %v", o.GetName(), err)
				}
				oc, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
				checkMemLimit(t, dir+"/"+o.GetName(), oc[0].(map[string]any))
			}
		})
	}
}

// checkMemLimit checks that a container sets GOMEMLIMIT between half and 90%
// of its memory limit: under it, so that the collector, not the kernel, acts
// first, with room for what is not heap.
func checkMemLimit(t *testing.T, name string, container map[string]any) {
	t.Helper()
	limitText, _, _ := unstructured.NestedString(container, "resources", "limits", "memory")
	limit, err := resource.ParseQuantity(limitText)
	if err != nil {
		t.Errorf("%s: memory limit %q: %v", name, limitText, err)
		return
	}
	env, _, _ := unstructured.NestedSlice(container, "env")
	var soft int64
	for _, e := range env {
		if m := e.(map[string]any); m["name"] == "GOMEMLIMIT" {
			v, _ := m["value"].(string)
			// GOMEMLIMIT's suffixes are the binary units of resource quantities, plus B.
			q, err := resource.ParseQuantity(strings.TrimSuffix(v, "B"))
			if err != nil {
				t.Errorf("%s: GOMEMLIMIT %q: %v", name, v, err)
				return
			}
			soft = q.Value()
		}
	}
	if soft < limit.Value()/2 || soft > limit.Value()*9/10 {
		t.Errorf("%s: GOMEMLIMIT is %d bytes, want between 50%% and 90%% of the %s memory limit", name, soft, limitText)
	}
}

// TestInClusterServesAsServiceAccount runs the real binary as a pod would: no
// kubeconfig, KUBERNETES_SERVICE_HOST/PORT pointing at the devcluster, and a
// service-account token (TokenRequest) and the CA bundle in a directory, with
// deploy/'s ClusterRole bound to the ServiceAccount. The console must become
// ready, show the service account as its identity, and expose /metrics.
func TestInClusterServesAsServiceAccount(t *testing.T) {
	state := testcluster.Require(t)
	admin := testcluster.RestConfig(t, testcluster.Admin)
	cs := kubernetes.NewForConfigOrDie(admin)
	ap := testcluster.NewApplier(t, admin)
	ctx := context.Background()
	base, proxy := deployObjects(t)

	ns := find(t, base, "Namespace", "clusterdesk")
	if _, err := ap.Create(ctx, ns, false); err != nil {
		t.Fatalf("namespace: %v", err)
	}
	var created []*unstructured.Unstructured
	t.Cleanup(func() {
		for i := len(created) - 1; i >= 0; i-- {
			o := created[i]
			var err error
			switch o.GetKind() {
			case "ServiceAccount":
				err = cs.CoreV1().ServiceAccounts(o.GetNamespace()).Delete(ctx, o.GetName(), metav1.DeleteOptions{})
			case "ClusterRole":
				err = cs.RbacV1().ClusterRoles().Delete(ctx, o.GetName(), metav1.DeleteOptions{})
			case "ClusterRoleBinding":
				err = cs.RbacV1().ClusterRoleBindings().Delete(ctx, o.GetName(), metav1.DeleteOptions{})
			}
			if err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("cleanup %s %s: %v", o.GetKind(), o.GetName(), err)
			}
		}
		testcluster.DeleteNamespace(t, cs, ns.GetName())
	})
	for _, kind := range []string{"ServiceAccount", "ClusterRole", "ClusterRoleBinding"} {
		o := find(t, base, kind, "clusterdesk")
		if _, err := ap.Create(ctx, o, false); err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		created = append(created, o)
	}

	tok, err := cs.CoreV1().ServiceAccounts(ns.GetName()).CreateToken(ctx, "clusterdesk", &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr(int64(600))},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("TokenRequest: %v", err)
	}
	saDir := t.TempDir()
	ca := admin.CAData
	if len(ca) == 0 {
		if ca, err = os.ReadFile(admin.CAFile); err != nil {
			t.Fatal(err)
		}
	}
	for name, data := range map[string][]byte{"token": []byte(tok.Status.Token), "ca.crt": ca, "namespace": []byte(ns.GetName())} {
		if err := os.WriteFile(filepath.Join(saDir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	sa := "system:serviceaccount:clusterdesk:clusterdesk"

	// Least privilege, asked of the API server as the service account.
	saCfg := &rest.Config{Host: state.Server, BearerToken: tok.Status.Token, TLSClientConfig: rest.TLSClientConfig{CAData: ca}}
	saCS := kubernetes.NewForConfigOrDie(saCfg)
	can := func(a authorizationv1.ResourceAttributes) bool {
		t.Helper()
		r, err := saCS.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
			Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &a},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return r.Status.Allowed
	}
	rights := []struct {
		attrs authorizationv1.ResourceAttributes
		want  bool
	}{
		{authorizationv1.ResourceAttributes{Verb: "watch", Group: "certificates.k8s.io", Resource: "certificatesigningrequests"}, true},
		{authorizationv1.ResourceAttributes{Verb: "list", Group: "admissionregistration.k8s.io", Resource: "mutatingwebhookconfigurations"}, true},
		{authorizationv1.ResourceAttributes{Verb: "create", Group: "authorization.k8s.io", Resource: "subjectaccessreviews"}, true},
		{authorizationv1.ResourceAttributes{Verb: "create", Group: "authentication.k8s.io", Resource: "tokenreviews"}, true},
		{authorizationv1.ResourceAttributes{Verb: "create", Group: "events.k8s.io", Resource: "events", Namespace: "default"}, true},
		{authorizationv1.ResourceAttributes{Verb: "get", Resource: "services", Namespace: "kube-system"}, true},
		// Nothing it shows may it change, and nothing else may it read.
		{authorizationv1.ResourceAttributes{Verb: "update", Group: "certificates.k8s.io", Resource: "certificatesigningrequests", Subresource: "approval"}, false},
		{authorizationv1.ResourceAttributes{Verb: "delete", Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions"}, false},
		{authorizationv1.ResourceAttributes{Verb: "list", Resource: "secrets"}, false},
		{authorizationv1.ResourceAttributes{Verb: "list", Resource: "services"}, false},
		{authorizationv1.ResourceAttributes{Verb: "impersonate", Resource: "users"}, false},
	}
	for _, r := range rights {
		if got := can(r.attrs); got != r.want {
			t.Errorf("service account may %s %s/%s %s: %v, want %v", r.attrs.Verb, r.attrs.Group, r.attrs.Resource, r.attrs.Subresource, got, r.want)
		}
	}
	// The proxy variant adds impersonation, and only that.
	for _, kind := range []string{"ClusterRole", "ClusterRoleBinding"} {
		o := find(t, proxy, kind, "clusterdesk-impersonate")
		if _, err := ap.Create(ctx, o, false); err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		created = append(created, o)
	}
	deadline := time.Now().Add(30 * time.Second)
	for !can(authorizationv1.ResourceAttributes{Verb: "impersonate", Resource: "groups"}) {
		if time.Now().After(deadline) {
			t.Fatal("the proxy variant's binding does not let the service account impersonate groups")
		}
		time.Sleep(200 * time.Millisecond)
	}
	if can(authorizationv1.ResourceAttributes{Verb: "impersonate", Resource: "serviceaccounts", Namespace: "kube-system"}) {
		t.Error("the proxy variant lets the service account impersonate service accounts")
	}

	// The real binary, configured as in a pod.
	u, err := url.Parse(state.Server)
	if err != nil {
		t.Fatal(err)
	}
	host, port, err := net.SplitHostPort(u.Host)
	if err != nil {
		t.Fatal(err)
	}
	bin := testcluster.ConsoleBin(t)
	// Every flag the Deployments pass is one the binary knows.
	help, _ := exec.Command(bin, "--help").CombinedOutput()
	deployments := []*unstructured.Unstructured{find(t, base, "Deployment", "clusterdesk"), find(t, proxy, "Deployment", "clusterdesk")}
	for _, overlay := range []string{"oidc", "oauth2-proxy"} {
		deployments = append(deployments, find(t, renderOverlay(t, overlay), "Deployment", "clusterdesk"))
	}
	for _, d := range deployments {
		c, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
		args, _, _ := unstructured.NestedStringSlice(c[0].(map[string]any), "args")
		for _, a := range args {
			name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
			if !strings.Contains(string(help), "  -"+name+" ") && !strings.Contains(string(help), "  -"+name+"\n") {
				t.Errorf("the Deployment passes %s, which clusterdesk --help does not list:\n%s", a, help)
			}
		}
	}
	home := t.TempDir() // no ~/.kube/config
	cmd := exec.Command(bin, "--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0", "--in-cluster-dir", saDir)
	cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "KUBERNETES_SERVICE_HOST=" + host, "KUBERNETES_SERVICE_PORT=" + port}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	var logMu sync.Mutex
	var logs strings.Builder
	metricsURL := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(stderr)
		re := regexp.MustCompile(`msg="serving metrics" url=(\S+)`)
		for s.Scan() {
			logMu.Lock()
			logs.WriteString(s.Text() + "\n")
			logMu.Unlock()
			if m := re.FindStringSubmatch(s.Text()); m != nil {
				metricsURL <- m[1]
			}
		}
	}()
	loginURL := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(stdout)
		re := regexp.MustCompile(`open (http://\S+/login\?token=\S+)`)
		for s.Scan() {
			if m := re.FindStringSubmatch(s.Text()); m != nil {
				select {
				case loginURL <- m[1]:
				default:
				}
			}
		}
	}()
	fail := func(format string, args ...any) {
		t.Helper()
		logMu.Lock()
		defer logMu.Unlock()
		t.Fatalf(format+"\nconsole log:\n%s", append(args, logs.String())...)
	}
	var login, mURL string
	for login == "" || mURL == "" {
		select {
		case login = <-loginURL:
		case mURL = <-metricsURL:
		case <-time.After(60 * time.Second):
			fail("the console printed no login URL or metrics address")
		}
	}
	logMu.Lock()
	startLog := logs.String()
	logMu.Unlock()
	if !strings.Contains(startLog, "in-cluster service account in namespace clusterdesk") {
		t.Errorf("the start-up log does not say it uses the in-cluster service account:\n%s", startLog)
	}
	lu, _ := url.Parse(login)
	origin := lu.Scheme + "://" + lu.Host

	// Ready once every kind the service account may list is synced.
	deadline = time.Now().Add(90 * time.Second)
	for {
		resp, err := http.Get(origin + "/readyz")
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
			if time.Now().After(deadline) {
				fail("/readyz still %d: %s", resp.StatusCode, body)
			}
		} else if time.Now().After(deadline) {
			fail("/readyz: %v", err)
		}
		time.Sleep(250 * time.Millisecond)
	}

	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	resp, err := client.Get(login)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	resp, err = client.Get(origin + "/")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := goquery.NewDocumentFromReader(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		fail("GET / after login: %d", resp.StatusCode)
	}
	if got := strings.TrimSpace(doc.Find(`[data-testid="user"]`).First().Text()); got != sa {
		fail("the page names %q as the console's identity, want %s", got, sa)
	}
	// A list page from the cache, read with the service account's rights.
	resp, err = client.Get(origin + "/crds")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || strings.Contains(strings.ToLower(string(body)), "forbidden") {
		t.Errorf("GET /crds as the service account: %d, forbidden banner: %v", resp.StatusCode, strings.Contains(strings.ToLower(string(body)), "forbidden"))
	}

	// /metrics on its own address, without a session; the console's port has none.
	resp, err = http.Get(origin + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		t.Error("/metrics answers 200 on the console's port without a session")
	}
	resp, err = http.Get(mURL)
	if err != nil {
		t.Fatal(err)
	}
	mbody, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	scrape := string(mbody)
	for _, re := range []string{
		`(?m)^clusterdesk_cache_ready 1$`,
		`(?m)^clusterdesk_cache_state\{kind="crds",state="synced"\} 1$`,
		`(?m)^clusterdesk_cache_objects\{kind="crds"\} [1-9]`,
		`(?m)^clusterdesk_http_requests_total\{code="200",method="GET",route="/:kind"\} 1$`,
		`(?m)^clusterdesk_http_requests_total\{code="200",method="GET",route="/readyz"\} `,
		`(?m)^clusterdesk_sse_connections 0$`,
		`(?m)^go_goroutines `,
		`(?m)^process_resident_memory_bytes `,
	} {
		if !regexp.MustCompile(re).MatchString(scrape) {
			t.Errorf("/metrics lacks %s", re)
		}
	}
	if strings.Contains(scrape, tok.Status.Token) {
		t.Error("/metrics holds the service-account token")
	}
	if strings.Contains(scrape, `route="/crds"`) {
		t.Error("/metrics labels a request with its raw path instead of the route template")
	}
}

func ptr[T any](v T) *T { return &v }
