//go:build integration

package charttest

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"

	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// chartNamespace is where the chart's tests install: apart from deploy/'s
// tests (namespace clusterdesk), which run in another package.
const chartNamespace = "clusterdesk-chart"

// unservedOK are the kinds the devcluster does not serve (no Gateway API, no
// Prometheus Operator): what the chart renders of them cannot be dry-run
// here, and is named in the test's log. Any other kind must pass.
var unservedOK = map[string]bool{"HTTPRoute": true, "ServiceMonitor": true, "PrometheusRule": true}

// TestChartServerDryRun renders the chart with every example values file and
// sends each object to the API server as a dry run with strict field
// validation (an unknown or misspelt field, a wrong type, a refused value
// fail), and each Deployment's pod template as a Pod to a namespace enforcing
// the "restricted" Pod Security Standard. The devcluster has no kubelet: the
// dry run is what proves the manifests; TestChartTokenValuesRun starts the
// console as the rendered Deployment would.
func TestChartServerDryRun(t *testing.T) {
	admin := testcluster.RestConfig(t, testcluster.Admin)
	cs := kubernetes.NewForConfigOrDie(admin)
	ap := testcluster.NewApplier(t, admin)
	ctx := context.Background()
	restrictedNamespace(t, cs, chartNamespace)

	dry := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	for _, f := range exampleValues(t) {
		t.Run(exampleName(f), func(t *testing.T) {
			objs := render(t, "clusterdesk", chartNamespace, []string{f})
			for _, o := range objs {
				if o.GetKind() == "ServiceAccount" {
					// Created for real: a pod naming a missing one is refused.
					createForReal(t, cs, ap, o)
					continue
				}
				t.Run(o.GetKind()+"/"+o.GetName(), func(t *testing.T) {
					err := ap.DryRun(ctx, o)
					if meta.IsNoMatchError(err) && unservedOK[o.GetKind()] {
						t.Logf("not dry-run: the devcluster does not serve %s (%v)", o.GetKind(), err)
						return
					}
					if err != nil {
						t.Errorf("server-side dry run: %v", err)
					}
				})
			}
			for _, u := range byKind(objs, "Deployment") {
				dep := &appsv1.Deployment{}
				if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, dep); err != nil {
					t.Fatal(err)
				}
				pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: dep.Name + "-template", Namespace: chartNamespace}, Spec: dep.Spec.Template.Spec}
				if _, err := cs.CoreV1().Pods(chartNamespace).Create(ctx, pod, dry); err != nil {
					t.Errorf("Deployment %s's pod is refused in a restricted namespace: %v", dep.Name, err)
				}
			}
		})
	}
}

// restrictedNamespace creates namespace name enforcing Pod Security
// "restricted" (what the chart's namespace.create renders), deleted at the
// test's end.
func restrictedNamespace(t *testing.T, cs kubernetes.Interface, name string) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
		"pod-security.kubernetes.io/enforce":         "restricted",
		"pod-security.kubernetes.io/enforce-version": "latest",
	}}}
	if _, err := cs.CoreV1().Namespaces().Create(context.Background(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("namespace %s: %v", name, err)
	}
	t.Cleanup(func() { testcluster.DeleteNamespace(t, cs, name) })
}

// createForReal creates o (deleted at the test's end); one that exists from
// an earlier subtest is kept.
func createForReal(t *testing.T, cs kubernetes.Interface, ap *testcluster.Applier, o *unstructured.Unstructured) {
	t.Helper()
	ctx := context.Background()
	if _, err := ap.Create(ctx, o, false); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return
		}
		t.Fatalf("%s %s: %v", o.GetKind(), o.GetName(), err)
	}
	t.Cleanup(func() {
		var err error
		switch o.GetKind() {
		case "ServiceAccount":
			err = cs.CoreV1().ServiceAccounts(o.GetNamespace()).Delete(ctx, o.GetName(), metav1.DeleteOptions{})
		case "ClusterRole":
			err = cs.RbacV1().ClusterRoles().Delete(ctx, o.GetName(), metav1.DeleteOptions{})
		case "ClusterRoleBinding":
			err = cs.RbacV1().ClusterRoleBindings().Delete(ctx, o.GetName(), metav1.DeleteOptions{})
		case "Role":
			err = cs.RbacV1().Roles(o.GetNamespace()).Delete(ctx, o.GetName(), metav1.DeleteOptions{})
		case "RoleBinding":
			err = cs.RbacV1().RoleBindings(o.GetNamespace()).Delete(ctx, o.GetName(), metav1.DeleteOptions{})
		case "Secret":
			err = cs.CoreV1().Secrets(o.GetNamespace()).Delete(ctx, o.GetName(), metav1.DeleteOptions{})
		case "ConfigMap":
			err = cs.CoreV1().ConfigMaps(o.GetNamespace()).Delete(ctx, o.GetName(), metav1.DeleteOptions{})
		default:
			t.Errorf("createForReal: no cleanup for %s", o.GetKind())
		}
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("cleanup %s %s: %v", o.GetKind(), o.GetName(), err)
		}
	})
}
