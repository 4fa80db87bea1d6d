package crd

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/clusterdesk/clusterdesk/internal/admission"
)

// ConversionService names the Service a CRD's conversion webhook calls, or
// nil when it converts with None or calls a URL.
func ConversionService(c *apiextensionsv1.CustomResourceDefinition) *admission.BackendKey {
	cv := c.Spec.Conversion
	if cv == nil || cv.Strategy != apiextensionsv1.WebhookConverter || cv.Webhook == nil || cv.Webhook.ClientConfig == nil || cv.Webhook.ClientConfig.Service == nil {
		return nil
	}
	s := cv.Webhook.ClientConfig.Service
	return &admission.BackendKey{Namespace: s.Namespace, Name: s.Name}
}

// LintConversionBackend judges a conversion webhook's Service from a lookup,
// as the webhook pages do. A conversion webhook has no failure policy: when it
// cannot be reached, every read or write that needs a version other than the
// stored one fails, so a missing Service or no ready endpoint is an error
// (unless the CRD serves a single version, where the API server never converts).
func LintConversionBackend(c *apiextensionsv1.CustomResourceDefinition, b admission.Backend) []admission.Finding {
	key := ConversionService(c)
	if key == nil {
		return nil
	}
	sev := admission.Error
	consequence := "reads and writes in any version but the stored one fail."
	if len(c.Spec.Versions) <= 1 {
		sev, consequence = admission.Info, "the CRD has one version, so the API server never calls it yet."
	}
	name := key.Namespace + "/" + key.Name
	switch {
	case !b.Checked:
		if b.Err == "" {
			return nil
		}
		return []admission.Finding{{Code: admission.CodeBackendUnknown, Severity: admission.Info, Title: "Conversion Service not checked",
			Message: "Could not look up Service " + name + ": " + b.Err}}
	case !b.ServiceFound:
		return []admission.Finding{{Code: admission.CodeServiceMissing, Severity: sev, Title: "Conversion Service missing",
			Message: "Service " + name + " does not exist: " + consequence}}
	case b.ReadyEndpoints == 0 && !b.ExternalName:
		return []admission.Finding{{Code: admission.CodeNoReadyEndpoints, Severity: sev, Title: "Conversion webhook has no ready endpoints",
			Message: "Service " + name + " has no ready endpoints: " + consequence}}
	}
	return nil
}
