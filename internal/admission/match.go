package admission

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// GVR names a resource in one group version.
type GVR struct {
	Group, Version, Resource string
}

func (g GVR) String() string {
	if g.Group == "" {
		return "core/" + g.Version + " " + g.Resource
	}
	return g.Group + "/" + g.Version + " " + g.Resource
}

// Request is an API request as the API server's webhook dispatcher sees it.
type Request struct {
	Operation   admissionregistrationv1.OperationType // CREATE, UPDATE, DELETE or CONNECT
	Resource    GVR
	Subresource string
	// Namespace is the request's namespace; for a Namespace object itself it
	// is the namespace's own name. "" for other cluster-scoped objects.
	Namespace       string
	NamespaceLabels map[string]string // the namespace's labels (for a Namespace object: its own)
	ObjectLabels    map[string]string // the object's labels (for UPDATE: new or old may match)
	OldObjectLabels map[string]string // UPDATE and DELETE: the stored object's labels
	// Name is the object's name (resourceNames of policy rules); "" unknown.
	Name string
}

// namespacesGVR is the Namespace resource, which the dispatcher treats as
// cluster-scoped although the request carries the namespace's own name.
var namespacesGVR = GVR{"", "v1", "namespaces"}

// Verdict says whether one webhook would be called for a request, and why.
type Verdict struct {
	Kind            Kind // Mutating or Validating
	Config          string
	Webhook         string
	Called          bool
	Via             *GVR     // matched through this equivalent resource (matchPolicy Equivalent)
	Reasons         []string // the checks in the order the API server makes them
	MatchConditions int      // CEL conditions the API server evaluates as well; not evaluated here
}

// Intercepts evaluates every webhook of configs for req, in the order the API
// server considers them: the mutating admission plugin runs before the
// validating one, and each takes its configurations by name, webhooks in their
// order (mutating ones one after another, validating ones in parallel).
// equivalents are the resources the API server treats as the same as
// req.Resource (other served versions of it, from discovery), for
// matchPolicy Equivalent.
func Intercepts(configs []Config, req Request, equivalents []GVR) []Verdict {
	sorted := slices.Clone(configs)
	sort.SliceStable(sorted, func(i, j int) bool {
		if mi, mj := sorted[i].Kind == Mutating, sorted[j].Kind == Mutating; mi != mj {
			return mi
		}
		return sorted[i].Name < sorted[j].Name
	})
	var out []Verdict
	for _, c := range sorted {
		for _, h := range c.Hooks {
			v := evaluate(h, req, equivalents)
			v.Kind, v.Config = c.Kind, c.Name
			out = append(out, v)
		}
	}
	return out
}

// evaluate follows the API server's dispatcher (ShouldCallHook in
// k8s.io/apiserver/pkg/admission/plugin/webhook/generic): namespace
// selector, object selector, then the rules, then equivalent resources.
func evaluate(h Hook, req Request, equivalents []GVR) Verdict {
	v := Verdict{Webhook: h.Name, MatchConditions: len(h.MatchConditions)}
	if isExempt(req.Resource) {
		v.Reasons = append(v.Reasons, "The API server never sends "+req.Resource.Resource+" to admission webhooks.")
		return v
	}
	for _, check := range []func(Hook, Request) (bool, string){namespaceMatches, objectMatches} {
		ok, why := check(h, req)
		if why != "" {
			v.Reasons = append(v.Reasons, why)
		}
		if !ok {
			return v
		}
	}
	rule, via, ok := matchingRule(h, req, equivalents)
	switch {
	case !ok:
		why := "No rule matches " + describe(req) + "."
		if h.MatchPolicy == admissionregistrationv1.Exact && len(equivalents) > 1 {
			why += " matchPolicy Exact: other versions of the resource do not count."
		}
		v.Reasons = append(v.Reasons, why)
		return v
	case via != nil:
		v.Via = via
		v.Reasons = append(v.Reasons, fmt.Sprintf("Rule %d matches the equivalent %s (matchPolicy Equivalent): the webhook gets the object converted to it.", rule+1, via))
	default:
		v.Reasons = append(v.Reasons, fmt.Sprintf("Rule %d matches %s.", rule+1, describe(req)))
	}
	v.Called = true
	if v.MatchConditions > 0 {
		v.Reasons = append(v.Reasons, fmt.Sprintf("Also evaluated by the API server: %d matchConditions (CEL); it is called only if all are true.", v.MatchConditions))
	}
	return v
}

func describe(req Request) string {
	s := string(req.Operation) + " " + req.Resource.String()
	if req.Subresource != "" {
		s += "/" + req.Subresource
	}
	if req.Namespace != "" && req.Resource != namespacesGVR {
		s += " in namespace " + req.Namespace
	}
	return s
}

