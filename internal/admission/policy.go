package admission

import (
	"fmt"
	"slices"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
)

// MatchResources reports whether a ValidatingAdmissionPolicy's
// matchConstraints or a binding's matchResources match req, following
// Matcher.Matches in
// k8s.io/apiserver/pkg/admission/plugin/policy/matching/matching.go:
// namespaceSelector and objectSelector as for webhooks, then
// excludeResourceRules, then resourceRules (none: everything; with
// resourceNames, the object's name must be one of them), then, under
// matchPolicy Equivalent (the API default), the equivalent resources. It
// returns the resource matched (an equivalent one, else req.Resource) and the
// reasons in the order of the checks. A nil mr (a binding without
// matchResources) matches everything the policy matches.
func MatchResources(what string, mr *admissionregistrationv1.MatchResources, req Request, equivalents []GVR) (bool, GVR, []string) {
	if mr == nil {
		return true, req.Resource, []string{what + " has no matchResources: everything the policy matches."}
	}
	h := Hook{NamespaceSelector: mr.NamespaceSelector, ObjectSelector: mr.ObjectSelector}
	var reasons []string
	for _, check := range []func(Hook, Request) (bool, string){namespaceMatches, objectMatches} {
		ok, why := check(h, req)
		if why != "" {
			reasons = append(reasons, what+": "+why)
		}
		if !ok {
			return false, GVR{}, reasons
		}
	}
	equivalent := mr.MatchPolicy == nil || *mr.MatchPolicy == admissionregistrationv1.Equivalent
	if i, _, ok := namedRuleMatches(mr.ExcludeResourceRules, req, equivalents, equivalent); ok {
		return false, GVR{}, append(reasons, fmt.Sprintf("%s: excludeResourceRules %d excludes %s.", what, i+1, describe(req)))
	}
	if len(mr.ResourceRules) == 0 {
		return true, req.Resource, append(reasons, what+" has no resourceRules: every resource.")
	}
	i, via, ok := namedRuleMatches(mr.ResourceRules, req, equivalents, equivalent)
	switch {
	case !ok:
		return false, GVR{}, append(reasons, fmt.Sprintf("%s: no resourceRule matches %s.", what, describe(req)))
	case via != req.Resource:
		return true, via, append(reasons, fmt.Sprintf("%s: resourceRule %d matches the equivalent %s (matchPolicy Equivalent).", what, i+1, via))
	}
	return true, via, append(reasons, fmt.Sprintf("%s: resourceRule %d matches %s.", what, i+1, describe(req)))
}

// namedRuleMatches is matchesResourceRules in matching.go: the rules against
// the resource asked, then (equivalent) against each equivalent resource.
func namedRuleMatches(rules []admissionregistrationv1.NamedRuleWithOperations, req Request, equivalents []GVR, equivalent bool) (int, GVR, bool) {
	named := func(r admissionregistrationv1.NamedRuleWithOperations) bool {
		return len(r.ResourceNames) == 0 || slices.Contains(r.ResourceNames, req.Name)
	}
	for i, r := range rules {
		if ruleMatches(r.RuleWithOperations, req, req.Resource) && named(r) {
			return i, req.Resource, true
		}
	}
	if !equivalent {
		return 0, GVR{}, false
	}
	for i, r := range rules {
		for _, eq := range equivalents {
			if eq != req.Resource && ruleMatches(r.RuleWithOperations, req, eq) && named(r) {
				return i, eq, true
			}
		}
	}
	return 0, GVR{}, false
}
