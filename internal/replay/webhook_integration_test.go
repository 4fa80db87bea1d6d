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
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
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
	as := func(user string) proofClient {
		cfg := *adminCfg
		cfg.Impersonate.UserName, cfg.Impersonate.Groups = user, []string{"system:masters"}
		return proofClient{Interface: kubernetes.NewForConfigOrDie(&cfg), dyn: dynamicFor(t, &cfg)}
	}
	alice, bob := as("dev-alice"), as("dev-bob")

	sfx := strings.ReplaceAll(time.Now().UTC().Format("150405.000000"), ".", "")
	widgets := installWidgets(t, sfx)
	ns, other, unlabelled := "whr-"+sfx, "whr-other-"+sfx, "whr-plain-"+sfx
	for n, lbl := range map[string]map[string]string{ns: {"whr": sfx, "env": "prod"}, other: {"whr": sfx, "env": "dev"}, unlabelled: {}} {
		if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n, Labels: lbl}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			cleanWorkload(proofClient{Interface: admin, dyn: dynamicFor(t, adminCfg)}, n, widgets)
			testcluster.DeleteNamespace(t, admin, n)
		})
	}
	// Pods need their service account (no controller makes "default").
	if _, err := admin.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	rc := testcluster.NewAdmissionReceiver(t)
	caBundle := rc.CABundle
	allOps := []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update, admissionregistrationv1.Delete}
	rules := []admissionregistrationv1.RuleWithOperations{
		{Operations: allOps, Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps", "pods"}}},
		{Operations: allOps, Rule: admissionregistrationv1.Rule{APIGroups: []string{widgets.Group}, APIVersions: []string{"v1"}, Resources: []string{widgets.Resource}}},
	}
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
		if err != nil && receivedAs(rc.Received(), testcluster.ReceivedKey("CREATE", ns, probe, "")) > 0 {
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
	webhookWorkload(t, alice, bob, widgets, ns)
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
		return (w.Namespace == ns || w.Namespace == other || w.Namespace == unlabelled) &&
			(w.Resource == "configmaps" || w.Resource == "pods" || w.Resource == widgets.Resource) &&
			!strings.HasPrefix(w.Name, "probe-") && w.Name != "kube-root-ca.crt"
	}
	receipts := rc.Receipts()
	for name := range configs {
		deployed, err := vwc.Get(ctx, name, metav1.GetOptions{}) // as the API server has it, defaults and all
		if err != nil {
			t.Fatal(err)
		}
		h := deployed.Webhooks[0]
		sentByReplay, requests, committedOld := map[string]int{}, map[string]int{}, map[string]string{}
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
				key := testcluster.ReceivedKey(w.Operation, w.Namespace, w.Name, w.User)
				requests[key]++
				committedOld[key] = resourceVersionOf(t, w.OldObject)
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
			// sent by the replay, and no other. A key (operation, object,
			// user) is one request of the traffic, so "sent" is "received
			// at least once": the API server calls the webhooks again for
			// one update or delete whose storage write retries (the
			// registry's Update runs the admission validation inside
			// GuaranteedUpdate's attempt, k8s.io/apiserver's
			// registry/generic/registry/store.go, and the etcd3 store
			// retries an attempt made on a stale cached object,
			// storage/etcd3/store.go; a delete likewise); the replay gives
			// one verdict per request. Seen on the devcluster: a patch
			// right after its object's create received twice.
			for key, n := range requests {
				if n != 1 {
					t.Fatalf("%s: %d requests of the traffic; the comparison needs one per key", key, n)
				}
			}
			// An attempt made on a stale cached object is reviewed with
			// that object as its oldObject, and the objectSelector reads
			// it: seen on the devcluster, alice's patch right after bob
			// labelled a1 quiet was reviewed once with the unlabelled a1
			// (sent), then retried on the quiet one (not sent). The
			// replay predicts the request that committed, so the receipts
			// compared are those whose oldObject is the one the committed
			// write replaced; the others are counted and logged.
			received, stale := committedReceipts(receipts, committedOld)
			repeats := 0
			for key, n := range received {
				if strings.Contains(key, "/probe-") || strings.Contains(key, "/kube-root-ca.crt ") {
					continue
				}
				if sentByReplay[key] == 0 {
					disagreements = append(disagreements, fmt.Sprintf("%s: the webhook received it %d times, the replay does not send it", key, n))
				} else if n > 1 && strings.HasPrefix(key, "CREATE ") {
					disagreements = append(disagreements, fmt.Sprintf("%s: received %d times: a create is not retried", key, n))
				}
				repeats += n - 1
			}
			for key := range sentByReplay {
				if received[key] == 0 {
					disagreements = append(disagreements, fmt.Sprintf("%s: the replay sends it, the webhook never received it", key))
				}
			}
			t.Logf("rec: %d calls repeated by the API server's retried updates, %d calls on a stale object before a retry", repeats, stale)
		}
		t.Logf("%s: %d requests compared, %d sent, %d fail if unreachable; replay of %d writes in %s", h.Name, compared, sent, failing, sum.Scanned, sum.Elapsed)
		for _, d := range disagreements {
			t.Errorf("%s: disagreement: %s", h.Name, d)
		}
		// 24 writes: 8 ConfigMap creates (f1 and f2 refused, the dry
		// run), 4 patches, 3 deletes; 8 pod and widget writes
		// (webhookWorkload); the last create.
		if compared != 24 {
			t.Errorf("%s: compared %d requests, want 24", h.Name, compared)
		}
		switch h.Name {
		case rec.Name:
			// a1, b1, f1, dry, last created; a1 (label added), a2 (label
			// removed) patched; a2 deleted; 6 of webhookWorkload's.
			// Against no deployed version, every request sent is newly
			// sent.
			if sent != 14 || sum.NewlySent != int64(allSent) {
				t.Errorf("rec: %d sent (want 14), %d newly sent of %d sent in all", sent, sum.NewlySent, allSent)
			}
		case down.Name:
			if failing != 3 {
				t.Errorf("down: %d fail if unreachable, want 3 (f1, f2, pod-f)", failing)
			}
		}
	}
}

