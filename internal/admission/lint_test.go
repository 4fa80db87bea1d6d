package admission

import (
	"slices"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

var now = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

// cleanHook is a webhook nothing should complain about: Fail, but only for
// its own API group, outside kube-system and its own namespace, quick, free of
// side effects, with a valid CA and a Service that has ready endpoints.
func cleanHook(t *testing.T) admissionregistrationv1.ValidatingWebhook {
	return admissionregistrationv1.ValidatingWebhook{
		Name:                    "widgets.example.com",
		FailurePolicy:           ptr.To(admissionregistrationv1.Fail),
		SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
		TimeoutSeconds:          ptr.To[int32](5),
		AdmissionReviewVersions: []string{"v1"},
		NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
			Key: NamespaceNameLabel, Operator: metav1.LabelSelectorOpNotIn, Values: []string{"kube-system", "widgets"},
		}}},
		ClientConfig: admissionregistrationv1.WebhookClientConfig{
			Service:  &admissionregistrationv1.ServiceReference{Namespace: "widgets", Name: "widget-webhook", Path: ptr.To("/validate")},
			CABundle: caPEM(t, "widget-ca", now.Add(-time.Hour), now.Add(365*24*time.Hour)),
		},
		Rules: []admissionregistrationv1.RuleWithOperations{{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
			Rule:       admissionregistrationv1.Rule{APIGroups: []string{"example.com"}, APIVersions: []string{"v1"}, Resources: []string{"widgets"}},
		}},
	}
}

var healthy = Backend{Checked: true, ServiceFound: true, ReadyEndpoints: 2}

func lintOne(t *testing.T, w admissionregistrationv1.ValidatingWebhook, annotations map[string]string, b Backend) []Finding {
	t.Helper()
	cfg := FromValidating(&admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "test", Annotations: annotations},
		Webhooks:   []admissionregistrationv1.ValidatingWebhook{w},
	})
	h := cfg.Hooks[0]
	return append(Lint(cfg, h, now), LintBackend(h, b)...)
}

func codes(fs []Finding) []string {
	out := make([]string, 0, len(fs))
	for _, f := range fs {
		out = append(out, f.Code+"/"+f.Severity.String())
	}
	slices.Sort(out)
	return out
}

func TestCleanWebhookIsQuiet(t *testing.T) {
	if fs := lintOne(t, cleanHook(t), nil, healthy); len(fs) != 0 {
		t.Fatalf("clean webhook has findings: %+v", fs)
	}
	// A URL target with a publicly trusted certificate needs no caBundle.
	w := cleanHook(t)
	w.ClientConfig = admissionregistrationv1.WebhookClientConfig{URL: ptr.To("https://hooks.example.com/validate")}
	if fs := lintOne(t, w, nil, Backend{}); len(fs) != 0 {
		t.Fatalf("clean URL webhook has findings: %+v", fs)
	}
}

