package crd

import (
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/clusterdesk/clusterdesk/internal/admission"
)

func conversionCRD(strategy apiextensionsv1.ConversionStrategyType, svc *apiextensionsv1.ServiceReference, url *string, versions int) *apiextensionsv1.CustomResourceDefinition {
	c := &apiextensionsv1.CustomResourceDefinition{}
	for i := 0; i < versions; i++ {
		c.Spec.Versions = append(c.Spec.Versions, apiextensionsv1.CustomResourceDefinitionVersion{Name: []string{"v1", "v2", "v3"}[i]})
	}
	c.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: strategy}
	if strategy == apiextensionsv1.WebhookConverter {
		c.Spec.Conversion.Webhook = &apiextensionsv1.WebhookConversion{ClientConfig: &apiextensionsv1.WebhookClientConfig{Service: svc, URL: url}}
	}
	return c
}

func TestLintConversionBackend(t *testing.T) {
	svc := &apiextensionsv1.ServiceReference{Namespace: "ops", Name: "conv"}
	url := "https://conv.example.com/convert"
	tests := []struct {
		name     string
		crd      *apiextensionsv1.CustomResourceDefinition
		backend  admission.Backend
		wantCode string
		wantSev  admission.Severity
	}{
		{"none strategy", conversionCRD(apiextensionsv1.NoneConverter, nil, nil, 2), admission.Backend{Checked: true}, "", 0},
		{"url target", conversionCRD(apiextensionsv1.WebhookConverter, nil, &url, 2), admission.Backend{Checked: true}, "", 0},
		{"healthy", conversionCRD(apiextensionsv1.WebhookConverter, svc, nil, 2), admission.Backend{Checked: true, ServiceFound: true, ReadyEndpoints: 2}, "", 0},
		{"external name", conversionCRD(apiextensionsv1.WebhookConverter, svc, nil, 2), admission.Backend{Checked: true, ServiceFound: true, ExternalName: true}, "", 0},
		{"missing", conversionCRD(apiextensionsv1.WebhookConverter, svc, nil, 2), admission.Backend{Checked: true}, admission.CodeServiceMissing, admission.Error},
		{"no endpoints", conversionCRD(apiextensionsv1.WebhookConverter, svc, nil, 2), admission.Backend{Checked: true, ServiceFound: true}, admission.CodeNoReadyEndpoints, admission.Error},
		{"one version: never called", conversionCRD(apiextensionsv1.WebhookConverter, svc, nil, 1), admission.Backend{Checked: true}, admission.CodeServiceMissing, admission.Info},
		{"lookup refused", conversionCRD(apiextensionsv1.WebhookConverter, svc, nil, 2), admission.Backend{Err: "forbidden"}, admission.CodeBackendUnknown, admission.Info},
		{"not looked up", conversionCRD(apiextensionsv1.WebhookConverter, svc, nil, 2), admission.Backend{}, "", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fs := LintConversionBackend(tc.crd, tc.backend)
			if tc.wantCode == "" {
				if len(fs) != 0 {
					t.Errorf("findings %+v, want none", fs)
				}
				return
			}
			if len(fs) != 1 || fs[0].Code != tc.wantCode || fs[0].Severity != tc.wantSev {
				t.Errorf("findings %+v, want one %s of severity %v", fs, tc.wantCode, tc.wantSev)
			}
		})
	}
	if k := ConversionService(conversionCRD(apiextensionsv1.WebhookConverter, svc, nil, 2)); k == nil || *k != (admission.BackendKey{Namespace: "ops", Name: "conv"}) {
		t.Errorf("ConversionService = %v", k)
	}
}
