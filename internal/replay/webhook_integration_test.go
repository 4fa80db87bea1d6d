//go:build integration

package replay

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/clusterdesk/clusterdesk/internal/ledger"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// TestWebhookReplayAgreesWithWhatTheWebhookReceived registers a real
// webhook (an HTTPS server on loopback with its CA bundle) with a
// namespaceSelector, an objectSelector and a matchCondition, and a second
// one that cannot be reached under failurePolicy Fail; makes writes as two
// users; then replays each configuration as a draft against nothing over
// the recorded writes and compares request by request: "would be sent"
// with what the webhook received, "would fail if unreachable" with what
// the API server refused.
func TestWebhookReplayAgreesWithWhatTheWebhookReceived(t *testing.T) {
	testcluster.Require(t)
	ws := recordingWebhook(t)
	ctx := context.Background()
	adminCfg := testcluster.RestConfig(t, testcluster.Admin)
	admin := kubernetes.NewForConfigOrDie(adminCfg)
	as := func(user string) kubernetes.Interface {
		cfg := *adminCfg
		cfg.Impersonate.UserName, cfg.Impersonate.Groups = user, []string{"system:masters"}
		return kubernetes.NewForConfigOrDie(&cfg)
	}
	alice, bob := as("dev-alice"), as("dev-bob")

	sfx := strings.ReplaceAll(time.Now().UTC().Format("150405.000000"), ".", "")
	ns, other, unlabelled := "whr-"+sfx, "whr-other-"+sfx, "whr-plain-"+sfx
	for n, lbl := range map[string]map[string]string{ns: {"whr": sfx, "env": "prod"}, other: {"whr": sfx, "env": "dev"}, unlabelled: {}} {
		if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n, Labels: lbl}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { testcluster.DeleteNamespace(t, admin, n) })
	}

	rc := testcluster.NewAdmissionReceiver(t)
	caBundle := rc.CABundle
	rules := []admissionregistrationv1.RuleWithOperations{{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update, admissionregistrationv1.Delete},
		Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
	}}
	hook := func(name, url string, fp admissionregistrationv1.FailurePolicyType) admissionregistrationv1.ValidatingWebhook {
		return admissionregistrationv1.ValidatingWebhook{Name: name,
			ClientConfig:  admissionregistrationv1.WebhookClientConfig{URL: ptr.To(url), CABundle: caBundle},
			Rules:         rules,
			FailurePolicy: ptr.To(fp), SideEffects: ptr.To(admissionregistrationv1.SideEffectClassNone),
			AdmissionReviewVersions: []string{"v1"}, TimeoutSeconds: ptr.To(int32(5)),
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"whr": sfx}},
		}
	}
	rec := hook("rec.whreplay.test", rc.URL+"/rec", admissionregistrationv1.Ignore)
	rec.ObjectSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "quiet", Operator: metav1.LabelSelectorOpDoesNotExist}}}
	rec.MatchConditions = []admissionregistrationv1.MatchCondition{
		{Name: "not-bobs-deletes", Expression: "!(request.userInfo.username == 'dev-bob' && request.operation == 'DELETE')"},
		{Name: "not-the-root-ca", Expression: "request.name != 'kube-root-ca.crt'"},
	}
	// Port 1 on loopback refuses connections: the webhook is unreachable.
	down := hook("down.whreplay.test", "https://127.0.0.1:1/down", admissionregistrationv1.Fail)
	down.ObjectSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"fail": "yes"}}
	configs := map[string]admissionregistrationv1.ValidatingWebhook{"whreplay-rec-" + sfx: rec, "whreplay-down-" + sfx: down}
	vwc := admin.AdmissionregistrationV1().ValidatingWebhookConfigurations()
	for name, h := range configs {
		if _, err := vwc.Create(ctx, &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name},
			Webhooks: []admissionregistrationv1.ValidatingWebhook{h}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { vwc.Delete(context.Background(), name, metav1.DeleteOptions{}) })
	}

	// The API server calls the webhooks once its informers have both
	// configurations: probe with dry runs until a probe reaches the
	// receiver and is refused for the unreachable one.
	// Polled every 100 ms, bounded by 60 s, as waitRecorded polls.
	for i, deadline := 0, time.Now().Add(60*time.Second); ; i++ {
		probe := fmt.Sprintf("probe-%d", i)
		_, err := admin.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: probe, Namespace: ns,
			Labels: map[string]string{"fail": "yes"}}}, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil && rc.Received()[testcluster.ReceivedKey("CREATE", ns, probe)] > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the API server did not call both webhooks within 60 s (%d probes)", i+1)
		}
		time.Sleep(100 * time.Millisecond)
	}

	cm := func(c kubernetes.Interface, n, name string, labels map[string]string, dryRun bool) {
		t.Helper()
		o := metav1.CreateOptions{}
		if dryRun {
			o.DryRun = []string{metav1.DryRunAll}
		}
		_, err := c.CoreV1().ConfigMaps(n).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: n, Labels: labels}}, o)
		if err != nil && labels["fail"] != "yes" {
			t.Fatal(err)
		}
	}
	patch := func(c kubernetes.Interface, n, name, body string) {
		t.Helper()
		if _, err := c.CoreV1().ConfigMaps(n).Patch(ctx, name, types.MergePatchType, []byte(body), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	del := func(c kubernetes.Interface, n, name string) {
		t.Helper()
		if err := c.CoreV1().ConfigMaps(n).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	cm(alice, ns, "a1", nil, false)
	cm(alice, other, "a2", map[string]string{"quiet": "1"}, false)
	cm(bob, ns, "b1", nil, false)
	cm(bob, unlabelled, "b2", nil, false)
	cm(bob, other, "b3", map[string]string{"quiet": "1"}, false)
	cm(alice, ns, "f1", map[string]string{"fail": "yes"}, false) // refused: down is unreachable
	cm(bob, other, "f2", map[string]string{"fail": "yes", "quiet": "1"}, false)
	cm(alice, ns, "dry", nil, true)
	patch(bob, ns, "a1", `{"metadata":{"labels":{"quiet":"1"}}}`)       // the old object is not quiet: sent
	patch(alice, ns, "a1", `{"data":{"k":"v"}}`)                        // quiet before and after: not sent
	patch(alice, other, "a2", `{"metadata":{"labels":{"quiet":null}}}`) // the new object is not quiet: sent
	patch(bob, unlabelled, "b2", `{"data":{"k":"v"}}`)
	del(bob, ns, "b1")      // bob's delete: the matchCondition skips it
	del(alice, other, "a2") // sent
	del(alice, ns, "a1")    // quiet: not sent
	cm(alice, ns, "last", nil, false)
	waitRecorded(t, ws, ns, "last")

	nsList, err := admin.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var todays []*corev1.Namespace
	for i := range nsList.Items {
		todays = append(todays, &nsList.Items[i])
	}
	ours := func(w *ledger.Write) bool {
		return (w.Namespace == ns || w.Namespace == other || w.Namespace == unlabelled) && w.Resource == "configmaps" &&
			!strings.HasPrefix(w.Name, "probe-") && w.Name != "kube-root-ca.crt"
	}
	received := rc.Received()
	for name := range configs {
		deployed, err := vwc.Get(ctx, name, metav1.GetOptions{}) // as the API server has it, defaults and all
		if err != nil {
			t.Fatal(err)
		}
		h := deployed.Webhooks[0]
		sentByReplay := map[string]int{}
		var compared, sent, failing, allSent int
		var disagreements []string
		sum, err := RunWebhooks(ctx, WebhookOptions{Writes: ws, Namespaces: todays, Draft: WebhookConfig{Validating: deployed},
			OnRequest: func(w *ledger.Write, d, _ WebhookVerdict) {
				if d[h.Name].Sending == Sent { // the probes among them
					allSent++
				}
				if !ours(w) {
					return
				}
				compared++
				v := d[h.Name]
				key := testcluster.ReceivedKey(w.Operation, w.Namespace, w.Name)
				if v.Sending == Sent {
					sent++
					sentByReplay[key]++
				}
				// What the API server did: a write to an unreachable
				// webhook under Fail was refused; no other was.
				refused := w.Code >= 400
				if v.FailsIfUnreachable() {
					failing++
				}
				if h.Name == down.Name && v.FailsIfUnreachable() != refused {
					disagreements = append(disagreements, fmt.Sprintf("%s by %s: API server refused %v (%d), replay fails-if-unreachable %v", key, w.User, refused, w.Code, v.FailsIfUnreachable()))
				}
			}})
		if err != nil {
			t.Fatal(err)
		}
		if h.Name == rec.Name {
			// Every request the webhook received in our namespaces was
			// sent by the replay, as often, and no other.
			for key, n := range received {
				if strings.Contains(key, "/probe-") || strings.HasSuffix(key, "/kube-root-ca.crt") {
					continue
				}
				if sentByReplay[key] != n {
					disagreements = append(disagreements, fmt.Sprintf("%s: the webhook received it %d times, the replay sends it %d", key, n, sentByReplay[key]))
				}
			}
			for key, n := range sentByReplay {
				if received[key] != n {
					disagreements = append(disagreements, fmt.Sprintf("%s: the replay sends it %d times, the webhook received it %d", key, n, received[key]))
				}
			}
		}
		t.Logf("%s: %d requests compared, %d sent, %d fail if unreachable; replay of %d writes in %s", h.Name, compared, sent, failing, sum.Scanned, sum.Elapsed)
		for _, d := range disagreements {
			t.Errorf("%s: disagreement: %s", h.Name, d)
		}
		// 16 writes: 8 creates (f1 and f2 refused, the dry run), 4
		// patches, 3 deletes, the last create.
		if compared != 16 {
			t.Errorf("%s: compared %d requests, want 16", h.Name, compared)
		}
		switch h.Name {
		case rec.Name:
			// a1, b1, f1, dry, last created; a1 (label added), a2 (label
			// removed) patched; a2 deleted. Against no deployed version,
			// every request sent is newly sent.
			if sent != 8 || sum.NewlySent != int64(allSent) {
				t.Errorf("rec: %d sent (want 8), %d newly sent of %d sent in all", sent, sum.NewlySent, allSent)
			}
		case down.Name:
			if failing != 2 {
				t.Errorf("down: %d fail if unreachable, want 2 (f1, f2)", failing)
			}
		}
	}
}
