// Package admission explains admission webhook configurations: a summary of
// each webhook with the API server's defaults filled in, and safety lints
// that say what can go wrong before it does. It is pure: lookups of Services
// and EndpointSlices are done by the caller and passed in as Backend. Its one
// state is a bounded memo of the list pages' lint tallies per object version
// (tally_memo.go), kept here beside the caBundle parsing it spares.
package admission

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Kind tells validating from mutating webhooks.
type Kind string

// The two kinds of admission webhook configuration.
const (
	Validating Kind = "Validating"
	Mutating   Kind = "Mutating"
)

// DefaultTimeoutSeconds is admissionregistration/v1's default timeoutSeconds.
const DefaultTimeoutSeconds = 10

// Config is one webhook configuration, validating or mutating.
type Config struct {
	Kind        Kind
	Name        string
	Annotations map[string]string
	Hooks       []Hook
}

// Hook is one webhook of a configuration with the API server's defaults
// applied (failurePolicy Fail, matchPolicy Equivalent, timeoutSeconds 10),
// so both kinds are explained by the same code.
type Hook struct {
	Name                    string
	ClientConfig            admissionregistrationv1.WebhookClientConfig
	Rules                   []admissionregistrationv1.RuleWithOperations
	FailurePolicy           admissionregistrationv1.FailurePolicyType
	FailurePolicyDefaulted  bool
	MatchPolicy             admissionregistrationv1.MatchPolicyType
	NamespaceSelector       *metav1.LabelSelector
	ObjectSelector          *metav1.LabelSelector
	SideEffects             *admissionregistrationv1.SideEffectClass // nil when unset
	TimeoutSeconds          int32
	TimeoutDefaulted        bool
	AdmissionReviewVersions []string
	MatchConditions         []admissionregistrationv1.MatchCondition
	ReinvocationPolicy      string // mutating only; "" for validating
}

// FromValidating converts a ValidatingWebhookConfiguration.
func FromValidating(c *admissionregistrationv1.ValidatingWebhookConfiguration) Config {
	out := Config{Kind: Validating, Name: c.Name, Annotations: c.Annotations}
	for _, w := range c.Webhooks {
		out.Hooks = append(out.Hooks, newHook(w.Name, w.ClientConfig, w.Rules, w.FailurePolicy, w.MatchPolicy,
			w.NamespaceSelector, w.ObjectSelector, w.SideEffects, w.TimeoutSeconds, w.AdmissionReviewVersions, w.MatchConditions))
	}
	return out
}

// FromMutating converts a MutatingWebhookConfiguration.
func FromMutating(c *admissionregistrationv1.MutatingWebhookConfiguration) Config {
	out := Config{Kind: Mutating, Name: c.Name, Annotations: c.Annotations}
	for _, w := range c.Webhooks {
		h := newHook(w.Name, w.ClientConfig, w.Rules, w.FailurePolicy, w.MatchPolicy,
			w.NamespaceSelector, w.ObjectSelector, w.SideEffects, w.TimeoutSeconds, w.AdmissionReviewVersions, w.MatchConditions)
		h.ReinvocationPolicy = string(admissionregistrationv1.NeverReinvocationPolicy)
		if w.ReinvocationPolicy != nil {
			h.ReinvocationPolicy = string(*w.ReinvocationPolicy)
		}
		out.Hooks = append(out.Hooks, h)
	}
	return out
}

func newHook(name string, cc admissionregistrationv1.WebhookClientConfig, rules []admissionregistrationv1.RuleWithOperations,
	fp *admissionregistrationv1.FailurePolicyType, mp *admissionregistrationv1.MatchPolicyType,
	nsSel, objSel *metav1.LabelSelector, side *admissionregistrationv1.SideEffectClass, timeout *int32,
	reviews []string, conds []admissionregistrationv1.MatchCondition) Hook {
	h := Hook{
		Name: name, ClientConfig: cc, Rules: rules,
		FailurePolicy: admissionregistrationv1.Fail, FailurePolicyDefaulted: fp == nil,
		MatchPolicy:       admissionregistrationv1.Equivalent,
		NamespaceSelector: nsSel, ObjectSelector: objSel, SideEffects: side,
		TimeoutSeconds: DefaultTimeoutSeconds, TimeoutDefaulted: timeout == nil,
		AdmissionReviewVersions: reviews, MatchConditions: conds,
	}
	if fp != nil {
		h.FailurePolicy = *fp
	}
	if mp != nil {
		h.MatchPolicy = *mp
	}
	if timeout != nil {
		h.TimeoutSeconds = *timeout
	}
	return h
}

// ServiceRef names the Service a webhook calls, or is nil for a URL target.
func (h Hook) ServiceRef() *admissionregistrationv1.ServiceReference {
	return h.ClientConfig.Service
}
