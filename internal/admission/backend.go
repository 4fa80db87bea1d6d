package admission

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
)

// Backend is what a lookup found about the Service a webhook calls.
type Backend struct {
	Checked        bool   // false: not looked up (URL target, no access, or the lookup failed)
	Err            string // why it was not checked, when it was tried
	ServiceFound   bool
	ExternalName   bool // an ExternalName Service has no endpoints to count
	ReadyEndpoints int  // ready endpoints over the Service's EndpointSlices
}

// BackendKey identifies a Service for lookups shared by several webhooks.
type BackendKey struct{ Namespace, Name string }

// LintBackend judges a webhook's Service from a lookup. With failurePolicy
// Fail an unreachable webhook rejects what it matches; with Ignore it lets
// everything through unchecked, so the severity follows the policy.
func LintBackend(h Hook, b Backend) []Finding {
	s := h.ServiceRef()
	if s == nil {
		return nil
	}
	sev := Warning
	consequence := "every call fails and matching requests pass unchecked (failurePolicy Ignore)."
	if h.FailurePolicy == admissionregistrationv1.Fail {
		sev, consequence = Error, "every call fails and matching requests are rejected (failurePolicy Fail)."
	}
	name := s.Namespace + "/" + s.Name
	switch {
	case !b.Checked:
		if b.Err == "" {
			return nil
		}
		return []Finding{{CodeBackendUnknown, Info, "Service not checked", "Could not look up Service " + name + ": " + b.Err}}
	case !b.ServiceFound:
		return []Finding{{CodeServiceMissing, sev, "Service missing", "Service " + name + " does not exist: " + consequence}}
	case b.ReadyEndpoints == 0 && !b.ExternalName:
		return []Finding{{CodeNoReadyEndpoints, sev, "No ready endpoints", "Service " + name + " has no ready endpoints: " + consequence}}
	}
	return nil
}
