//go:build integration

package handlers

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/clusterdesk/clusterdesk/internal/admission"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
	"github.com/clusterdesk/clusterdesk/internal/urls"
)

// serviceFixtures creates a namespace with Service "idle" (an EndpointSlice
// with no ready endpoint) and "ready" (one ready endpoint); "absent" is not created.
func serviceFixtures(t *testing.T, cs kubernetes.Interface, prefix string) string {
	t.Helper()
	ctx := context.Background()
	ns := strings.ReplaceAll(prefix+strings.ToLower(time.Now().Format("150405.000000")), ".", "")
	mustCreate(t, func() error {
		_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		return err
	})
	t.Cleanup(func() { _ = cs.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
	for svc, ready := range map[string]bool{"idle": false, "ready": true} {
		mustCreate(t, func() error {
			_, err := cs.CoreV1().Services(ns).Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: svc},
				Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 443}}}}, metav1.CreateOptions{})
			return err
		})
		mustCreate(t, func() error {
			_, err := cs.DiscoveryV1().EndpointSlices(ns).Create(ctx, &discoveryv1.EndpointSlice{
				ObjectMeta:  metav1.ObjectMeta{Name: svc + "-x", Labels: map[string]string{discoveryv1.LabelServiceName: svc}},
				AddressType: discoveryv1.AddressTypeIPv4,
				Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(ready)}}},
			}, metav1.CreateOptions{})
			return err
		})
	}
	return ns
}

// TestMutatingWebhookPagesOnTheDevcluster: a MutatingWebhookConfiguration
// created in the cluster reaches the console through its informer, its page
// lints each webhook's real Service, and it offers the editor, with the
// replay of its text (issue 45).
func TestMutatingWebhookPagesOnTheDevcluster(t *testing.T) {
	cfg := testcluster.RestConfig(t, testcluster.Admin)
	cs := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()
	ns := serviceFixtures(t, cs, "insight-mutating-")
	hook := func(name, svc string) admissionregistrationv1.MutatingWebhook {
		return admissionregistrationv1.MutatingWebhook{
			Name: name + ".insight.clusterdesk.dev", AdmissionReviewVersions: []string{"v1"},
			SideEffects: ptr.To(admissionregistrationv1.SideEffectClassNone), FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			ReinvocationPolicy: ptr.To(admissionregistrationv1.IfNeededReinvocationPolicy),
			ClientConfig:       admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{Namespace: ns, Name: svc}},
			// A group nobody serves: this configuration never intercepts anything.
			Rules: []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule: admissionregistrationv1.Rule{APIGroups: []string{"insight.clusterdesk.dev"}, APIVersions: []string{"v1"}, Resources: []string{"nothings"}}}},
		}
	}
	mwc := &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: ns},
		Webhooks: []admissionregistrationv1.MutatingWebhook{hook("missing", "absent"), hook("idle", "idle"), hook("ready", "ready")}}
	mustCreate(t, func() error {
		_, err := cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, mwc, metav1.CreateOptions{})
		return err
	})
	t.Cleanup(func() {
		_ = cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Delete(context.Background(), ns, metav1.DeleteOptions{})
	})

	ls := newLiveServer(t, testcluster.Admin, false, withEditorAs(t, testcluster.Admin))
	sess := ls.login(t)
	doc := ls.pollPage(t, sess, "/mutatingwebhooks/"+ns)
	for name, code := range map[string]string{"missing": admission.CodeServiceMissing, "idle": admission.CodeNoReadyEndpoints, "ready": ""} {
		card := doc.Find(`[data-testid="webhook-` + name + `.insight.clusterdesk.dev"]`)
		if card.Length() != 1 {
			t.Fatalf("%s: no card", name)
		}
		for _, c := range []string{admission.CodeServiceMissing, admission.CodeNoReadyEndpoints} {
			if has := card.Find(`[data-testid="finding-`+c+`"]`).Length() == 1; has != (c == code) {
				t.Errorf("%s: finding %s shown %v", name, c, has)
			}
		}
		if !strings.Contains(card.Text(), "IfNeeded") {
			t.Errorf("%s: reinvocation policy not shown", name)
		}
	}
	// failurePolicy Fail with a missing Service: an error banner at the top.
	if doc.Find(`[data-testid="banner-webhook-errors"]`).Length() != 1 {
		t.Error("no error banner for a Fail webhook whose Service is missing")
	}
	if doc.Find(`[data-testid="edit-links"]`).Length() != 1 {
		t.Error("no edit controls on a MutatingWebhookConfiguration")
	}
	code, ed, _ := ls.get(t, sess, "/mutatingwebhooks/"+ns+"/edit")
	if action, _ := ed.Find(`[data-testid="editor-replay-submit"]`).Attr("formaction"); code != http.StatusOK ||
		!strings.Contains(ed.Find(`[data-testid="editor-yaml"]`).Text(), "kind: MutatingWebhookConfiguration") || action != urls.EditorReplay(kube.MutatingWebhooks, ns) {
		t.Errorf("editor for a MutatingWebhookConfiguration: %d, replay button %q: %.600s", code, action, ed.Find("main").Text())
	}
	_, list, _ := ls.get(t, sess, "/mutatingwebhooks")
	if list.Find(`a[href="/mutatingwebhooks/`+ns+`"]`).Length() == 0 {
		t.Error("the list does not show the configuration")
	}
	// The home page counts the kind like the others.
	_, home, _ := ls.get(t, sess, "/")
	if !strings.Contains(home.Text(), "MutatingWebhookConfigurations") {
		t.Error("the home page does not show MutatingWebhookConfigurations")
	}
}

