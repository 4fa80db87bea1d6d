package main

import (
	"net"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/clientcmd"
)

// auditWebhookService is the Service the API server's audit webhook
// kubeconfig (deploy/audit-webhook/kubeconfig.yaml) names.
const auditWebhookService = "clusterdesk-audit-webhook"

// TestDeployServesTheAuditWebhook checks that every variant of deploy/ serves
// the ledger's audit webhook where the example kubeconfig sends the API
// server's batches: the kubeconfig's server is the Service's DNS name and
// port; the Service selects the console's pods and targets the container port
// the console listens on (--audit-webhook-listen); the serving pair and the
// client CA are files of a mounted, required Secret; the NetworkPolicy lets
// the API server in. An overlay replacing the args list without the webhook's
// flags would leave the Service pointing at nothing.
func TestDeployServesTheAuditWebhook(t *testing.T) {
	server := auditWebhookKubeconfigServer(t)
	for _, dir := range overlayDirs(t) {
		t.Run(dir, func(t *testing.T) {
			objs := renderOverlay(t, dir)
			dep := typedDeployment(t, objs)
			c := dep.Spec.Template.Spec.Containers[0]
			flags := map[string]string{}
			for _, a := range c.Args {
				if k, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(k, "--audit-webhook-") {
					flags[k] = v
				}
			}
			_, listenPort, err := net.SplitHostPort(flags["--audit-webhook-listen"])
			if err != nil {
				t.Fatalf("deploy/%s: the console's --audit-webhook-listen is %q (args %q)", dir, flags["--audit-webhook-listen"], c.Args)
			}
			var portName string
			for _, p := range c.Ports {
				if strconv.Itoa(int(p.ContainerPort)) == listenPort {
					portName = p.Name
				}
			}
			if portName == "" {
				t.Fatalf("deploy/%s: no container port is the webhook's %s (ports %+v)", dir, listenPort, c.Ports)
			}
			for _, f := range []string{"--audit-webhook-tls-cert", "--audit-webhook-tls-key", "--audit-webhook-client-ca"} {
				if flags[f] == "" {
					t.Errorf("deploy/%s: the console has no %s", dir, f)
					continue
				}
				if secret := secretOfFile(dep, flags[f]); secret != auditWebhookService {
					t.Errorf("deploy/%s: %s=%s is not in the required Secret %s mounted read-only (found %q)", dir, f, flags[f], auditWebhookService, secret)
				}
			}

			svc := &corev1.Service{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(find(t, objs, "Service", auditWebhookService).Object, svc); err != nil {
				t.Fatal(err)
			}
			if svc.Namespace != dep.Namespace || len(svc.Spec.Selector) == 0 ||
				!labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(dep.Spec.Template.Labels)) {
				t.Errorf("deploy/%s: Service %s/%s (selector %v) does not select the console's pods in %s", dir, svc.Namespace, svc.Name, svc.Spec.Selector, dep.Namespace)
			}
			var served bool
			for _, p := range svc.Spec.Ports {
				if strconv.Itoa(int(p.Port)) == server.Port() && (p.TargetPort.String() == portName || p.TargetPort.String() == listenPort) {
					served = true
				}
			}
			if !served {
				t.Errorf("deploy/%s: Service %s has no port %s to the webhook's container port %s (%+v)", dir, svc.Name, server.Port(), portName, svc.Spec.Ports)
			}
			if want := svc.Name + "." + svc.Namespace + ".svc"; server.Hostname() != want {
				t.Errorf("the audit webhook kubeconfig sends to %s, want the Service %s", server.Host, want)
			}

			np := &networkingv1.NetworkPolicy{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(find(t, objs, "NetworkPolicy", "clusterdesk").Object, np); err != nil {
				t.Fatal(err)
			}
			if !admitsFromAnywhere(np, portName, listenPort) {
				t.Errorf("deploy/%s: the NetworkPolicy does not let the API server (a node's address) reach port %s: %+v", dir, portName, np.Spec.Ingress)
			}
		})
	}
}

// auditWebhookKubeconfigServer is the server of the example kubeconfig the
// API server's --audit-webhook-config-file reads.
func auditWebhookKubeconfigServer(t *testing.T) *url.URL {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(filepath.Join(deployDir, "audit-webhook", "kubeconfig.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := cfg.Contexts[cfg.CurrentContext]
	if ctx == nil || cfg.Clusters[ctx.Cluster] == nil {
		t.Fatalf("deploy/audit-webhook/kubeconfig.yaml: no cluster for the current context %q", cfg.CurrentContext)
	}
	u, err := url.Parse(cfg.Clusters[ctx.Cluster].Server)
	if err != nil || u.Scheme != "https" || u.Port() == "" {
		t.Fatalf("deploy/audit-webhook/kubeconfig.yaml: server %q, want https://<service>.<namespace>.svc:<port> (%v)", cfg.Clusters[ctx.Cluster].Server, err)
	}
	return u
}

// secretOfFile returns the Secret whose read-only, non-optional volume is
// mounted where file is, or "".
func secretOfFile(dep *appsv1.Deployment, file string) string {
	c := dep.Spec.Template.Spec.Containers[0]
	for _, m := range c.VolumeMounts {
		if !strings.HasPrefix(file, strings.TrimSuffix(m.MountPath, "/")+"/") || !m.ReadOnly || m.SubPath != "" {
			continue
		}
		i := slices.IndexFunc(dep.Spec.Template.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == m.Name })
		if i < 0 {
			return ""
		}
		s := dep.Spec.Template.Spec.Volumes[i].Secret
		if s == nil || (s.Optional != nil && *s.Optional) {
			return ""
		}
		return s.SecretName
	}
	return ""
}

// admitsFromAnywhere reports whether an ingress rule without peers opens the
// port (by name or number).
func admitsFromAnywhere(np *networkingv1.NetworkPolicy, name, number string) bool {
	for _, r := range np.Spec.Ingress {
		if len(r.From) != 0 {
			continue
		}
		if len(r.Ports) == 0 {
			return true
		}
		for _, p := range r.Ports {
			if p.Port != nil && (p.Port.String() == name || p.Port.String() == number) {
				return true
			}
		}
	}
	return false
}