func TestLintsFireOnBadConfigurations(t *testing.T) {
	cases := []struct {
		name        string
		change      func(*admissionregistrationv1.ValidatingWebhook)
		annotations map[string]string
		backend     Backend
		want        []string
	}{
		{name: "fail without namespace selector reaches kube-system and its own namespace",
			change: func(w *admissionregistrationv1.ValidatingWebhook) { w.NamespaceSelector = nil },
			want:   []string{"fail-kube-system/warning", "fail-own-namespace/warning"}},
		{name: "defaulted failure policy is Fail; core group makes it an error",
			change: func(w *admissionregistrationv1.ValidatingWebhook) {
				w.FailurePolicy = nil
				w.NamespaceSelector = &metav1.LabelSelector{}
				w.Rules[0].APIGroups = []string{""}
				w.Rules[0].Resources = []string{"configmaps"}
			},
			want: []string{"fail-kube-system/error", "fail-own-namespace/error"}},
		{name: "selector excluding only kube-system still reaches its own namespace",
			change: func(w *admissionregistrationv1.ValidatingWebhook) {
				w.NamespaceSelector.MatchExpressions[0].Values = []string{"kube-system"}
			},
			want: []string{"fail-own-namespace/warning"}},
		{name: "match conditions are mentioned but not evaluated",
			change: func(w *admissionregistrationv1.ValidatingWebhook) {
				w.NamespaceSelector = nil
				w.MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "x", Expression: "true"}}
			},
			want: []string{"fail-kube-system/warning", "fail-own-namespace/warning"}},
		{name: "Ignore policy does not trip the fail lints",
			change: func(w *admissionregistrationv1.ValidatingWebhook) {
				w.NamespaceSelector = nil
				w.FailurePolicy = ptr.To(admissionregistrationv1.Ignore)
			}},
		{name: "object selector that needs a label makes it opt-in",
			change: func(w *admissionregistrationv1.ValidatingWebhook) {
				w.NamespaceSelector = nil
				w.ObjectSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"example.com/validate": "true"}}
			}},
		{name: "cluster-scoped rules are not about namespaces",
			change: func(w *admissionregistrationv1.ValidatingWebhook) {
				w.NamespaceSelector = nil
				w.Rules[0].Scope = ptr.To(admissionregistrationv1.ClusterScope)
			}},
		{name: "wildcard resources",
			change: func(w *admissionregistrationv1.ValidatingWebhook) { w.Rules[0].Resources = []string{"*"} },
			want:   []string{"wildcard-resources/warning"}},
		{name: "all groups and resources covers pods, nodes, namespaces and leases",
			change: func(w *admissionregistrationv1.ValidatingWebhook) {
				w.Rules[0].APIGroups = []string{"*"}
				w.Rules[0].Resources = []string{"*/*"}
			},
			want: []string{"sensitive-resources/error", "wildcard-resources/warning"}},
		{name: "pods with Ignore is a warning",
			change: func(w *admissionregistrationv1.ValidatingWebhook) {
				w.FailurePolicy = ptr.To(admissionregistrationv1.Ignore)
				w.Rules[0].APIGroups = []string{""}
				w.Rules[0].Resources = []string{"pods", "pods/exec"}
			},
			want: []string{"sensitive-resources/warning"}},
		{name: "pods with Fail in opted-in namespaces only is a warning",
			change: func(w *admissionregistrationv1.ValidatingWebhook) {
				w.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"inject": "enabled"}}
				w.Rules[0].APIGroups = []string{""}
				w.Rules[0].Resources = []string{"pods"}
			},
			want: []string{"sensitive-resources/warning"}},
		{name: "leases",
			change: func(w *admissionregistrationv1.ValidatingWebhook) {
				w.Rules[0].APIGroups = []string{"coordination.k8s.io"}
				w.Rules[0].Resources = []string{"leases"}
			},
			want: []string{"sensitive-resources/error"}},
		{name: "nodes status via */status",
			change: func(w *admissionregistrationv1.ValidatingWebhook) {
				w.Rules[0].APIGroups = []string{""}
				w.Rules[0].Resources = []string{"*/status"}
				w.Rules[0].Scope = ptr.To(admissionregistrationv1.ClusterScope)
			},
			want: []string{"sensitive-resources/error", "wildcard-resources/warning"}},
		{name: "webhook configurations are exempt",
			change: func(w *admissionregistrationv1.ValidatingWebhook) {
				w.Rules[0].APIGroups = []string{"admissionregistration.k8s.io"}
				w.Rules[0].Resources = []string{"validatingwebhookconfigurations", "mutatingwebhookconfigurations"}
				w.Rules[0].Scope = ptr.To(admissionregistrationv1.ClusterScope)
			},
			want: []string{"exempt-resources/info"}},
		{name: "timeout above 10",
			change: func(w *admissionregistrationv1.ValidatingWebhook) { w.TimeoutSeconds = ptr.To[int32](30) },
			want:   []string{"timeout/warning"}},
		{name: "timeout of exactly 10 is fine",
			change: func(w *admissionregistrationv1.ValidatingWebhook) { w.TimeoutSeconds = ptr.To[int32](10) }},
		{name: "side effects Some",
			change: func(w *admissionregistrationv1.ValidatingWebhook) {
				w.SideEffects = ptr.To(admissionregistrationv1.SideEffectClassSome)
			},
			want: []string{"side-effects/error"}},
		{name: "side effects Unknown",
			change: func(w *admissionregistrationv1.ValidatingWebhook) {
				w.SideEffects = ptr.To(admissionregistrationv1.SideEffectClassUnknown)
			},
			want: []string{"side-effects/error"}},
		{name: "side effects unset",
			change: func(w *admissionregistrationv1.ValidatingWebhook) { w.SideEffects = nil },
			want:   []string{"side-effects/error"}},
		{name: "NoneOnDryRun is fine",
			change: func(w *admissionregistrationv1.ValidatingWebhook) {
				w.SideEffects = ptr.To(admissionregistrationv1.SideEffectClassNoneOnDryRun)
			}},
		{name: "caBundle not PEM",
			change: func(w *admissionregistrationv1.ValidatingWebhook) {
				w.ClientConfig.CABundle = []byte("not a certificate")
			},
			want: []string{"ca-bundle-invalid/error"}},
		{name: "caBundle with a private key",
			change: func(w *admissionregistrationv1.ValidatingWebhook) {
				w.ClientConfig.CABundle = []byte("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")
			},
			want: []string{"ca-bundle-invalid/error"}},
		{name: "caBundle with a corrupt certificate",
			change: func(w *admissionregistrationv1.ValidatingWebhook) {
				w.ClientConfig.CABundle = []byte("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n")
			},
			want: []string{"ca-bundle-invalid/error"}},
		{name: "CA expired",
			change: func(w *admissionregistrationv1.ValidatingWebhook) {
				w.ClientConfig.CABundle = caPEM(t, "old", now.Add(-400*24*time.Hour), now.Add(-time.Hour))
			},
			want: []string{"ca-expired/error"}},
		{name: "CA expiring in 29 days, beside a good one",
			change: func(w *admissionregistrationv1.ValidatingWebhook) {
				w.ClientConfig.CABundle = append(caPEM(t, "good", now.Add(-time.Hour), now.Add(90*24*time.Hour)),
					caPEM(t, "soon", now.Add(-time.Hour), now.Add(29*24*time.Hour))...)
			},
			want: []string{"ca-expiring/warning"}},
		{name: "CA not yet valid",
			change: func(w *admissionregistrationv1.ValidatingWebhook) {
				w.ClientConfig.CABundle = caPEM(t, "future", now.Add(time.Hour), now.Add(90*24*time.Hour))
			},
			want: []string{"ca-not-yet-valid/warning"}},
		{name: "caBundle empty for a Service",
			change: func(w *admissionregistrationv1.ValidatingWebhook) { w.ClientConfig.CABundle = nil },
			want:   []string{"ca-bundle-empty/warning"}},
		{name: "caBundle empty but injected by cert-manager",
			change:      func(w *admissionregistrationv1.ValidatingWebhook) { w.ClientConfig.CABundle = nil },
			annotations: map[string]string{"cert-manager.io/inject-ca-from-secret": "cert-manager/ca"},
			want:        []string{"ca-bundle-empty/info"}},
		{name: "URL over http",
			change: func(w *admissionregistrationv1.ValidatingWebhook) {
				w.ClientConfig.Service = nil
				w.ClientConfig.URL = ptr.To("http://10.0.0.1:8443/validate")
			},
			want: []string{"url-not-https/error"}},
		{name: "Service missing with Fail",
			backend: Backend{Checked: true},
			want:    []string{"service-missing/error"}},
		{name: "Service missing with Ignore",
			change: func(w *admissionregistrationv1.ValidatingWebhook) {
				w.FailurePolicy = ptr.To(admissionregistrationv1.Ignore)
			},
			backend: Backend{Checked: true},
			want:    []string{"service-missing/warning"}},
		{name: "no ready endpoints",
			backend: Backend{Checked: true, ServiceFound: true},
			want:    []string{"no-ready-endpoints/error"}},
		{name: "lookup failed",
			backend: Backend{Err: "forbidden"},
			want:    []string{"backend-unknown/info"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := cleanHook(t)
			if tc.change != nil {
				tc.change(&w)
			}
			b := healthy
			if tc.backend != (Backend{}) {
				b = tc.backend
			}
			fs := lintOne(t, w, tc.annotations, b)
			want := slices.Clone(tc.want)
			slices.Sort(want)
			if got := codes(fs); !slices.Equal(got, want) {
				t.Errorf("findings %v, want %v", got, want)
			}
			for _, f := range fs {
				if f.Title == "" || f.Message == "" {
					t.Errorf("finding %s lacks a title or message", f.Code)
				}
			}
		})
	}
}

