//go:build integration

package charttest

import (
	"context"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"

	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// The devcluster has no kubelet. What the chart renders for a Deployment is
// run here as the kubelet would run its pod, with nothing changed but what a
// process on this machine cannot do as the pod does:
//
//   - the rendered ServiceAccounts, RBAC and ConfigMaps are created for real
//     (applyRendered), and each pod's service-account token is a TokenRequest
//     for its rendered ServiceAccount, written with ca.crt and namespace to a
//     directory the binaries are pointed at (--in-cluster-dir), with the
//     kubelet's KUBERNETES_SERVICE_HOST/PORT;
//   - each volume is a directory: emptyDir and PersistentVolumeClaim empty,
//     Secret and ConfigMap volumes holding the keys of the object as the API
//     server has it (the Secrets the examples tell people to create are
//     created by the test first); env from a Secret or ConfigMap key likewise;
//   - a mount path in an argument (or in a mounted file, for oauth2-proxy's
//     configuration) is rewritten to its directory, and a listen address
//     ":<port>" becomes loopback: port 0, or the port the test chose.

// applyRendered creates, for real, the rendered objects a pod needs before it
// starts: its ServiceAccounts, their RBAC and the ConfigMaps it mounts.
func applyRendered(t *testing.T, cs kubernetes.Interface, objs []*unstructured.Unstructured) {
	t.Helper()
	ap := testcluster.NewApplier(t, testcluster.RestConfig(t, testcluster.Admin))
	for _, kind := range []string{"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding", "ConfigMap"} {
		for _, o := range byKind(objs, kind) {
			createForReal(t, cs, ap, o)
		}
	}
}

// renderedPod is one rendered Deployment's pod, its volumes written out.
type renderedPod struct {
	Name      string // the Deployment's
	Namespace string
	Spec      corev1.PodSpec
	Token     string // the TokenRequest's, for its ServiceAccount
	// SADir is the kubelet's projected service-account volume: token,
	// ca.crt, namespace.
	SADir     string
	volumeDir map[string]string // volume name -> directory
	cs        kubernetes.Interface
	server    string
}

// preparePod readies the pod of the rendered Deployment name in namespace ns.
func preparePod(t *testing.T, cs kubernetes.Interface, objs []*unstructured.Unstructured, ns, name string) *renderedPod {
	t.Helper()
	state := testcluster.Require(t)
	admin := testcluster.RestConfig(t, testcluster.Admin)
	dep := &appsv1.Deployment{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(find(t, objs, "Deployment", name).Object, dep); err != nil {
		t.Fatal(err)
	}
	p := &renderedPod{Name: name, Namespace: ns, Spec: dep.Spec.Template.Spec, volumeDir: map[string]string{}, cs: cs, server: state.Server}
	ctx := context.Background()
	sa := p.Spec.ServiceAccountName
	tok, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr(int64(600))},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("TokenRequest for Deployment %s's rendered ServiceAccount %s: %v", name, sa, err)
	}
	p.Token = tok.Status.Token
	ca := admin.CAData
	if len(ca) == 0 {
		if ca, err = os.ReadFile(admin.CAFile); err != nil {
			t.Fatal(err)
		}
	}
	p.SADir = t.TempDir()
	writeFiles(t, p.SADir, map[string][]byte{"token": []byte(p.Token), "ca.crt": ca, "namespace": []byte(ns)})

	for _, v := range p.Spec.Volumes {
		dir := t.TempDir()
		p.volumeDir[v.Name] = dir
		switch {
		case v.EmptyDir != nil, v.PersistentVolumeClaim != nil:
		case v.Secret != nil:
			if len(v.Secret.Items) > 0 {
				t.Fatalf("volume %s: Secret items are not written out here", v.Name)
			}
			s, err := cs.CoreV1().Secrets(ns).Get(ctx, v.Secret.SecretName, metav1.GetOptions{})
			if err != nil {
				t.Fatalf("volume %s: the Secret %s the pod mounts: %v", v.Name, v.Secret.SecretName, err)
			}
			writeFiles(t, dir, s.Data)
		case v.ConfigMap != nil:
			if len(v.ConfigMap.Items) > 0 {
				t.Fatalf("volume %s: ConfigMap items are not written out here", v.Name)
			}
			cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, v.ConfigMap.Name, metav1.GetOptions{})
			if err != nil {
				t.Fatalf("volume %s: the ConfigMap %s the pod mounts: %v", v.Name, v.ConfigMap.Name, err)
			}
			files := map[string][]byte{}
			for k, s := range cm.Data {
				files[k] = []byte(s)
			}
			writeFiles(t, dir, files)
		default:
			t.Fatalf("volume %s: of a kind this test does not write out", v.Name)
		}
	}
	return p
}

