//go:build integration

package approver

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/clusterdesk/clusterdesk/internal/audit"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// The approver's identity as deploy/approver names it.
const (
	saNamespace = "clusterdesk"
	saName      = "clusterdesk-approver"
)

// approverConfig is the approver's identity: the admin impersonating the
// ServiceAccount of deploy/approver, bound to the shipped ClusterRole and, in
// namespace ns (where its Leases go), the shipped Role.
func approverConfig(t testing.TB, ns string) *rest.Config {
	t.Helper()
	admin := testcluster.RestConfig(t, testcluster.Admin)
	cs := kubernetes.NewForConfigOrDie(admin)
	ap := testcluster.NewApplier(t, admin)
	ctx := context.Background()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// The devcluster runs no namespace controller: the Roles, bindings
		// (deploy/approver's, all in ns) and Leases go first
		// (testcluster.DeleteNamespace).
		_ = cs.CoordinationV1().Leases(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
		_ = cs.RbacV1().RoleBindings(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
		_ = cs.RbacV1().Roles(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
		testcluster.DeleteNamespace(t, cs, ns)
	})
	for _, o := range testcluster.ReadManifests(t, "../../deploy/approver/approver.yaml") {
		switch o.GetKind() {
		case "ClusterRole", "ClusterRoleBinding":
			// The shipped text (replacing what an earlier run left), deleted
			// at the end: "who approves" pages and tests on the same cluster
			// would otherwise meet the approver among a signer's approvers.
			res, err := ap.Create(ctx, o, false)
			if apierrors.IsAlreadyExists(err) {
				res, err = replace(ctx, admin, o)
			}
			if err != nil {
				t.Fatalf("%s %s: %v (%v)", o.GetKind(), o.GetName(), err, res)
			}
			kind, name := o.GetKind(), o.GetName()
			t.Cleanup(func() {
				if kind == "ClusterRole" {
					_ = cs.RbacV1().ClusterRoles().Delete(ctx, name, metav1.DeleteOptions{})
				} else {
					_ = cs.RbacV1().ClusterRoleBindings().Delete(ctx, name, metav1.DeleteOptions{})
				}
			})
		case "Role", "RoleBinding":
			o.SetNamespace(ns)
			if _, err := ap.Create(ctx, o, false); err != nil {
				t.Fatalf("%s %s: %v", o.GetKind(), o.GetName(), err)
			}
		}
	}
	cfg := rest.CopyConfig(admin)
	cfg.Impersonate = rest.ImpersonationConfig{
		UserName: "system:serviceaccount:" + saNamespace + ":" + saName,
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + saNamespace, "system:authenticated"},
	}
	return cfg
}

func replace(ctx context.Context, cfg *rest.Config, o *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	dyn := dynamic.NewForConfigOrDie(cfg)
	gvr := map[string]string{"ClusterRole": "clusterroles", "ClusterRoleBinding": "clusterrolebindings"}[o.GetKind()]
	r := dyn.Resource(rbacGVR(gvr))
	cur, err := r.Get(ctx, o.GetName(), metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	o.SetResourceVersion(cur.GetResourceVersion())
	return r.Update(ctx, o, metav1.UpdateOptions{})
}

// policy creates a CSRApprovalPolicy labelled for this test's approver only
// (its --policy-selector), so the approver never acts on the demo policies
// or another test's.
func policy(t *testing.T, label, name, signer, decision, expression string) {
	t.Helper()
	r := policies(testcluster.RestConfig(t, testcluster.Admin))
	if _, err := r.Create(context.Background(), policyFor(label, name, decision, expression, signer), metav1.CreateOptions{}); err != nil {
		t.Fatalf("policy %s: %v", name, err)
	}
	t.Cleanup(func() { _ = r.Delete(context.Background(), name, metav1.DeleteOptions{}) })
}

// policyFor is a CSRApprovalPolicy object labelled for the test's approver.
func policyFor(label, name, decision, expression string, signers ...string) *unstructured.Unstructured {
	names := make([]any, len(signers))
	for i, s := range signers {
		names[i] = s
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "clusterdesk.io/v1alpha1", "kind": "CSRApprovalPolicy",
		"metadata": map[string]any{"name": name, "labels": map[string]any{"approver-test": label}},
		"spec": map[string]any{
			"signerNames": names, "decision": decision, "reason": "Test",
			"message": "test policy " + name, "expression": expression,
		},
	}}
}

