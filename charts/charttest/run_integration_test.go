//go:build integration

package charttest

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
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	restclient "k8s.io/client-go/rest"

	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// TestChartTokenValuesRun proves that what the chart renders for
// examples/token.yaml starts a console people sign in to, without a kubelet:
// the rendered ServiceAccount and RBAC are applied for real, the console's
// token comes from a TokenRequest for that ServiceAccount, and bin/clusterdesk
// starts with the rendered container's args and env, its volumes as
// directories at the paths its flags name (mountPath rewritten to a temporary
// directory), the kubelet's KUBERNETES_SERVICE_HOST/PORT, and the only other
// change a pod does not need: its :8080 and :9090 bound on loopback port 0.
// A person then signs in with a bearer token through the sign-in form.
func TestChartTokenValuesRun(t *testing.T) {
	state := testcluster.Require(t)
	admin := testcluster.RestConfig(t, testcluster.Admin)
	cs := kubernetes.NewForConfigOrDie(admin)
	ap := testcluster.NewApplier(t, admin)
	ctx := context.Background()
	const release = "clusterdesk-chart" // its cluster-scoped names stay apart from deploy/'s tests
	restrictedNamespace(t, cs, chartNamespace)
	objs := render(t, release, chartNamespace, []string{filepath.Join(chartDir, "examples", "token.yaml")})

	for _, kind := range []string{"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"} {
		for _, o := range byKind(objs, kind) {
			createForReal(t, cs, ap, o)
		}
	}
	depU := find(t, objs, "Deployment", release)
	dep := &appsv1.Deployment{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(depU.Object, dep); err != nil {
		t.Fatal(err)
	}
	pod := dep.Spec.Template.Spec
	sa := pod.ServiceAccountName
	tok, err := cs.CoreV1().ServiceAccounts(chartNamespace).CreateToken(ctx, sa, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr(int64(600))},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("TokenRequest for the rendered ServiceAccount %s: %v", sa, err)
	}
	ca := admin.CAData
	if len(ca) == 0 {
		if ca, err = os.ReadFile(admin.CAFile); err != nil {
			t.Fatal(err)
		}
	}
	// The kubelet's projected service-account volume.
	saDir := t.TempDir()
	for name, data := range map[string][]byte{"token": []byte(tok.Status.Token), "ca.crt": ca, "namespace": []byte(chartNamespace)} {
		if err := os.WriteFile(filepath.Join(saDir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// The rendered RBAC, as the API server answers the service account: the
	// reads the shared cache needs, and nothing it shows may it change.
	saCS := kubernetes.NewForConfigOrDie(&restclient.Config{Host: state.Server, BearerToken: tok.Status.Token, TLSClientConfig: restclient.TLSClientConfig{CAData: ca}})
	for _, r := range []struct {
		attrs authorizationv1.ResourceAttributes
		want  bool
	}{
		{authorizationv1.ResourceAttributes{Verb: "watch", Group: "certificates.k8s.io", Resource: "certificatesigningrequests"}, true},
		{authorizationv1.ResourceAttributes{Verb: "create", Group: "authentication.k8s.io", Resource: "tokenreviews"}, true},
		{authorizationv1.ResourceAttributes{Verb: "update", Group: "certificates.k8s.io", Resource: "certificatesigningrequests", Subresource: "approval"}, false},
		{authorizationv1.ResourceAttributes{Verb: "list", Resource: "secrets"}, false},
	} {
		deadline := time.Now().Add(30 * time.Second)
		for {
			rev, err := saCS.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
				Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &r.attrs}}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if rev.Status.Allowed == r.want {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the rendered service account may %s %s/%s: %v, want %v", r.attrs.Verb, r.attrs.Group, r.attrs.Resource, rev.Status.Allowed, r.want)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}

	// The pod's volumes as directories (no Secret or ConfigMap in this example:
	// a volume of a kind this test cannot write out fails it).
	c := pod.Containers[0]
	if c.Name != "clusterdesk" || len(pod.Containers) != 1 {
		t.Fatalf("token.yaml's pod runs %d containers, first %s; want clusterdesk alone", len(pod.Containers), c.Name)
	}
	volumeDir := map[string]string{}
	for _, v := range pod.Volumes {
		switch {
		case v.EmptyDir != nil, v.PersistentVolumeClaim != nil:
			volumeDir[v.Name] = t.TempDir()
		default:
			t.Fatalf("volume %s: this test writes out emptyDir and PVC volumes only", v.Name)
		}
	}
	mountDir := map[string]string{} // mountPath -> directory
	for _, m := range c.VolumeMounts {
		d, ok := volumeDir[m.Name]
		if !ok {
			t.Fatalf("mount %s names no volume", m.Name)
		}
		mountDir[m.MountPath] = d
	}
	args := make([]string, 0, len(c.Args))
	for _, a := range c.Args {
		switch a {
		case "--listen=:8080":
			a = "--listen=127.0.0.1:0"
		case "--metrics-listen=:9090":
			a = "--metrics-listen=127.0.0.1:0"
		}
		// The longest mount path holding the flag's path, rewritten once.
		if k, v, ok := strings.Cut(a, "="); ok {
			best := ""
			for mp := range mountDir {
				if (v == mp || strings.HasPrefix(v, mp+"/")) && len(mp) > len(best) {
					best = mp
				}
			}
			if best != "" {
				a = k + "=" + mountDir[best] + strings.TrimPrefix(v, best)
			}
		}
		args = append(args, a)
	}
	if strings.Join(args, " ") == strings.Join(c.Args, " ") {
		t.Fatal("no argument was rewritten: the listen addresses should have been")
	}
	args = append(args, "--in-cluster-dir", saDir)
	u, _ := url.Parse(state.Server)
	host, port, err := net.SplitHostPort(u.Host)
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH"), "KUBERNETES_SERVICE_HOST=" + host, "KUBERNETES_SERVICE_PORT=" + port}
	for _, e := range c.Env {
		if e.ValueFrom != nil {
			t.Fatalf("env %s from a reference: token.yaml should need no Secret", e.Name)
		}
		env = append(env, e.Name+"="+e.Value)
	}

	bin := filepath.Join(t.TempDir(), "clusterdesk")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/clusterdesk").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	stdout, _ := cmd.StdoutPipe()
	stderr, _ := cmd.StderrPipe()
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
	listening := make(chan string, 1)
	go func() {
		// stdout says little (the address again); drained so it never blocks.
		go func() { _, _ = io.Copy(io.Discard, stdout) }()
		s := bufio.NewScanner(stderr)
		re := regexp.MustCompile(`msg=serving url=(http://\S+)`)
		for s.Scan() {
			logMu.Lock()
			logs.WriteString(s.Text() + "\n")
			logMu.Unlock()
			if m := re.FindStringSubmatch(s.Text()); m != nil {
				select {
				case listening <- strings.TrimSuffix(m[1], "/"):
				default:
				}
			}
		}
	}()
	fail := func(format string, a ...any) {
		t.Helper()
		logMu.Lock()
		defer logMu.Unlock()
		t.Fatalf(format+"\nconsole log:\n%s", append(a, logs.String())...)
	}
	var origin string
	select {
	case origin = <-listening:
	case <-time.After(60 * time.Second):
		fail("the console started with the rendered args %q printed no address", args)
	}
	deadline := time.Now().Add(90 * time.Second)
	for {
		resp, err := http.Get(origin + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			fail("/readyz not 200 within 90 s (last: %v)", err)
		}
		time.Sleep(250 * time.Millisecond)
	}

	// A person signs in through the form with their own bearer token.
	person := testcluster.RestConfig(t, testcluster.Auditor)
	if person.BearerToken == "" {
		t.Fatal("the devcluster's auditor has no bearer token")
	}
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	resp, err := client.Get(origin + "/login")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := goquery.NewDocumentFromReader(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	csrf, _ := doc.Find(`[data-testid="token-form"] input[name="_csrf"]`).Attr("value")
	if csrf == "" {
		fail("GET /login (%d): no token sign-in form", resp.StatusCode)
	}
	req, _ := http.NewRequest(http.MethodPost, origin+"/login", strings.NewReader(url.Values{"token": {person.BearerToken}, "_csrf": {csrf}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	req.Header.Set("Origin", origin)
	if resp, err = client.Do(req); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp, err = client.Get(origin + "/"); err != nil {
		t.Fatal(err)
	}
	doc, err = goquery.NewDocumentFromReader(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		fail("GET / after signing in: %d", resp.StatusCode)
	}
	who := strings.TrimSpace(doc.Find(`[data-testid="user"]`).First().Text())
	if who == "" || strings.Contains(who, "serviceaccount") {
		fail("signed in with the auditor's token, the page names %q", who)
	}
	// A page from the shared cache, filled with the service account's reads.
	if resp, err = client.Get(origin + "/crds"); err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || strings.Contains(strings.ToLower(string(body)), "forbidden") {
		fail("GET /crds signed in: %d (forbidden in the page: %v)", resp.StatusCode, strings.Contains(strings.ToLower(string(body)), "forbidden"))
	}
	// The ledger is the SQLite file on the claim's directory.
	if _, err := os.Stat(filepath.Join(mountDir["/var/lib/clusterdesk"], "ledger.db")); err != nil {
		fail("the ledger is not on the PersistentVolumeClaim's mount: %v", err)
	}
}

func ptr[T any](v T) *T { return &v }
