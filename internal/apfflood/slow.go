package apfflood

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// SlowCreate is a flood's request with a stable, known service time that
// costs the API server almost no CPU: a dry-run create (nothing stored) of
// a small ConfigMap in a namespace of its own, which a validating admission
// webhook answers after a fixed delay; the request holds its APF seat
// meanwhile.
//
// Its APF width is one seat and nothing more, as long as fewer than 10
// watches (watchesPerSeat) on that instance are interested in the
// ConfigMap: a create is estimated by the mutating work estimator
// (k8s.io/apiserver@v0.37.2 pkg/util/flowcontrol/request/mutating_work_estimator.go),
// InitialSeats 1, and FinalSeats and AdditionalLatency only when
// watchCount >= WatchesPerSeat (10, request/config.go); watchCount
// (watch_tracker.go GetInterestedWatchCount) counts the instance's watches
// of all ConfigMaps, of those in the namespace and of that name. A dry run
// is estimated like any create. The devcluster runs no controller that
// watches ConfigMaps; Level.Seats shows what the API server estimated.
type SlowCreate struct {
	Namespace string
	Delay     time.Duration // the webhook's delay
	Request   Request       // the dry-run create, for Flood
	webhook   *testcluster.AdmissionReceiver
}

// floodName is the ConfigMap every arrival dry-runs: a dry run stores
// nothing, so the same name never conflicts.
const floodName = "apfflood"

// SlowCreates makes namespace, lets users create ConfigMaps in it (RBAC:
// authorization comes after APF, and a 403 would skip the webhook), and
// registers a webhook that delays every ConfigMap create there by delay;
// it waits until every API server instance calls the webhook. Everything
// is deleted when the test ends.
func SlowCreates(t testing.TB, cfg *rest.Config, namespace string, delay time.Duration, users ...string) *SlowCreate {
	t.Helper()
	ctx := context.Background()
	cs := kubernetes.NewForConfigOrDie(cfg)
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("namespace %s: %v", namespace, err)
	}
	t.Cleanup(func() { testcluster.DeleteNamespace(t, cs, namespace) })

	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "apfflood", Namespace: namespace},
		Rules:      []rbacv1.PolicyRule{{Verbs: []string{"create"}, APIGroups: []string{""}, Resources: []string{"configmaps"}}},
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "apfflood", Namespace: namespace},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "apfflood"},
	}
	for _, u := range users {
		binding.Subjects = append(binding.Subjects, rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: u})
	}
	if _, err := cs.RbacV1().Roles(namespace).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The devcluster runs no namespace controller: nothing would delete them.
	t.Cleanup(func() {
		_ = cs.RbacV1().Roles(namespace).Delete(context.Background(), role.Name, metav1.DeleteOptions{})
	})
	if _, err := cs.RbacV1().RoleBindings(namespace).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.RbacV1().RoleBindings(namespace).Delete(context.Background(), binding.Name, metav1.DeleteOptions{})
	})

	s := &SlowCreate{Namespace: namespace, Delay: delay, webhook: testcluster.NewSlowAdmissionReceiver(t, delay)}
	hooks := cs.AdmissionregistrationV1().ValidatingWebhookConfigurations()
	vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "apfflood-" + namespace},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:         "slow.apfflood.clusterdesk.test",
			ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: ptr.To(s.webhook.URL), CABundle: s.webhook.CABundle},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
			}},
			// Only this namespace: no other test's ConfigMaps are slowed.
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: namespace}},
			// None: the API server calls it for dry runs too.
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
			FailurePolicy:           ptr.To(admissionregistrationv1.Fail),
			TimeoutSeconds:          ptr.To[int32](10),
			AdmissionReviewVersions: []string{"v1"},
		}},
	}
	if _, err := hooks.Create(ctx, vwc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = hooks.Delete(context.Background(), vwc.Name, metav1.DeleteOptions{}) })

	body, err := json.Marshal(&corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: floodName, Namespace: namespace},
		Data:       map[string]string{"flood": "apf"},
	})
	if err != nil {
		t.Fatal(err)
	}
	s.Request = Request{
		Method: "POST", Path: "/api/v1/namespaces/" + namespace + "/configmaps?dryRun=All", Body: body,
		Verb: "create", Resource: "configmaps", Namespace: namespace,
	}
	s.waitCalled(t, cfg)
	return s
}

// waitCalled waits until every instance calls the webhook: each reads
// webhook configurations through its own informer. The probes are the
// admin's (exempt from APF) and named apart from the flood's.
func (s *SlowCreate) waitCalled(t testing.TB, cfg *rest.Config) {
	t.Helper()
	ctx := context.Background()
	for _, a := range testcluster.APIServers(t, 1) {
		c := rest.CopyConfig(cfg)
		c.Host = a.Server
		cs := kubernetes.NewForConfigOrDie(c)
		probe := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "probe-" + strings.NewReplacer(".", "-", ":", "-").Replace(Instance(a))}}
		deadline := time.Now().Add(configWait)
		for s.received(probe.Name) == 0 {
			if _, err := cs.CoreV1().ConfigMaps(s.Namespace).Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
				t.Fatalf("dry-run create %s on %s: %v", probe.Name, a.Server, err)
			}
			if s.received(probe.Name) > 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("after %v, API server %s still does not call the admission webhook for ConfigMaps in %s", configWait, a.Server, s.Namespace)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

// Called is how many of the flood's creates the webhook answered: the
// requests APF dispatched (the webhook is called only then).
func (s *SlowCreate) Called() int { return s.received(floodName) }

func (s *SlowCreate) received(name string) int {
	n := 0
	for k, v := range s.webhook.Received() {
		if strings.HasPrefix(k, testcluster.ReceivedKey("CREATE", s.Namespace, name, "")) {
			n += v
		}
	}
	return n
}
