//go:build integration

package main

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/clusterdesk/clusterdesk/internal/auth"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// oauth2ProxyObjects returns what `kubectl apply -k deploy/oauth2-proxy` sends:
// deploy/proxy's objects, the alpha-config ConfigMap, and the Deployment,
// Service and NetworkPolicy with the overlay's strategic merge patches.
func oauth2ProxyObjects(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	dir := filepath.Join(deployDir, "oauth2-proxy")
	var kust struct {
		Resources []string `json:"resources"`
		Patches   []struct {
			Path string `json:"path"`
		} `json:"patches"`
	}
	raw, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(raw, &kust); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(kust.Resources, []string{"../proxy", "oauth2-proxy.yaml"}) {
		t.Fatalf("deploy/oauth2-proxy/kustomization.yaml resources %v, want ../proxy and oauth2-proxy.yaml", kust.Resources)
	}
	base, proxy := deployObjects(t)
	objs := append(append([]*unstructured.Unstructured{}, base...), proxy...)
	// The base Deployment is replaced by deploy/proxy's patched one.
	patched := find(t, proxy, "Deployment", "clusterdesk")
	objs = slices.DeleteFunc(objs, func(o *unstructured.Unstructured) bool { return o.GetKind() == "Deployment" && o != patched })
	objs = append(objs, testcluster.ReadManifests(t, filepath.Join(dir, "oauth2-proxy.yaml"))...)

	schemas := map[string]any{"Deployment": appsv1.Deployment{}, "Service": corev1.Service{}, "NetworkPolicy": networkingv1.NetworkPolicy{}}
	for _, p := range kust.Patches {
		patch, err := os.ReadFile(filepath.Join(dir, p.Path))
		if err != nil {
			t.Fatal(err)
		}
		var head struct {
			Kind     string
			Metadata struct{ Name string }
		}
		if err := yaml.Unmarshal(patch, &head); err != nil {
			t.Fatal(err)
		}
		schema, ok := schemas[head.Kind]
		if !ok {
			t.Fatalf("%s patches a %s, which this test does not know", p.Path, head.Kind)
		}
		patchJSON, err := yaml.YAMLToJSON(patch)
		if err != nil {
			t.Fatal(err)
		}
		target := find(t, objs, head.Kind, head.Metadata.Name)
		orig, err := target.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		merged, err := strategicpatch.StrategicMergePatch(orig, patchJSON, schema)
		if err != nil {
			t.Fatalf("%s: %v", p.Path, err)
		}
		if err := target.UnmarshalJSON(merged); err != nil {
			t.Fatal(err)
		}
	}
	return objs
}

