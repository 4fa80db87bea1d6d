package main

import (
	"path"
	"regexp"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/clusterdesk/clusterdesk/internal/approver"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// TestDeployBaseRunsAsATeamService checks what the base renders for replicas:
// two or more, a PodDisruptionBudget over exactly the console's pods that
// keeps one serving, spreading over nodes, and the shared session keys mounted
// from their Secret where --session-keys points.
func TestDeployBaseRunsAsATeamService(t *testing.T) {
	objs := renderOverlay(t, "base")
	dep := typedDeployment(t, objs)
	if dep.Spec.Replicas == nil || *dep.Spec.Replicas < 2 {
		t.Fatalf("the base Deployment runs %v replicas, want 2 or more", dep.Spec.Replicas)
	}
	pods := labels.Set(dep.Spec.Template.Labels)

	pdb := &policyv1.PodDisruptionBudget{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(find(t, objs, "PodDisruptionBudget", "clusterdesk").Object, pdb); err != nil {
		t.Fatal(err)
	}
	if pdb.Namespace != dep.Namespace {
		t.Errorf("the PodDisruptionBudget is in %q, the pods in %q", pdb.Namespace, dep.Namespace)
	}
	sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
	if err != nil || sel.Empty() || !sel.Matches(pods) {
		t.Errorf("the PodDisruptionBudget's selector %v (err %v) does not select the pods (labels %v)", pdb.Spec.Selector, err, pods)
	}
	if left := availableUnderBudget(t, pdb, int(*dep.Spec.Replicas)); left < 1 || left >= int(*dep.Spec.Replicas) {
		t.Errorf("the PodDisruptionBudget keeps %d of %d replicas through a drain, want at least 1 and allow evicting one", left, *dep.Spec.Replicas)
	}

	var hostname bool
	for _, c := range dep.Spec.Template.Spec.TopologySpreadConstraints {
		s, err := metav1.LabelSelectorAsSelector(c.LabelSelector)
		if err != nil || !s.Matches(pods) {
			t.Errorf("spread over %s: selector %v does not select the pods", c.TopologyKey, c.LabelSelector)
		}
		if c.TopologyKey == corev1.LabelHostname && c.MaxSkew == 1 {
			hostname = true
		}
	}
	if !hostname {
		t.Errorf("the pods are not spread over nodes (%s): %+v", corev1.LabelHostname, dep.Spec.Template.Spec.TopologySpreadConstraints)
	}

	sessionKeysSecret(t, "base", dep)
	for _, o := range objs {
		if o.GetKind() == "Secret" {
			t.Errorf("deploy/base ships Secret %s: key material does not belong in git", o.GetName())
		}
	}
}

// TestDeployOverlaysShareSessionKeys checks every variant: replicas in a mode
// with sessions or forms must share the keys that seal and sign them, or a
// request landing on another replica fails (signed out, or a refused form).
func TestDeployOverlaysShareSessionKeys(t *testing.T) {
	for _, dir := range overlayDirs(t) {
		t.Run(dir, func(t *testing.T) {
			dep := typedDeployment(t, renderOverlay(t, dir))
			if dep.Spec.Replicas == nil || *dep.Spec.Replicas < 2 {
				t.Fatalf("deploy/%s runs %v replicas, want 2 or more", dir, dep.Spec.Replicas)
			}
			c := dep.Spec.Template.Spec.Containers[0]
			if slices.Contains(c.Args, "--auth=local") {
				t.Fatalf("deploy/%s runs local mode, which is one process", dir)
			}
			sessionKeysSecret(t, dir, dep)
		})
	}
}

// sessionKeysSecret checks that the console's --session-keys is a path inside
// a Secret volume mounted read-only, and returns the Secret's name.
func sessionKeysSecret(t *testing.T, dir string, dep *appsv1.Deployment) string {
	t.Helper()
	c := dep.Spec.Template.Spec.Containers[0]
	var keys string
	for _, a := range c.Args {
		if v, ok := strings.CutPrefix(a, "--session-keys="); ok {
			keys = v
		}
	}
	if keys == "" {
		t.Errorf("deploy/%s: the console is not given --session-keys (args %q)", dir, c.Args)
		return ""
	}
	for _, m := range c.VolumeMounts {
		if keys != m.MountPath && !strings.HasPrefix(keys, strings.TrimSuffix(m.MountPath, "/")+"/") {
			continue
		}
		if !m.ReadOnly || m.SubPath != "" {
			t.Errorf("deploy/%s: the session keys' mount %s is writable or a subPath (a subPath never sees a Secret's update)", dir, m.MountPath)
		}
		for _, v := range dep.Spec.Template.Spec.Volumes {
			if v.Name == m.Name && v.Secret != nil && v.Secret.SecretName != "" {
				if v.Secret.Optional != nil && *v.Secret.Optional {
					t.Errorf("deploy/%s: the session-key Secret is optional: a pod without it would seal with a key of its own", dir)
				}
				return v.Secret.SecretName
			}
		}
		t.Errorf("deploy/%s: --session-keys=%s is on volume %s, which is not a Secret", dir, keys, m.Name)
		return ""
	}
	t.Errorf("deploy/%s: --session-keys=%s is on no mounted volume (mounts %+v)", dir, path.Clean(keys), c.VolumeMounts)
	return ""
}

// availableUnderBudget is how many of replicas pods a drain must leave
// running (the disruption controller's reading of minAvailable/maxUnavailable,
// pkg/controller/disruption/disruption.go getExpectedPodCount in kubernetes/kubernetes).
func availableUnderBudget(t *testing.T, pdb *policyv1.PodDisruptionBudget, replicas int) int {
	t.Helper()
	switch {
	case pdb.Spec.MinAvailable != nil:
		n, err := intstr.GetScaledValueFromIntOrPercent(pdb.Spec.MinAvailable, replicas, true)
		if err != nil {
			t.Fatal(err)
		}
		return n
	case pdb.Spec.MaxUnavailable != nil:
		n, err := intstr.GetScaledValueFromIntOrPercent(pdb.Spec.MaxUnavailable, replicas, true)
		if err != nil {
			t.Fatal(err)
		}
		return replicas - n
	}
	t.Fatal("the PodDisruptionBudget sets neither minAvailable nor maxUnavailable")
	return 0
}

func typedDeployment(t *testing.T, objs []*unstructured.Unstructured) *appsv1.Deployment {
	t.Helper()
	dep := &appsv1.Deployment{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(find(t, objs, "Deployment", "clusterdesk").Object, dep); err != nil {
		t.Fatal(err)
	}
	if len(dep.Spec.Template.Spec.Containers) == 0 || dep.Spec.Template.Spec.Containers[0].Name != "clusterdesk" {
		t.Fatalf("the Deployment's first container is not the console: %+v", dep.Spec.Template.Spec.Containers)
	}
	return dep
}

// TestDeployApproverGrantsTheSignersItsPoliciesName checks the approver's
// overlay: its own Deployment of two replicas running `clusterdesk approver`
// in dry-run first, and `approve` granted on exactly the signers the shipped
// example policies name: a policy for a signer not granted is refused by the
// API server, a grant no policy needs is a right nobody uses.
func TestDeployApproverGrantsTheSignersItsPoliciesName(t *testing.T) {
	objs := renderOverlay(t, "approver")
	dep := &appsv1.Deployment{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(find(t, objs, "Deployment", "clusterdesk-approver").Object, dep); err != nil {
		t.Fatal(err)
	}
	if dep.Spec.Replicas == nil || *dep.Spec.Replicas != 2 {
		t.Errorf("the approver runs %v replicas, want 2 (one leads, one waits)", dep.Spec.Replicas)
	}
	c := dep.Spec.Template.Spec.Containers[0]
	if len(c.Args) == 0 || c.Args[0] != "approver" || !slices.Contains(c.Args, "--dry-run") {
		t.Errorf("the approver's args %q: want the approver subcommand, in dry run until someone removes it", c.Args)
	}
	if dep.Spec.Template.Spec.ServiceAccountName != "clusterdesk-approver" {
		t.Errorf("the approver runs as %q, want its own service account", dep.Spec.Template.Spec.ServiceAccountName)
	}

	var policySigners []string
	for _, p := range testcluster.ReadManifests(t, "../../devcluster/internal/seed/demo/csrapprovalpolicies-demo.yaml") {
		s, _, _ := unstructured.NestedStringSlice(p.Object, "spec", "signerNames")
		policySigners = append(policySigners, s...)
	}
	role := &rbacv1.ClusterRole{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(find(t, objs, "ClusterRole", "clusterdesk-approver").Object, role); err != nil {
		t.Fatal(err)
	}
	var granted []string
	for _, r := range role.Rules {
		if slices.Contains(r.Resources, "signers") && slices.Contains(r.Verbs, "approve") {
			if len(r.ResourceNames) == 0 {
				t.Errorf("approve on every signer: %+v", r)
			}
			granted = append(granted, r.ResourceNames...)
		}
	}
	slices.Sort(granted)
	slices.Sort(policySigners)
	if !slices.Equal(slices.Compact(granted), slices.Compact(policySigners)) {
		t.Errorf("approve granted on %v, the example policies name %v", granted, policySigners)
	}
}

// TestDeployApproverAlertsOnMetricsItServes: the example PrometheusRule names
// only metrics the approver serves, so a rename cannot leave it silently
// matching nothing.
func TestDeployApproverAlertsOnMetricsItServes(t *testing.T) {
	csr := &certificatesv1.CertificateSigningRequest{Spec: certificatesv1.CertificateSigningRequestSpec{SignerName: "kubernetes.io/kubelet-serving"}}
	m := approver.NewMetrics(func() ([]*certificatesv1.CertificateSigningRequest, error) {
		return []*certificatesv1.CertificateSigningRequest{csr}, nil
	}, func() map[string]bool { return nil })
	mfs, err := m.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	served := map[string]bool{}
	for _, mf := range mfs {
		served[mf.GetName()] = true
	}
	rules := testcluster.ReadManifests(t, "../../deploy/approver/prometheusrule.yaml")
	groups, _, _ := unstructured.NestedSlice(rules[0].Object, "spec", "groups")
	n := 0
	for _, g := range groups {
		rs, _, _ := unstructured.NestedSlice(g.(map[string]any), "rules")
		for _, r := range rs {
			expr, _, _ := unstructured.NestedString(r.(map[string]any), "expr")
			for _, name := range regexp.MustCompile(`clusterdesk_approver_[a-z_]+`).FindAllString(expr, -1) {
				n++
				if !served[name] {
					t.Errorf("the rule %q names %s, which the approver does not serve", expr, name)
				}
			}
		}
	}
	if n == 0 {
		t.Error("the PrometheusRule names no approver metric")
	}
}
