//go:build integration

package intercept

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/clusterdesk/clusterdesk/internal/admission"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// runningCache is the informer cache the console runs, as identity, synced.
func runningCache(t *testing.T, identity string) *kube.Cache {
	t.Helper()
	cache, err := kube.NewCache(testcluster.RestConfig(t, identity), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go cache.Run(ctx)
	for deadline := time.Now().Add(30 * time.Second); !cache.Ready(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("cache not ready after 30 s: %+v", cache.Statuses())
		}
	}
	return cache
}

// TestAskOnTheDevcluster seeds a ValidatingWebhookConfiguration that calls on
// CREATE of configmaps carrying this test's label in namespaces labelled
// kubernetes.io/metadata.name=default (which the API server sets), and asks
// as admin: the labels come from the namespace itself, discovery names the
// equivalents, and the webhook is called only for an object with the label.
// It fails closed for nobody: failurePolicy Ignore, and the object selector
// matches only this test's objects.
func TestAskOnTheDevcluster(t *testing.T) {
	cfg := testcluster.RestConfig(t, testcluster.Admin)
	cs := kubernetes.NewForConfigOrDie(cfg)
	stamp := fmt.Sprintf("%d", time.Now().UnixNano())
	name := "usecase-csr-intercept-" + stamp
	hook := "usecase-csr.intercept.clusterdesk.dev"
	ctx := context.Background()
	_, err := cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:                    hook,
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: ptr.To("https://127.0.0.1:1/usecase-csr")},
			Rules:                   []admissionregistrationv1.RuleWithOperations{rule()},
			NamespaceSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "default"}},
			ObjectSelector:          &metav1.LabelSelector{MatchLabels: map[string]string{"usecase-csr-intercept": stamp}},
			FailurePolicy:           ptr.To(admissionregistrationv1.Ignore),
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
			AdmissionReviewVersions: []string{"v1"},
		}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(context.Background(), name, metav1.DeleteOptions{})
	})

	lookup, err := kube.NewLookup(cfg)
	if err != nil {
		t.Fatal(err)
	}
	access, err := kube.NewAccess(cfg)
	if err != nil {
		t.Fatal(err)
	}
	a := Asker{Cache: runningCache(t, testcluster.Admin), Lookup: lookup, Timeout: 5 * time.Second,
		MayList: func(k kube.Kind) bool {
			ok, err := access.Can(ctx, "list", k.Group, k.Resource, "", "")
			return ok && err == nil
		}}
	labelled := configmaps("default", nil) // no typed labels: the namespace's own must be used
	labelled.ObjectLabels = map[string]string{"usecase-csr-intercept": stamp}

	var ans Answer
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if ans, err = a.Ask(ctx, labelled); err != nil {
			t.Fatal(err)
		}
		if verdict(ans, name) != nil || time.Now().After(deadline) {
			break
		}
	}
	v := verdict(ans, name)
	if v == nil || !v.Called {
		t.Fatalf("verdict for the seeded webhook: %+v; want it called (notes %q)", v, ans.Notes)
	}
	if len(ans.Notes) < 2 || !strings.HasPrefix(ans.Notes[0], "Namespace default exists; its labels are used: ") ||
		!strings.Contains(ans.Notes[0], "kubernetes.io/metadata.name=default") ||
		!strings.Contains(ans.Notes[1], "core/v1 configmaps") {
		t.Errorf("notes %q; want the namespace's labels read and discovery's equivalents", ans.Notes)
	}
	if slices.ContainsFunc(ans.Notes, func(n string) bool { return strings.Contains(n, "MutatingWebhookConfigurations") }) {
		t.Errorf("admin may list mutating webhooks, but a note says otherwise: %q", ans.Notes)
	}

	unlabelled, err := a.Ask(ctx, configmaps("default", nil))
	if err != nil {
		t.Fatal(err)
	}
	if v := verdict(unlabelled, name); v == nil || v.Called {
		t.Errorf("verdict for an object without the label: %+v; want it not called", v)
	}
}

// TestAskLeavesOutWhatTheUserMayNotList: the approver may list no webhook
// configurations (the devcluster's RBAC), so the mutating ones are left out
// of the answer, and it says so.
func TestAskLeavesOutWhatTheUserMayNotList(t *testing.T) {
	access, err := kube.NewAccess(testcluster.RestConfig(t, testcluster.Approver))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a := Asker{Cache: runningCache(t, testcluster.Auditor), MayList: func(k kube.Kind) bool {
		ok, err := access.Can(ctx, "list", k.Group, k.Resource, "", "")
		return ok && err == nil
	}}
	ans, err := a.Ask(ctx, configmaps("default", nil))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(ans.Notes, "Your Kubernetes identity may not list MutatingWebhookConfigurations: only validating webhooks are shown.") {
		t.Errorf("notes %q; want the mutating configurations said to be left out", ans.Notes)
	}
	for _, v := range ans.Verdicts {
		if v.Kind == admission.Mutating {
			t.Errorf("a mutating webhook is in the answer: %+v", v)
		}
	}
}

func verdict(a Answer, config string) *admission.Verdict {
	for i, v := range a.Verdicts {
		if v.Config == config {
			return &a.Verdicts[i]
		}
	}
	return nil
}
