//go:build integration

package handlers

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/clusterdesk/clusterdesk/internal/apfload"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// TestWebhookHealthShowsFailOpen registers a webhook that sleeps past its
// 1 s timeout with failurePolicy Ignore, sends dry-run ConfigMap creates that
// reach it, and checks that the sampler counts the calls that failed open and
// that the configuration's page shows the badge and the lint.
func TestWebhookHealthShowsFailOpen(t *testing.T) {
	admin := testcluster.RestConfig(t, testcluster.Admin)
	cs := kubernetes.NewForConfigOrDie(admin)
	ctx := t.Context()
	suffix := fmt.Sprintf("%d", time.Now().UnixNano()%1_000_000)
	cfgName := "webhookhealth-" + suffix
	hookName := "slow-" + suffix + ".webhookhealth.clusterdesk.dev"
	label := "webhookhealth-" + suffix

	// The webhook outlives its timeout; it returns early when the API server gives up.
	srv, caPEM := tlsServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(2 * time.Second):
		case <-r.Context().Done():
		}
		http.Error(w, "too late", http.StatusServiceUnavailable)
	}))
	url := srv.URL + "/slow"
	_, err := cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: cfgName},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:                    hookName,
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: caPEM},
			Rules:                   []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create}, Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}},
			ObjectSelector:          &metav1.LabelSelector{MatchLabels: map[string]string{label: "yes"}},
			FailurePolicy:           ptr.To(admissionregistrationv1.Ignore),
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
			TimeoutSeconds:          ptr.To[int32](1),
			AdmissionReviewVersions: []string{"v1"},
		}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(context.Background(), cfgName, metav1.DeleteOptions{})
	})

	fetch, err := kube.APIServerMetrics(admin)
	if err != nil {
		t.Fatal(err)
	}
	sampler := apfload.New(fetch, apfload.Options{Interval: 2 * time.Second})
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	go sampler.Run(sctx)
	if _, err := sampler.Current(ctx); err != nil {
		t.Fatalf("first read of /metrics: %v", err)
	}

	// Dry-run creates, one at a time (each waits out the 1 s timeout), go on
	// while the pages are checked so every window holds some; at most maxCalls.
	const maxCalls = 25
	callCtx, endCalls := context.WithTimeout(ctx, 60*time.Second)
	var wg sync.WaitGroup
	var calls int
	wg.Add(1)
	go func() {
		defer wg.Done()
		for calls = 0; calls < maxCalls && callCtx.Err() == nil; calls++ {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("webhookhealth-%s-%d", suffix, calls), Namespace: "default", Labels: map[string]string{label: "yes"}}}
			if _, err := cs.CoreV1().ConfigMaps("default").Create(callCtx, cm, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil && callCtx.Err() == nil {
				t.Errorf("dry-run create: %v", err)
				return
			}
		}
	}()
	defer func() { endCalls(); wg.Wait() }()

	key := apfload.WebhookKey{Type: apfload.TypeValidating, Name: hookName}
	var w apfload.WebhookLoad
	for {
		ld, err := sampler.Current(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if w = ld.Webhooks[key]; w.FailedOpen > 0 {
			break
		}
		if callCtx.Err() != nil {
			t.Fatalf("no fail-open counted for %s: %+v", hookName, w)
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Logf("sampler: %+v", w)
	if w.FailOpenTotal < 1 || w.RequestsTotal < 1 {
		t.Errorf("webhook load %+v", w)
	}

	ls := newLiveServerWith(t, admin, testcluster.Admin, false, func(d *Deps) {
		access, err := kube.NewAccess(admin)
		if err != nil {
			t.Fatal(err)
		}
		d.APFLoad, d.URLAccess = sampler, access
	})
	sess := ls.login(t)
	var health, finding, row string
	for attempt := 0; ; attempt++ {
		code, doc, took := ls.get(t, sess, "/validatingwebhooks/"+cfgName)
		health = strings.Join(strings.Fields(doc.Find(`[data-testid="webhook-health"]`).Text()), " ")
		finding = strings.Join(strings.Fields(doc.Find(`[data-testid="webhook-health"] [data-testid="finding-failed-open"]`).Text()), " ")
		if code == http.StatusOK && finding != "" && strings.Contains(health, "failed open") {
			t.Logf("detail page in %v", took)
			break
		}
		if attempt >= 20 {
			t.Fatalf("detail page %d: health %q, finding %q", code, health, finding)
		}
		time.Sleep(time.Second)
	}
	if !strings.Contains(health, "per API server instance") || !strings.Contains(finding, hookName) {
		t.Errorf("health %q, finding %q", health, finding)
	}
	// The list row's badge (the window may have moved on: then the total shows).
	code, doc, _ := ls.get(t, sess, "/validatingwebhooks")
	row = strings.Join(strings.Fields(doc.Find("#row-validatingwebhooks-"+cfgName).Text()), " ")
	if code != http.StatusOK || !strings.Contains(row, "failed open") {
		t.Errorf("list %d, row %q", code, row)
	}
}