// TestOAuth2ProxyOverlay checks deploy/oauth2-proxy: every object passes the
// API server's dry run (the pod under "restricted"), the pieces fit together
// (oauth2-proxy reaches the console on loopback, where the console honours the
// secret over plain HTTP; both read the same secret file; the Service goes to
// oauth2-proxy; the "oidc:" prefixes), and the real oauth2-proxy accepts the
// configuration (--config-test).
func TestOAuth2ProxyOverlay(t *testing.T) {
	admin := testcluster.RestConfig(t, testcluster.Admin)
	cs := kubernetes.NewForConfigOrDie(admin)
	ap := testcluster.NewApplier(t, admin)
	ctx := context.Background()
	objs := oauth2ProxyObjects(t)

	// A namespace of this test's own, with the overlay's Pod Security labels.
	ns := find(t, objs, "Namespace", "clusterdesk").DeepCopy()
	nsName := fmt.Sprintf("clusterdesk-oauth2proxy-%d", time.Now().UnixNano()%1_000_000)
	ns.SetName(nsName)
	if _, err := ap.Create(ctx, ns, false); err != nil {
		t.Fatalf("namespace: %v", err)
	}
	t.Cleanup(func() { testcluster.DeleteNamespace(t, cs, nsName) })
	for _, o := range objs {
		if o.GetKind() == "Namespace" {
			continue
		}
		o = o.DeepCopy()
		if o.GetNamespace() != "" {
			o.SetNamespace(nsName)
		}
		t.Run("dry run "+o.GetKind()+"/"+o.GetName(), func(t *testing.T) {
			if err := ap.DryRun(ctx, o); err != nil {
				t.Errorf("server-side dry run: %v", err)
			}
		})
	}
	dep := &appsv1.Deployment{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(find(t, objs, "Deployment", "clusterdesk").Object, dep); err != nil {
		t.Fatal(err)
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: dep.Spec.Template.Spec.ServiceAccountName, Namespace: nsName}}
	if _, err := cs.CoreV1().ServiceAccounts(nsName).Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.CoreV1().ServiceAccounts(nsName).Delete(ctx, sa.Name, metav1.DeleteOptions{}) })
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "clusterdesk-template", Namespace: nsName}, Spec: dep.Spec.Template.Spec}
	if _, err := cs.CoreV1().Pods(nsName).Create(ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
		t.Errorf("the pod with oauth2-proxy beside the console is refused in a restricted namespace: %v", err)
	}

	// The pieces fit.
	containers := map[string]corev1.Container{}
	for _, c := range dep.Spec.Template.Spec.Containers {
		containers[c.Name] = c
	}
	console, o2p := containers["clusterdesk"], containers["oauth2-proxy"]
	if o2p.Name == "" || dep.Spec.Template.Spec.Containers[0].Name != "clusterdesk" {
		t.Fatalf("want the console first and oauth2-proxy beside it, got %v", containers)
	}
	flag := func(args []string, name string) string {
		for _, a := range args {
			if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
				return v
			}
		}
		t.Errorf("no --%s in %q", name, args)
		return ""
	}
	if flag(console.Args, "auth") != "proxy" || flag(console.Args, "proxy-user-prefix") != "oidc:" || flag(console.Args, "proxy-groups-prefix") != "oidc:" {
		t.Errorf("console args %q: want proxy mode with the oidc: prefixes", console.Args)
	}
	listen, err := net.ResolveTCPAddr("tcp", flag(console.Args, "listen"))
	if err != nil {
		t.Fatal(err)
	}
	if err := (&auth.Proxy{Secret: []byte("x")}).CheckListener(listen, false); err != nil {
		t.Errorf("the console would refuse its --listen: %v", err)
	}

	var alpha struct {
		UpstreamConfig struct{ Upstreams []struct{ URI string } } `json:"upstreamConfig"`
		Providers      []struct {
			ClientSecretFile string `json:"clientSecretFile"`
			OIDCConfig       struct {
				UserIDClaim string `json:"userIDClaim"`
				GroupsClaim string `json:"groupsClaim"`
			} `json:"oidcConfig"`
		} `json:"providers"`
		InjectRequestHeaders []struct {
			Name   string
			Values []struct {
				ClaimSource  *struct{ Claim string } `json:"claimSource"`
				SecretSource *struct {
					FromFile string `json:"fromFile"`
				} `json:"secretSource"`
			}
		} `json:"injectRequestHeaders"`
	}
	cm := find(t, objs, "ConfigMap", "clusterdesk-oauth2-proxy")
	alphaYAML, _, _ := unstructured.NestedString(cm.Object, "data", "alpha.yaml")
	if err := yaml.Unmarshal([]byte(alphaYAML), &alpha); err != nil {
		t.Fatalf("alpha.yaml: %v", err)
	}
	if len(alpha.UpstreamConfig.Upstreams) != 1 {
		t.Fatalf("upstreams %+v: want the console only", alpha.UpstreamConfig.Upstreams)
	}
	up, err := url.Parse(alpha.UpstreamConfig.Upstreams[0].URI)
	if err != nil || up.Scheme != "http" || !net.ParseIP(up.Hostname()).IsLoopback() || up.Port() != fmt.Sprint(listen.Port) {
		t.Errorf("upstream %q: want plain HTTP to the console's port on loopback (%d)", alpha.UpstreamConfig.Upstreams[0].URI, listen.Port)
	}
	headers := map[string]string{}
	for _, h := range alpha.InjectRequestHeaders {
		for _, v := range h.Values {
			switch {
			case v.ClaimSource != nil:
				headers[h.Name] = "claim:" + v.ClaimSource.Claim
			case v.SecretSource != nil:
				headers[h.Name] = "file:" + v.SecretSource.FromFile
			}
		}
	}
	want := map[string]string{
		auth.DefaultProxyUserHeader:   "claim:user",
		auth.DefaultProxyGroupsHeader: "claim:groups",
		auth.DefaultProxySecretHeader: "file:" + flag(console.Args, "proxy-secret-file"),
	}
	for k, v := range want {
		if headers[k] != v {
			t.Errorf("oauth2-proxy sets %s to %q, want %q", k, headers[k], v)
		}
	}
	if p := alpha.Providers; len(p) != 1 || p[0].OIDCConfig.UserIDClaim != "sub" || p[0].OIDCConfig.GroupsClaim != "groups" {
		t.Errorf("providers %+v: want one, user from sub, groups from groups (the API server's claims)", p)
	}
	// Each file oauth2-proxy reads is in a volume of its own container, from the right source.
	mountOf := func(c corev1.Container, file string) string {
		for _, m := range c.VolumeMounts {
			if filepath.Dir(file) == m.MountPath {
				return m.Name
			}
		}
		t.Errorf("%s mounts nothing at %s", c.Name, filepath.Dir(file))
		return ""
	}
	volumes := map[string]corev1.Volume{}
	for _, v := range dep.Spec.Template.Spec.Volumes {
		volumes[v.Name] = v
	}
	secretFile := flag(console.Args, "proxy-secret-file")
	if a, b := volumes[mountOf(o2p, secretFile)], volumes[mountOf(console, secretFile)]; a.Secret == nil || b.Secret == nil || a.Secret.SecretName != b.Secret.SecretName {
		t.Errorf("the shared secret: oauth2-proxy reads %+v, the console %+v; want the same Secret", a.Secret, b.Secret)
	}
	for _, f := range []string{flag(o2p.Args, "cookie-secret-file"), alpha.Providers[0].ClientSecretFile} {
		if v := volumes[mountOf(o2p, f)]; v.Secret == nil {
			t.Errorf("%s is not in a Secret volume: %+v", f, v)
		}
	}
	svc := find(t, objs, "Service", "clusterdesk")
	ports, _, _ := unstructured.NestedSlice(svc.Object, "spec", "ports")
	var target any
	for _, p := range ports {
		if m := p.(map[string]any); m["name"] == "http" {
			target = m["targetPort"]
		}
	}
	if len(o2p.Ports) != 1 || target != o2p.Ports[0].Name {
		t.Errorf("the Service's http port targets %v, want oauth2-proxy's port %+v", target, o2p.Ports)
	}

	// The real oauth2-proxy accepts the configuration and the container's
	// flags (files moved to a temporary directory).
	bin := os.Getenv("OAUTH2_PROXY_BIN")
	if bin == "" {
		bin = filepath.Join("..", "..", ".cache", "bin", "oauth2-proxy")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("oauth2-proxy: %v (make oauth2-proxy installs it; OAUTH2_PROXY_BIN names another)", err)
	}
	tmp := t.TempDir()
	moved := func(s string) string {
		for _, dir := range []string{filepath.Dir(secretFile), filepath.Dir(alpha.Providers[0].ClientSecretFile)} {
			s = strings.ReplaceAll(s, dir+"/", tmp+"/")
		}
		return s
	}
	for _, f := range []string{"secret", "client-secret"} {
		if err := os.WriteFile(filepath.Join(tmp, f), []byte("0123456789abcdef0123456789abcdef"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(tmp, "cookie-secret"), []byte("0123456789abcdef0123456789abcdef"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tmp, "alpha.yaml"), []byte(moved(alphaYAML)), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"--config-test"}
	for _, a := range o2p.Args {
		if strings.HasPrefix(a, "--alpha-config=") {
			a = "--alpha-config=" + filepath.Join(tmp, "alpha.yaml")
		}
		args = append(args, moved(a))
	}
	out, err := exec.Command(bin, args...).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "configuration is valid") {
		t.Errorf("oauth2-proxy %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}
