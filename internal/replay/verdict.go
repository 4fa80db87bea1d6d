package replay

import (
	"context"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/plugin/policy/matching"

	"github.com/clusterdesk/clusterdesk/internal/celmatch"
)

// Verdict is what one version of the policy, with all its bindings, did
// with one request, and what each binding did (Bindings).
type Verdict struct {
	// Matched: the policy's matchConstraints and a binding's
	// matchResources both matched (matchConditions may still skip it).
	Matched bool
	// Denied: the request is refused (a failed validation under a binding
	// with the Deny action, or a configuration error or an audit
	// annotation's error under failurePolicy Fail). Warned and Audited: a
	// failed validation under a binding with the Warn or Audit action.
	Denied, Warned, Audited bool
	// Message is the first failed decision's message or the error, and
	// Binding the binding it failed under ("" for the policy's own
	// configuration error).
	Message, Binding string
	// Bindings are the verdicts of the bindings that matched (or whose
	// matching or params failed), by name; nil when none did.
	Bindings []BindingVerdict
}

// BindingVerdict is what one binding did with the request: its own
// Matched, Denied, Warned, Audited and Message (its Bindings are nil).
type BindingVerdict struct {
	Name string
	Verdict
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

// Of is the verdict of the binding named name: not matched when it did not
// match.
func (v Verdict) Of(name string) Verdict {
	for _, b := range v.Bindings {
		if b.Name == name {
			return b.Verdict
		}
	}
	return Verdict{}
}

// evaluate decides one version for one request as Dispatch in
// k8s.io/apiserver/pkg/admission/plugin/policy/validating/dispatcher.go
// does for one policy: the policy's matchConstraints once (a matcher error
// is a configuration error of the policy), then each binding, none of which
// stops the others: a binding's matcher or params error is a configuration
// error (addConfigError: denied under failurePolicy Fail, whatever the
// validationActions); each param evaluated (validator.Validate); each failed
// decision (a false validation, or an error under Fail) goes to each of the
// binding's validationActions (a Deny denies the request, whichever binding
// it is; a Warn warns and an Audit annotates for each binding); an audit
// annotation's error under Fail denies. Params are collected per binding
// (CollectParams in .../policy/generic/policy_dispatcher.go, per paramRef).
func (c *compiled) evaluate(ctx context.Context, m *matching.Matcher, memo *paramsMemo, va *admission.VersionedAttributes, req celmatch.Request, ns *corev1.Namespace) Verdict {
	var v Verdict
	fail := c.Policy.Spec.FailurePolicy == nil || *c.Policy.Spec.FailurePolicy == admissionregistrationv1.Fail
	ok, err := c.policyMatches(m, va.Attributes)
	if err != nil {
		v.Matched = true
		if fail {
			v.Denied = true
			v.note("", "failed to configure policy: "+err.Error())
		}
		return v
	}
	if !ok || len(c.bindings) == 0 {
		return v
	}
	// A binding without params evaluates the policy with a nil param:
	// the same CEL on the same request, whichever binding it is, so it is
	// evaluated once and its outcome shared (the cost stays one CEL
	// evaluation per request however many bindings match without params).
	var noParams *celmatch.PolicyOutcome
	for i := range c.bindings {
		b := &c.bindings[i]
		bv := BindingVerdict{Name: b.Name}
		configError := func(err error) {
			bv.Matched = true
			if fail {
				bv.Denied = true
				bv.note(b.Name, "failed to configure binding: "+err.Error())
			}
			v.add(bv)
		}
		ok, err := b.matches(m, va.Attributes)
		if err != nil {
			configError(err)
			continue
		}
		if !ok {
			continue
		}
		bv.Matched = true
		params, err := memo.collect(ctx, c, b, req.Namespace)
		if err != nil {
			configError(err)
			continue
		}
		for _, p := range params {
			var out celmatch.PolicyOutcome
			switch {
			case p != nil:
				out = c.cel.Evaluate(ctx, celmatch.PolicyRequest{Request: req, Params: p, Namespace: ns}, nil)
			case noParams != nil:
				out = *noParams
			default:
				out = c.cel.Evaluate(ctx, celmatch.PolicyRequest{Request: req, Namespace: ns}, nil)
				noParams = &out
			}
			bv.decide(b, out)
		}
		v.add(bv)
	}
	return v
}

// decide applies one evaluation's outcome to the binding's verdict.
func (bv *BindingVerdict) decide(b *compiledBinding, out celmatch.PolicyOutcome) {
	if out.Skipped != "" {
		return
	}
	actions := b.Spec.ValidationActions
	if out.Error != "" {
		// A matchConditions error: validator.Validate's decision for it
		// (policyDecisionActionForError) goes to the actions like a
		// failed validation under Fail, and admits under Ignore.
		if out.ErrorDenies {
			bv.fail(actions, b.Name, out.Error)
		}
		return
	}
	for _, val := range out.Validations {
		if val.Denies {
			bv.fail(actions, b.Name, val.Message)
		}
	}
	for _, a := range out.AuditAnnotations {
		if a.Denies {
			bv.Denied = true
			bv.note(b.Name, a.Error)
		}
	}
}

// add counts one binding's verdict in the policy's: denied if any binding
// denies, warned and audited if any does. The message is the first
// denying binding's, as the API server's refusal names the first denied
// decision, else the first binding's that failed.
func (v *Verdict) add(bv BindingVerdict) {
	if bv.Message != "" && (v.Message == "" || bv.Denied && !v.Denied) {
		v.Message, v.Binding = bv.Message, bv.Binding
	}
	v.Matched = v.Matched || bv.Matched
	v.Denied = v.Denied || bv.Denied
	v.Warned = v.Warned || bv.Warned
	v.Audited = v.Audited || bv.Audited
	v.Bindings = append(v.Bindings, bv)
}

// fail applies one failed decision to the binding's validationActions.
func (v *Verdict) fail(actions []admissionregistrationv1.ValidationAction, binding, message string) {
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
	v.note(binding, message)
}

func (v *Verdict) note(binding, message string) {
	if v.Message == "" {
		v.Message, v.Binding = message, binding
	}
}