// TestCRDConversionServiceLookup: a CRD whose conversion webhook calls a
// missing Service gets an error finding; one calling a ready Service says so.
func TestCRDConversionServiceLookup(t *testing.T) {
	cfg := testcluster.RestConfig(t, testcluster.Admin)
	cs := kubernetes.NewForConfigOrDie(cfg)
	ext := apiextensionsclient.NewForConfigOrDie(cfg)
	ctx := context.Background()
	ns := serviceFixtures(t, cs, "insight-conv-")
	schema := &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr.To(true)}}
	crdFor := func(svc string) string {
		group := svc + "." + ns + ".clusterdesk.dev"
		name := "gadgets." + group
		mustCreate(t, func() error {
			_, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, &apiextensionsv1.CustomResourceDefinition{
				ObjectMeta: metav1.ObjectMeta{Name: name},
				Spec: apiextensionsv1.CustomResourceDefinitionSpec{Group: group, Scope: apiextensionsv1.NamespaceScoped,
					Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "gadgets", Singular: "gadget", Kind: "Gadget", ListKind: "GadgetList"},
					Versions: []apiextensionsv1.CustomResourceDefinitionVersion{
						{Name: "v1", Served: true, Storage: true, Schema: schema}, {Name: "v2", Served: true, Schema: schema}},
					Conversion: &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.WebhookConverter,
						Webhook: &apiextensionsv1.WebhookConversion{ConversionReviewVersions: []string{"v1"},
							ClientConfig: &apiextensionsv1.WebhookClientConfig{Service: &apiextensionsv1.ServiceReference{Namespace: ns, Name: svc}}}},
				},
			}, metav1.CreateOptions{})
			return err
		})
		t.Cleanup(func() {
			_ = ext.ApiextensionsV1().CustomResourceDefinitions().Delete(context.Background(), name, metav1.DeleteOptions{})
		})
		return name
	}
	ls := newLiveServer(t, testcluster.Admin, false)
	sess := ls.login(t)
	for _, tc := range []struct{ svc, banner, line string }{
		{"absent", "finding-conversion-" + admission.CodeServiceMissing, "missing"},
		{"idle", "finding-conversion-" + admission.CodeNoReadyEndpoints, "exists, 0 ready endpoints"},
		{"ready", "", "exists, 1 ready endpoint"},
	} {
		t.Run(tc.svc, func(t *testing.T) {
			doc := ls.pollPage(t, sess, "/crds/"+crdFor(tc.svc))
			for _, b := range []string{"finding-conversion-" + admission.CodeServiceMissing, "finding-conversion-" + admission.CodeNoReadyEndpoints} {
				if has := doc.Find(`[data-testid="`+b+`"]`).Length() > 0; has != (b == tc.banner) {
					t.Errorf("banner %s shown %v", b, has)
				}
			}
			// The value, then its hint.
			if got := strings.TrimSpace(doc.Find(`[data-testid="conversion"] [data-testid="field-service"] dd`).First().Text()); !strings.HasPrefix(got, tc.line+"Looked up") {
				t.Errorf("conversion Service shown as %q, want %q", got, tc.line)
			}
		})
	}
}
