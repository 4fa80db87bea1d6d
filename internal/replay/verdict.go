package replay

import (
	"context"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/plugin/policy/matching"

	"github.com/clusterdesk/clusterdesk/internal/celmatch"
)

// Verdict is what one version of the policy and binding did with one request.
type Verdict struct {
	// Matched: the policy's matchConstraints and the binding's
	// matchResources both matched (matchConditions may still skip it).
	Matched bool
	// Denied: the request is refused (a failed validation with the Deny
	// action, or a configuration error or an audit annotation's error under
	// failurePolicy Fail). Warned and Audited: a failed validation with the
	// Warn or Audit action.
	Denied, Warned, Audited bool
	// Message is the first failed validation's message or the error.
	Message string
}

// State words the verdict: denied, warned, audited, admitted or not matched.
func (v Verdict) State() string {
	switch {
	case v.Denied:
		return "denied"
	case v.Warned:
		return "warned"
	case v.Audited:
		return "audited"
	case v.Matched:
		return "admitted"
	}
	return "not matched"
}

// evaluate decides one version for one request as Dispatch in
// k8s.io/apiserver/pkg/admission/plugin/policy/validating/dispatcher.go does
// for one policy and binding: a matcher or params error is a configuration
// error (addConfigError: denied under failurePolicy Fail, whatever the
// validationActions); each param evaluated (validator.Validate); each failed
// decision (a false validation, or an error under Fail) goes to each
// validationAction; an audit annotation's error under Fail denies.
func (c *compiled) evaluate(ctx context.Context, m *matching.Matcher, memo *paramsMemo, va *admission.VersionedAttributes, req celmatch.Request, ns *corev1.Namespace) Verdict {
	var v Verdict
	fail := c.Policy.Spec.FailurePolicy == nil || *c.Policy.Spec.FailurePolicy == admissionregistrationv1.Fail
	configError := func(err error) Verdict {
		if fail {
			v.Denied, v.Message = true, "failed to configure binding: "+err.Error()
		}
		return v
	}
	ok, err := c.matches(m, va.Attributes)
	if err != nil {
		v.Matched = true
		return configError(err)
	}
	if !ok {
		return v
	}
	v.Matched = true
	params, err := memo.collect(ctx, c, req.Namespace)
	if err != nil {
		return configError(err)
	}
	for _, p := range params {
		out := c.cel.Evaluate(ctx, celmatch.PolicyRequest{Request: req, Params: p, Namespace: ns}, nil)
		if out.Skipped != "" {
			continue
		}
		if out.Error != "" {
			// A matchConditions error: validator.Validate's decision for it
			// (policyDecisionActionForError) goes to the actions like a
			// failed validation under Fail, and admits under Ignore.
			if out.ErrorDenies {
				v.fail(c.Binding.Spec.ValidationActions, out.Error)
			}
			continue
		}
		for _, val := range out.Validations {
			if val.Denies {
				v.fail(c.Binding.Spec.ValidationActions, val.Message)
			}
		}
		for _, a := range out.AuditAnnotations {
			if a.Denies {
				v.Denied = true
				v.note(a.Error)
			}
		}
	}
	return v
}

// fail applies one failed decision to the binding's validationActions.
func (v *Verdict) fail(actions []admissionregistrationv1.ValidationAction, message string) {
	for _, a := range actions {
		switch a {
		case admissionregistrationv1.Deny:
			v.Denied = true
		case admissionregistrationv1.Warn:
			v.Warned = true
		case admissionregistrationv1.Audit:
			v.Audited = true
		}
	}
	v.note(message)
}

func (v *Verdict) note(message string) {
	if v.Message == "" {
		v.Message = message
	}
}