func isExempt(r GVR) bool {
	for _, e := range exempt {
		if e.Group == r.Group && e.Resource == r.Resource {
			return true
		}
	}
	return false
}

// matchingRule returns the index of the first rule of h matching req, and
// with matchPolicy Equivalent, failing that, the first rule (earlier rules
// first) matching an equivalent resource, which it returns too.
func matchingRule(h Hook, req Request, equivalents []GVR) (int, *GVR, bool) {
	for i, rule := range h.Rules {
		if ruleMatches(rule, req, req.Resource) {
			return i, nil, true
		}
	}
	if h.MatchPolicy != admissionregistrationv1.Equivalent {
		return 0, nil, false
	}
	for i, rule := range h.Rules {
		for _, eq := range equivalents {
			if eq != req.Resource && ruleMatches(rule, req, eq) {
				return i, &eq, true
			}
		}
	}
	return 0, nil, false
}

// ruleMatches follows k8s.io/apiserver's webhook rule matcher.
func ruleMatches(rule admissionregistrationv1.RuleWithOperations, req Request, r GVR) bool {
	return (slices.Contains(rule.Operations, admissionregistrationv1.OperationAll) || slices.Contains(rule.Operations, req.Operation)) &&
		(slices.Contains(rule.APIGroups, "*") || slices.Contains(rule.APIGroups, r.Group)) &&
		(slices.Contains(rule.APIVersions, "*") || slices.Contains(rule.APIVersions, r.Version)) &&
		resourceMatches(rule.Resources, r.Resource, req.Subresource) &&
		scopeMatches(rule.Scope, req, r)
}

// resourceMatches splits each entry into resource and subresource as the
// API server does: a "*" matches anything, including no subresource, so
// "pods/*" also matches pods themselves.
func resourceMatches(entries []string, resource, subresource string) bool {
	for _, e := range entries {
		res, sub, _ := strings.Cut(e, "/")
		if (res == "*" || res == resource) && (sub == "*" || sub == subresource) {
			return true
		}
	}
	return false
}

func scopeMatches(scope *admissionregistrationv1.ScopeType, req Request, r GVR) bool {
	if scope == nil || *scope == admissionregistrationv1.AllScopes {
		return true
	}
	isNamespaceObject := r.Group == "" && r.Resource == "namespaces"
	if *scope == admissionregistrationv1.NamespacedScope {
		return !isNamespaceObject && req.Namespace != ""
	}
	return isNamespaceObject || req.Namespace == ""
}

// namespaceMatches applies the namespaceSelector: to the namespace's labels,
// to a Namespace object's own labels, and not at all to other cluster-scoped
// objects.
func namespaceMatches(h Hook, req Request) (bool, string) {
	sel := h.NamespaceSelector
	if sel == nil || (len(sel.MatchLabels) == 0 && len(sel.MatchExpressions) == 0) {
		return true, ""
	}
	if req.Namespace == "" && req.Resource.Resource != "namespaces" {
		return true, "namespaceSelector does not apply to cluster-scoped objects."
	}
	set := nsLabels(req)
	if selectorMatches(sel, set) {
		return true, "namespaceSelector " + SelectorText(sel) + " matches the namespace's labels."
	}
	return false, "namespaceSelector " + SelectorText(sel) + " does not match the namespace's labels (" + labels.Set(set).String() + ")."
}

// nsLabels are the labels the dispatcher matches: the namespace's, with the
// name label the API server always sets.
func nsLabels(req Request) map[string]string {
	set := map[string]string{}
	for k, v := range req.NamespaceLabels {
		set[k] = v
	}
	set[NamespaceNameLabel] = req.Namespace
	return set
}

// objectMatches applies the objectSelector to the new and the old object:
// either matching is enough.
func objectMatches(h Hook, req Request) (bool, string) {
	sel := h.ObjectSelector
	if sel == nil || (len(sel.MatchLabels) == 0 && len(sel.MatchExpressions) == 0) {
		return true, ""
	}
	switch {
	case req.Operation != admissionregistrationv1.Delete && selectorMatches(sel, req.ObjectLabels):
		return true, "objectSelector " + SelectorText(sel) + " matches the object's labels."
	case (req.Operation == admissionregistrationv1.Update || req.Operation == admissionregistrationv1.Delete) && selectorMatches(sel, req.OldObjectLabels):
		return true, "objectSelector " + SelectorText(sel) + " matches the stored object's labels."
	}
	return false, "objectSelector " + SelectorText(sel) + " does not match the object's labels (" + labels.Set(req.ObjectLabels).String() + ")."
}