func TestSummaryFillsDefaults(t *testing.T) {
	w := cleanHook(t)
	w.FailurePolicy, w.TimeoutSeconds, w.MatchPolicy = nil, nil, nil
	w.Rules[0].APIGroups = []string{"", "apps"}
	w.ClientConfig.Service.Port = ptr.To[int32](8443)
	s := Summarize(FromValidating(&admissionregistrationv1.ValidatingWebhookConfiguration{
		Webhooks: []admissionregistrationv1.ValidatingWebhook{w}}).Hooks[0])
	checks := map[string][2]string{
		"failure":   {s.FailurePolicy, "Fail (default)"},
		"match":     {s.MatchPolicy, "Equivalent"},
		"timeout":   {s.Timeout, "10s (default)"},
		"target":    {s.Target, "service widgets/widget-webhook:8443/validate"},
		"groups":    {s.Rules[0].Groups, "core, apps"},
		"scope":     {s.Rules[0].Scope, "*"},
		"objects":   {s.ObjectSelector, "everything"},
		"ns":        {s.NamespaceSelector, "kubernetes.io/metadata.name notin (kube-system,widgets)"},
		"side":      {s.SideEffects, "None"},
		"ops":       {s.Rules[0].Operations, "CREATE, UPDATE"},
		"reviews":   {s.ReviewVersions, "v1"},
		"reinvoked": {s.Reinvocation, ""},
	}
	for name, c := range checks {
		if c[0] != c[1] {
			t.Errorf("%s = %q, want %q", name, c[0], c[1])
		}
	}
	m := FromMutating(&admissionregistrationv1.MutatingWebhookConfiguration{
		Webhooks: []admissionregistrationv1.MutatingWebhook{{Name: "m", ClientConfig: w.ClientConfig}}})
	if got := Summarize(m.Hooks[0]).Reinvocation; got != "Never" {
		t.Errorf("mutating reinvocation default = %q, want Never", got)
	}
}