// policies is the CSRApprovalPolicies' resource, as cfg's identity.
func policies(cfg *rest.Config) dynamic.ResourceInterface {
	return dynamic.NewForConfigOrDie(cfg).Resource(kube.CSRApprovalPolicyResource)
}

// running is one approver in process, with its audit lines and log.
type running struct {
	*Approver
	lines, log *syncBuffer
	cancel     context.CancelFunc
	done       chan error
	stopped    sync.Once
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// start runs an approver until the test ends (or stop is called): leading
// under leader when set, else deciding at once.
func start(t testing.TB, cfg Config, leader *Leader) *running {
	t.Helper()
	r := &running{lines: &syncBuffer{}, log: &syncBuffer{}, done: make(chan error, 1)}
	cfg.Log = slog.New(slog.NewTextHandler(r.log, nil))
	cfg.Audit = audit.New(audit.Options{Log: cfg.Log, Lines: r.lines})
	cfg.User = "system:serviceaccount:" + saNamespace + ":" + saName
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r.Approver = a
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go func() {
		if leader != nil {
			r.done <- a.RunLeader(ctx, *leader)
			return
		}
		if err := a.Start(ctx); err != nil {
			r.done <- err
			return
		}
		a.Run(ctx)
		r.done <- nil
	}()
	t.Cleanup(r.stop)
	return r
}

// stop cancels the approver's context and waits for it to return.
func (r *running) stop() {
	r.stopped.Do(func() {
		r.cancel()
		select {
		case <-r.done:
		case <-time.After(20 * time.Second):
		}
	})
}

// metric is the value of a counter or gauge with the labels given as
// name=value pairs, 0 when there is no such series.
func (r *running) metric(t *testing.T, name string, labels ...string) float64 {
	t.Helper()
	mfs, err := r.Metrics.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	series:
		for _, m := range mf.GetMetric() {
			have := map[string]string{}
			for _, l := range m.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			for _, kv := range labels {
				k, v, _ := strings.Cut(kv, "=")
				if have[k] != v {
					continue series
				}
			}
			if m.GetCounter() != nil {
				return m.GetCounter().GetValue()
			}
			return m.GetGauge().GetValue()
		}
	}
	return 0
}

// eventually polls cond every 100 ms for up to d.
func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %s", d, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// allDecisions are the Approved and Denied conditions of every CSR, by name,
// from one LIST.
func allDecisions(t *testing.T, cs kubernetes.Interface) map[string][]certificatesv1.CertificateSigningRequestCondition {
	t.Helper()
	list, err := cs.CertificatesV1().CertificateSigningRequests().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]certificatesv1.CertificateSigningRequestCondition{}
	for _, c := range list.Items {
		out[c.Name] = nil
		for _, cond := range c.Status.Conditions {
			if cond.Type == certificatesv1.CertificateApproved || cond.Type == certificatesv1.CertificateDenied {
				out[c.Name] = append(out[c.Name], cond)
			}
		}
	}
	return out
}

// decisions are the Approved and Denied conditions of the CSR name.
func decisions(t *testing.T, cs kubernetes.Interface, name string) []certificatesv1.CertificateSigningRequestCondition {
	t.Helper()
	c, err := cs.CertificatesV1().CertificateSigningRequests().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("CSR %s: %v", name, err)
	}
	var out []certificatesv1.CertificateSigningRequestCondition
	for _, cond := range c.Status.Conditions {
		if cond.Type == certificatesv1.CertificateApproved || cond.Type == certificatesv1.CertificateDenied {
			out = append(out, cond)
		}
	}
	return out
}

// stamp is unique per test run: policy names, labels and common names.
func stamp() string { return fmt.Sprintf("%d", time.Now().UnixNano()%1e10) }

func rbacGVR(resource string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: resource}
}