// webhookWorkload is the webhook test's Pods and Widgets in ns: pod-a
// created (sent), pod-q created quiet (not sent), pod-a labelled quiet (its
// oldObject is not: sent), bob deletes pod-a (his deletes are left out),
// pod-f refused by the unreachable webhook (sent to rec as well); a widget
// created, patched and deleted (each sent: the DELETE's objectSelector
// reads the oldObject the ledger keeps).
func webhookWorkload(t *testing.T, alice, bob proofClient, widgets schema.GroupVersionResource, ns string) {
	t.Helper()
	ctx := context.Background()
	pod := func(name string, labels map[string]string) error {
		_, err := alice.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example/web:1"}}}}, metav1.CreateOptions{})
		return err
	}
	wr := widgets.GroupVersion().String()
	steps := []struct {
		what    string
		refused bool
		do      func() error
	}{
		{"pod-a", false, func() error { return pod("pod-a", nil) }},
		{"pod-q", false, func() error { return pod("pod-q", map[string]string{"quiet": "1"}) }},
		{"pod-a quiet", false, func() error {
			_, err := alice.CoreV1().Pods(ns).Patch(ctx, "pod-a", types.StrategicMergePatchType, []byte(`{"metadata":{"labels":{"quiet":"1"}}}`), metav1.PatchOptions{})
			return err
		}},
		{"bob deletes pod-a", false, func() error { return bob.CoreV1().Pods(ns).Delete(ctx, "pod-a", metav1.DeleteOptions{}) }},
		{"pod-f", true, func() error { return pod("pod-f", map[string]string{"fail": "yes"}) }},
		{"widget wg", false, func() error {
			_, err := alice.dyn.Resource(widgets).Namespace(ns).Create(ctx, &unstructured.Unstructured{Object: map[string]any{"apiVersion": wr, "kind": "Widget",
				"metadata": map[string]any{"name": "wg"}, "spec": map[string]any{"size": int64(2)}}}, metav1.CreateOptions{})
			return err
		}},
		{"wg patched", false, func() error {
			_, err := alice.dyn.Resource(widgets).Namespace(ns).Patch(ctx, "wg", types.MergePatchType, []byte(`{"spec":{"size":3}}`), metav1.PatchOptions{})
			return err
		}},
		{"wg deleted", false, func() error {
			return alice.dyn.Resource(widgets).Namespace(ns).Delete(ctx, "wg", metav1.DeleteOptions{})
		}},
	}
	for _, s := range steps {
		if err := s.do(); (err != nil) != s.refused {
			t.Fatalf("%s: %v (want refused: %v)", s.what, err, s.refused)
		}
	}
}

// committedReceipts counts the receipts by key, leaving out (and counting
// as stale) an update's or delete's receipt whose oldObject is not the one
// its committed write replaced (committedOld, by key: the ledger's
// OldObject's resourceVersion).
func committedReceipts(receipts []testcluster.Receipt, committedOld map[string]string) (map[string]int, int) {
	received, stale := map[string]int{}, 0
	for _, r := range receipts {
		if old := committedOld[r.Key]; old != "" && r.OldResourceVersion != "" && r.OldResourceVersion != old {
			stale++
			continue
		}
		received[r.Key]++
	}
	return received, stale
}

// resourceVersionOf is metadata.resourceVersion of a recorded object; ""
// for none.
func resourceVersionOf(t *testing.T, object []byte) string {
	t.Helper()
	if len(object) == 0 {
		return ""
	}
	var o unstructured.Unstructured
	if err := o.UnmarshalJSON(object); err != nil {
		t.Fatalf("a recorded object: %v", err)
	}
	return o.GetResourceVersion()
}

// receivedAs sums the requests received under keys that start with prefix
// (a ReceivedKey with no user: any user's).
func receivedAs(received map[string]int, prefix string) int {
	n := 0
	for k, v := range received {
		if strings.HasPrefix(k, prefix) {
			n += v
		}
	}
	return n
}
