package replay

import (
	"context"

	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/predicates/namespace"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/predicates/object"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/predicates/rules"

	"github.com/clusterdesk/clusterdesk/internal/ledger"
)

// Sending is what one webhook does with one request.
type Sending int

// The sendings.
const (
	NotSent Sending = iota
	Sent
	// Refused: the request fails before the webhook is called (a
	// matchCondition error under failurePolicy Fail, a selector error, a
	// dry run the webhook's sideEffects do not allow).
	Refused
)

// predicates are the API server's webhook predicates over today's
// namespaces. The namespace matcher's client is only asked when the lister
// answers NotFound, which namespaces never does.
type predicates struct {
	ns  *namespace.Matcher
	obj *object.Matcher
}

func newPredicates(ns namespaces) predicates {
	return predicates{ns: &namespace.Matcher{NamespaceLister: ns}, obj: &object.Matcher{}}
}

// decide tells whether h is called for the request, in the order and with
// the predicates of ShouldCallHook in
// k8s.io/apiserver/pkg/admission/plugin/webhook/generic/webhook.go: the
// namespaceSelector (.../predicates/namespace/matcher.go, today's labels)
// and the objectSelector on the object and the old object
// (.../predicates/object/matcher.go), each error held until a rule matches;
// the rules (.../predicates/rules/rules.go: operations, groups, versions,
// resources with subresources, scope); the matchConditions
// (.../webhook/matchconditions/matcher.go: an error fails the request under
// Fail and skips the webhook under Ignore). matchPolicy Equivalent is
// approximated: the replay knows no equivalent resources, so a rule meets
// the resource and version the request was sent as only. Then callHook's
// dry-run check (.../webhook/validating/dispatcher.go). why is the error of
// a Refused.
func (h *hook) decide(ctx context.Context, p predicates, va *admission.VersionedAttributes) (s Sending, why string) {
	attr := va.Attributes
	nsOK, nsErr := p.ns.MatchNamespaceSelector(h, attr)
	if !nsOK && nsErr == nil {
		return NotSent, ""
	}
	objOK, objErr := p.obj.MatchObjectSelector(h, attr)
	if !objOK && objErr == nil {
		return NotSent, ""
	}
	matched := false
	for _, r := range h.rules {
		if (&rules.Matcher{Rule: r, Attr: attr}).Matches() {
			matched = true
			break
		}
	}
	switch {
	case !matched:
		return NotSent, ""
	case nsErr != nil:
		return Refused, nsErr.Error()
	case objErr != nil:
		return Refused, objErr.Error()
	}
	if h.conditions != nil {
		m := h.conditions.Match(ctx, va, nil, nil)
		if m.Error != nil {
			return Refused, "matchConditions: " + m.Error.Error()
		}
		if !m.Matches {
			return NotSent, ""
		}
	}
	if attr.IsDryRun() && !h.dryRunSafe {
		return Refused, "a dry run, and the webhook's sideEffects are not None or NoneOnDryRun"
	}
	return Sent, ""
}

// exempt tells whether no webhook of the API is called for w: writes of
// webhook configurations and admission policies
// (rules.IsExemptAdmissionConfigurationResource, asked in Dispatch in
// .../webhook/generic/webhook.go). It asks the object's kind; a delete
// whose object was not recorded has none, so the resource answers too.
func exempt(w *ledger.Write, attr admission.Attributes) bool {
	if rules.IsExemptAdmissionConfigurationResource(attr) {
		return true
	}
	if w.APIGroup != "admissionregistration.k8s.io" {
		return false
	}
	switch w.Resource {
	case "validatingwebhookconfigurations", "mutatingwebhookconfigurations", "validatingadmissionpolicies",
		"validatingadmissionpolicybindings", "mutatingadmissionpolicies", "mutatingadmissionpolicybindings":
		return true
	}
	return false
}