func writeFiles(t *testing.T, dir string, files map[string][]byte) {
	t.Helper()
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// container returns the pod's container name.
func (p *renderedPod) container(t *testing.T, name string) corev1.Container {
	t.Helper()
	for _, c := range p.Spec.Containers {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("Deployment %s's pod has no container %s", p.Name, name)
	return corev1.Container{}
}

// mounts maps each mount path of container c to its volume's directory.
func (p *renderedPod) mounts(t *testing.T, c corev1.Container) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, m := range c.VolumeMounts {
		d, ok := p.volumeDir[m.Name]
		if !ok {
			t.Fatalf("container %s mounts %s, which names no volume", c.Name, m.Name)
		}
		out[m.MountPath] = d
	}
	return out
}

// volumeOf is the volume container name mounts at mountPath.
func (p *renderedPod) volumeOf(t *testing.T, name, mountPath string) corev1.Volume {
	t.Helper()
	for _, m := range p.container(t, name).VolumeMounts {
		if m.MountPath != mountPath {
			continue
		}
		for _, v := range p.Spec.Volumes {
			if v.Name == m.Name {
				return v
			}
		}
	}
	t.Fatalf("container %s mounts no volume at %s", name, mountPath)
	return corev1.Volume{}
}

// localPaths rewrites every mount path of c in s to its directory (the
// longest mount path first, so /a/b wins over /a).
func (p *renderedPod) localPaths(t *testing.T, c corev1.Container, s string) string {
	t.Helper()
	mounts := p.mounts(t, c)
	paths := make([]string, 0, len(mounts))
	for mp := range mounts {
		paths = append(paths, mp)
	}
	sort.Slice(paths, func(i, j int) bool { return len(paths[i]) > len(paths[j]) })
	var pairs []string
	for _, mp := range paths {
		pairs = append(pairs, mp, mounts[mp])
	}
	// One pass: a rewritten path is never rewritten again.
	return strings.NewReplacer(pairs...).Replace(s)
}

// listenArg is a rendered listen address: --flag=:port.
var listenArg = regexp.MustCompile(`^(--[a-z-]+)=:([0-9]+)$`)

// command is container name's rendered args and env as a local process:
// mount paths rewritten to their directories, each listen address ":<port>"
// on loopback at ports[<port>] (a port number as a string), else port 0. The
// kubelet's KUBERNETES_SERVICE_HOST/PORT are in env with HOME and PATH; env
// from a Secret or ConfigMap is read from the API server.
func (p *renderedPod) command(t *testing.T, name string, ports map[string]string) (args, env []string) {
	t.Helper()
	c := p.container(t, name)
	for _, a := range c.Args {
		if m := listenArg.FindStringSubmatch(a); m != nil {
			port := ports[m[2]]
			if port == "" {
				port = "0"
			}
			a = m[1] + "=127.0.0.1:" + port
		}
		args = append(args, p.localPaths(t, c, a))
	}
	u, _ := url.Parse(p.server)
	host, port, err := net.SplitHostPort(u.Host)
	if err != nil {
		t.Fatal(err)
	}
	env = []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH"), "KUBERNETES_SERVICE_HOST=" + host, "KUBERNETES_SERVICE_PORT=" + port}
	ctx := context.Background()
	ns := p.Namespace
	for _, e := range c.Env {
		v := e.Value
		switch {
		case e.ValueFrom == nil:
		case e.ValueFrom.SecretKeyRef != nil:
			ref := e.ValueFrom.SecretKeyRef
			s, err := p.cs.CoreV1().Secrets(ns).Get(ctx, ref.Name, metav1.GetOptions{})
			if err != nil || s.Data[ref.Key] == nil {
				t.Fatalf("env %s: key %s of Secret %s: %v", e.Name, ref.Key, ref.Name, err)
			}
			v = string(s.Data[ref.Key])
		case e.ValueFrom.ConfigMapKeyRef != nil:
			ref := e.ValueFrom.ConfigMapKeyRef
			cm, err := p.cs.CoreV1().ConfigMaps(ns).Get(ctx, ref.Name, metav1.GetOptions{})
			if err != nil {
				t.Fatalf("env %s: ConfigMap %s: %v", e.Name, ref.Name, err)
			}
			v = cm.Data[ref.Key]
		default:
			t.Fatalf("env %s: a reference this test does not resolve", e.Name)
		}
		env = append(env, e.Name+"="+v)
	}
	return args, env
}

// rewriteFile rewrites a file of a volume container name mounts: its mount
// paths to their directories (the file's own mount paths, as in args), then
// each of pairs (old, new), every old required to occur.
func (p *renderedPod) rewriteFile(t *testing.T, name, path string, pairs ...string) string {
	t.Helper()
	c := p.container(t, name)
	local := p.localPaths(t, c, path)
	raw, err := os.ReadFile(local)
	if err != nil {
		t.Fatalf("%s (%s in container %s): %v", local, path, name, err)
	}
	text := p.localPaths(t, c, string(raw))
	for i := 0; i+1 < len(pairs); i += 2 {
		if !strings.Contains(text, pairs[i]) {
			t.Fatalf("%s as rendered holds no %q:\n%s", path, pairs[i], raw)
		}
		text = strings.ReplaceAll(text, pairs[i], pairs[i+1])
	}
	if err := os.WriteFile(local, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return local
}

// consoleBinary is bin/clusterdesk built from this tree (testcluster.ConsoleBin:
// up to date under make test, which builds it first).
func consoleBinary(t *testing.T) string {
	t.Helper()
	return testcluster.ConsoleBin(t)
}

// startConsole starts the pod's clusterdesk container as rendered, its
// ":8080" at ports["8080"] when set, with extraEnv added (none but what the
// test says why), through the shared testcluster.StartConsoleBinary.
func (p *renderedPod) startConsole(t *testing.T, ports map[string]string, extraEnv ...string) *testcluster.ConsoleBinary {
	t.Helper()
	args, env := p.command(t, "clusterdesk", ports)
	if !strings.HasPrefix(strings.Join(args, " "), "--") || !strings.Contains(" "+strings.Join(args, " "), " --listen=127.0.0.1:") {
		t.Fatalf("the rendered console's args %q: no --listen=:<port> rewritten to loopback", args)
	}
	args = append(args, "--in-cluster-dir", p.SADir)
	return testcluster.StartConsoleBinary(t, consoleBinary(t), args, append(env, extraEnv...))
}

// freePort is a loopback port free a moment ago, for a process whose address
// must be known before it starts (the OIDC redirect URL, oauth2-proxy).
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}

func ptr[T any](v T) *T { return &v }

// createSecret creates a Secret an example tells people to create first,
// deleted at the test's end (the devcluster runs no namespace controller:
// deleting the namespace leaves its objects behind).
func createSecret(t *testing.T, cs kubernetes.Interface, ns, name string, data map[string][]byte) {
	t.Helper()
	ctx := context.Background()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Data: data}
	if _, err := cs.CoreV1().Secrets(ns).Create(ctx, s, metav1.CreateOptions{}); err != nil {
		t.Fatalf("Secret %s: %v", name, err)
	}
	t.Cleanup(func() { _ = cs.CoreV1().Secrets(ns).Delete(context.Background(), name, metav1.DeleteOptions{}) })
}
