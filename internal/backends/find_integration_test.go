//go:build integration

package backends

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/clusterdesk/clusterdesk/internal/admission"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// TestHooksOnTheDevcluster looks up real Services: one with a ready endpoint,
// one without, one missing; and as the approver, who may not read Services.
func TestHooksOnTheDevcluster(t *testing.T) {
	cs := kubernetes.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin))
	ctx := context.Background()
	ns := fmt.Sprintf("usecase-csr-backends-%d", time.Now().UnixNano())
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
	for svc, ready := range map[string]bool{"idle": false, "ready": true} {
		if _, err := cs.CoreV1().Services(ns).Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: svc},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 443}}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := cs.DiscoveryV1().EndpointSlices(ns).Create(ctx, &discoveryv1.EndpointSlice{
			ObjectMeta:  metav1.ObjectMeta{Name: svc + "-x", Labels: map[string]string{discoveryv1.LabelServiceName: svc}},
			AddressType: discoveryv1.AddressTypeIPv4,
			Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(ready)}}},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var hs []admission.Hook
	for _, svc := range []string{"ready", "idle", "absent"} {
		hs = append(hs, admission.Hook{Name: svc + ".usecase-csr.clusterdesk.dev", ClientConfig: hookConfig(ns, svc)})
	}
	key := func(svc string) admission.BackendKey { return admission.BackendKey{Namespace: ns, Name: svc} }

	got := finderAs(t, testcluster.Admin).Hooks(ctx, hs)
	for svc, want := range map[string]admission.Backend{
		"ready":  {Checked: true, ServiceFound: true, ReadyEndpoints: 1},
		"idle":   {Checked: true, ServiceFound: true},
		"absent": {Checked: true},
	} {
		if got[key(svc)] != want {
			t.Errorf("%s: %+v; want %+v", svc, got[key(svc)], want)
		}
	}

	refused := finderAs(t, testcluster.Approver).Hooks(ctx, hs)
	for _, svc := range []string{"ready", "idle", "absent"} {
		if b := refused[key(svc)]; b.Checked || !strings.HasPrefix(b.Err, "your identity may not read it. The API server said: ") {
			t.Errorf("%s as the approver: %+v; want a refusal naming its cause", svc, b)
		}
	}
}

func finderAs(t *testing.T, identity string) Finder {
	t.Helper()
	l, err := kube.NewLookup(testcluster.RestConfig(t, identity))
	if err != nil {
		t.Fatal(err)
	}
	return Finder{Lookup: l, Cache: NewCache(), Timeout: 5 * time.Second}
}

func hookConfig(ns, svc string) admissionregistrationv1.WebhookClientConfig {
	return admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{Namespace: ns, Name: svc}}
}
