package admission

import (
	"slices"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
)

// GroupResource names a resource the lints care about.
type GroupResource struct {
	Group, Resource string
}

// covered lists the resource entries of h's rules that cover gr (the
// resource itself or one of its subresources), e.g. ["pods", "*/status"].
// Only rules that can match namespaced or cluster objects alike are
// considered; scope is not known without discovery.
func (h Hook) covered(gr GroupResource) []string {
	var out []string
	for _, r := range h.Rules {
		if !slices.Contains(r.APIGroups, "*") && !slices.Contains(r.APIGroups, gr.Group) {
			continue
		}
		for _, e := range r.Resources {
			res, _, _ := strings.Cut(e, "/")
			if (res == "*" || res == gr.Resource) && !slices.Contains(out, e) {
				out = append(out, e)
			}
		}
	}
	return out
}

// wildcardRules lists the rules whose resources contain a wildcard resource
// name ("*" or "*/…").
func (h Hook) wildcardRules() []admissionregistrationv1.RuleWithOperations {
	var out []admissionregistrationv1.RuleWithOperations
	for _, r := range h.Rules {
		for _, e := range r.Resources {
			if res, _, _ := strings.Cut(e, "/"); res == "*" {
				out = append(out, r)
				break
			}
		}
	}
	return out
}

// controlPlaneGroups are the API groups whose objects the control plane and
// node agents themselves write: pods, configmaps, endpoints, leases, events.
var controlPlaneGroups = []string{"*", "", "apps", "coordination.k8s.io", "discovery.k8s.io", "events.k8s.io"}

// coversControlPlaneGroups reports whether any rule can match objects in a
// group the control plane writes to.
func (h Hook) coversControlPlaneGroups() bool {
	for _, r := range h.Rules {
		for _, g := range r.APIGroups {
			if slices.Contains(controlPlaneGroups, g) {
				return true
			}
		}
	}
	return false
}

// mayMatchNamespaced reports whether any rule's scope allows namespaced objects.
func (h Hook) mayMatchNamespaced() bool {
	for _, r := range h.Rules {
		if r.Scope == nil || *r.Scope != admissionregistrationv1.ClusterScope {
			return true
		}
	}
	return false
}
