//go:build integration

package charttest

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	restclient "k8s.io/client-go/rest"

	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// TestChartTokenValuesRun proves that what the chart renders for
// examples/token.yaml starts a console people sign in to, without a kubelet
// (pod_integration_test.go: how a rendered pod runs here): the rendered
// ServiceAccount and RBAC are applied for real and answer as they should, the
// console's token comes from a TokenRequest for that ServiceAccount, and
// bin/clusterdesk starts with the rendered container's args and env, its
// volumes as directories, its :8080 and :9090 on loopback port 0. A person
// then signs in with a bearer token through the sign-in form, and the ledger
// is the SQLite file on the claim's mount.
func TestChartTokenValuesRun(t *testing.T) {
	state := testcluster.Require(t)
	admin := testcluster.RestConfig(t, testcluster.Admin)
	cs := kubernetes.NewForConfigOrDie(admin)
	ctx := context.Background()
	const release = "clusterdesk-chart" // its cluster-scoped names stay apart from deploy/'s tests
	restrictedNamespace(t, cs, chartNamespace)
	objs := render(t, release, chartNamespace, []string{filepath.Join(chartDir, "examples", "token.yaml")})
	applyRendered(t, cs, objs)
	pod := preparePod(t, cs, objs, chartNamespace, release)
	if len(pod.Spec.Containers) != 1 || pod.Spec.Containers[0].Name != "clusterdesk" {
		t.Fatalf("token.yaml's pod runs %d containers, first %s; want clusterdesk alone", len(pod.Spec.Containers), pod.Spec.Containers[0].Name)
	}
	for _, v := range pod.Spec.Volumes {
		if v.Secret != nil || v.ConfigMap != nil {
			t.Errorf("volume %s from a Secret or ConfigMap: token.yaml should need none", v.Name)
		}
	}
	for _, e := range pod.Spec.Containers[0].Env {
		if e.ValueFrom != nil {
			t.Errorf("env %s from a reference: token.yaml should need no Secret", e.Name)
		}
	}

	// The rendered RBAC, as the API server answers the service account: the
	// reads the shared cache needs, and nothing it shows may it change.
	ca, err := os.ReadFile(filepath.Join(pod.SADir, "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	saCS := kubernetes.NewForConfigOrDie(&restclient.Config{Host: state.Server, BearerToken: pod.Token, TLSClientConfig: restclient.TLSClientConfig{CAData: ca}})
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

	console := pod.startConsole(t, nil)
	origin := console.Origin
	fail := func(format string, a ...any) {
		t.Helper()
		t.Fatalf(format+"\n%s", append(a, console.Logs())...)
	}

	// A person signs in through the form with their own bearer token.
	client, who := signInWithToken(t, console, testcluster.Auditor)
	if who == "" || strings.Contains(who, "serviceaccount") {
		fail("signed in with the auditor's token, the page names %q", who)
	}
	// A page from the shared cache, filled with the service account's reads.
	resp, err := client.Get(origin + "/crds")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || strings.Contains(strings.ToLower(string(body)), "forbidden") {
		fail("GET /crds signed in: %d (forbidden in the page: %v)", resp.StatusCode, strings.Contains(strings.ToLower(string(body)), "forbidden"))
	}
	// The ledger is the SQLite file on the claim's directory.
	data := pod.mounts(t, pod.container(t, "clusterdesk"))["/var/lib/clusterdesk"]
	if _, err := os.Stat(filepath.Join(data, "ledger.db")); err != nil || pod.volumeOf(t, "clusterdesk", "/var/lib/clusterdesk").PersistentVolumeClaim == nil {
		fail("the ledger is not on the PersistentVolumeClaim's mount: %v", err)
	}
}
