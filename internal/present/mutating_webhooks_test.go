package present

import (
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/clusterdesk/clusterdesk/internal/admission"
	"github.com/clusterdesk/clusterdesk/views/model"
)

func mutatingConfig() *admissionregistrationv1.MutatingWebhookConfiguration {
	ignore := admissionregistrationv1.Ignore
	ifNeeded := admissionregistrationv1.IfNeededReinvocationPolicy
	none := admissionregistrationv1.SideEffectClassNone
	return &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "injector", CreationTimestamp: metav1.NewTime(time.Unix(1700000000, 0))},
		Webhooks: []admissionregistrationv1.MutatingWebhook{
			{Name: "a.example.com", SideEffects: &none, ClientConfig: admissionregistrationv1.WebhookClientConfig{
				Service: &admissionregistrationv1.ServiceReference{Namespace: "inject", Name: "svc"}}},
			{Name: "b.example.com", FailurePolicy: &ignore, ReinvocationPolicy: &ifNeeded, SideEffects: &none,
				ClientConfig: admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{Namespace: "inject", Name: "svc"}}},
		},
	}
}

func TestMutatingWebhookList(t *testing.T) {
	p := MutatingWebhookList([]*admissionregistrationv1.MutatingWebhookConfiguration{mutatingConfig()}, ListQuery{}, time.Unix(1700003600, 0))
	if p.KindID != "mutatingwebhooks" || len(p.Rows) != 1 {
		t.Fatalf("list %+v", p)
	}
	r := p.Rows[0]
	if r.Href != "/mutatingwebhooks/injector" {
		t.Errorf("href %q", r.Href)
	}
	// An unset failurePolicy is Fail (the API server's default).
	if got := r.Cells[2].Text; got != "Fail ×1, Ignore ×1" || len(r.Cells[2].Badges) != 1 {
		t.Errorf("failure policies cell %+v", r.Cells[2])
	}
}

func TestMutatingWebhookDetail(t *testing.T) {
	key := admission.BackendKey{Namespace: "inject", Name: "svc"}
	for _, tc := range []struct {
		name       string
		backends   WebhookBackends
		wantErrors bool
		wantText   string
	}{
		{"service missing", WebhookBackends{key: {Checked: true}}, true, "missing"},
		{"healthy", WebhookBackends{key: {Checked: true, ServiceFound: true, ReadyEndpoints: 1}}, false, "exists, 1 ready endpoint"},
		{"not looked up", nil, false, "not looked up"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := MutatingWebhookDetail(mutatingConfig(), tc.backends, time.Unix(1700003600, 0))
			if p.KindID != "mutatingwebhooks" || p.Name != "injector" {
				t.Fatalf("page %s/%s", p.KindID, p.Name)
			}
			errs := false
			for _, b := range p.Problems {
				errs = errs || b.Tone == model.ToneError
			}
			if errs != tc.wantErrors {
				t.Errorf("error banner %v, want %v (%+v)", errs, tc.wantErrors, p.Problems)
			}
			var reinvocation, service []string
			for _, in := range p.Insights {
				for _, card := range in.Cards {
					for _, f := range card.Fields {
						switch f.Label {
						case "Reinvocation policy":
							reinvocation = append(reinvocation, f.Value.Text)
						case "Service":
							service = append(service, f.Value.Text)
						}
					}
				}
			}
			if strings.Join(reinvocation, ",") != "Never,IfNeeded" {
				t.Errorf("reinvocation policies %v, want Never,IfNeeded", reinvocation)
			}
			if len(service) != 2 || service[0] != tc.wantText {
				t.Errorf("service lines %v, want %q", service, tc.wantText)
			}
		})
	}
}

func TestAddConversionBackend(t *testing.T) {
	c := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com", Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: "Widget", Plural: "widgets"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true}, {Name: "v2", Served: true, Storage: true}},
			Conversion: &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.WebhookConverter,
				Webhook: &apiextensionsv1.WebhookConversion{ConversionReviewVersions: []string{"v1"},
					ClientConfig: &apiextensionsv1.WebhookClientConfig{Service: &apiextensionsv1.ServiceReference{Namespace: "conv", Name: "widgets"}}}},
		},
	}
	for _, tc := range []struct {
		name    string
		backend admission.Backend
		line    string
		banner  string
	}{
		{"missing", admission.Backend{Checked: true}, "missing", "finding-conversion-" + admission.CodeServiceMissing},
		{"no endpoints", admission.Backend{Checked: true, ServiceFound: true}, "exists, 0 ready endpoints", "finding-conversion-" + admission.CodeNoReadyEndpoints},
		{"healthy", admission.Backend{Checked: true, ServiceFound: true, ReadyEndpoints: 3}, "exists, 3 ready endpoints", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := CRDDetail(c, time.Now())
			AddConversionBackend(&p, c, tc.backend)
			var line string
			for _, in := range p.Insights {
				if in.TestID == "conversion" {
					for _, f := range in.Fields {
						if f.Label == "Service" {
							line = f.Value.Text
						}
					}
				}
			}
			if line != tc.line {
				t.Errorf("Service line %q, want %q", line, tc.line)
			}
			found := ""
			for _, b := range p.Problems {
				if strings.HasPrefix(b.TestID, "finding-conversion-") {
					found = b.TestID
				}
			}
			if found != tc.banner {
				t.Errorf("banner %q, want %q", found, tc.banner)
			}
		})
	}
	// No conversion Service: the page is left alone.
	plain := c.DeepCopy()
	plain.Spec.Conversion = nil
	p := CRDDetail(plain, time.Now())
	before := len(p.Problems)
	AddConversionBackend(&p, plain, admission.Backend{Checked: true})
	if len(p.Problems) != before {
		t.Error("a CRD without a conversion webhook got a finding")
	}
}
