package apf

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
)

// Request is what the apiserver's APF filter knows when it classifies a
// request: the authenticated (or impersonated) user, and the parts of
// request.RequestInfo the rules look at.
type Request struct {
	User   string
	Groups []string

	// IsResourceRequest tells a request for a resource (/api/v1/..., /apis/<group>/<version>/...)
	// from a non-resource one (/healthz, /version, /apis discovery).
	IsResourceRequest bool
	// Verb is the Kubernetes verb for resource requests (get, list, watch,
	// create, update, patch, delete, deletecollection) and the lower-case HTTP
	// method for non-resource requests (get, post, ...).
	Verb        string
	APIGroup    string // "" for the core group
	Resource    string // e.g. "pods"
	Subresource string // e.g. "status"
	// Namespace is "" for a cluster-scoped request (nodes, or any list across
	// all namespaces). For the namespaces resource itself the apiserver sets it
	// to the namespace's name when the request names one.
	Namespace string
	// Path is the URL path of a non-resource request.
	Path string
}

// RuleResult explains one rule (spec.rules[Index]) of a FlowSchema against a request.
type RuleResult struct {
	Index   int
	Matched bool
	// Why says which subject and which resource/non-resource rule matched, or
	// the first reason the rule does not match.
	Why string
}

// matchSchema mirrors matchesFlowSchema in
// k8s.io/apiserver/pkg/util/flowcontrol/rule.go (v0.36.3): a FlowSchema
// matches when any of its rules does. Every rule is explained, and evaluation
// stops at the first match as the apiserver's does.
func matchSchema(fs *flowcontrolv1.FlowSchema, req Request) (bool, []RuleResult) {
	var out []RuleResult
	for i := range fs.Spec.Rules {
		r := matchRule(&fs.Spec.Rules[i], req)
		r.Index = i
		out = append(out, r)
		if r.Matched {
			return true, out
		}
	}
	return false, out
}

// matchRule mirrors matchesPolicyRule: a subject must match, then a resource
// rule (for a resource request) or a non-resource rule (otherwise).
func matchRule(rule *flowcontrolv1.PolicyRulesWithSubjects, req Request) RuleResult {
	subj, ok := matchingSubject(rule.Subjects, req)
	if !ok {
		return RuleResult{Why: "no subject matches: it names " + SubjectsText(rule.Subjects)}
	}
	if req.IsResourceRequest {
		if len(rule.ResourceRules) == 0 {
			return RuleResult{Why: subj + " matches, but the rule has no resourceRules and this is a resource request"}
		}
		var misses []string
		for i, rr := range rule.ResourceRules {
			why, ok := matchResourceRule(rr, req)
			if ok {
				return RuleResult{Matched: true, Why: subj + " and " + ordinal("resourceRules", i, len(rule.ResourceRules)) + " match"}
			}
			misses = append(misses, prefixed("resourceRules", i, len(rule.ResourceRules), why))
		}
		return RuleResult{Why: subj + " matches, but " + strings.Join(misses, "; ")}
	}
	if len(rule.NonResourceRules) == 0 {
		return RuleResult{Why: subj + " matches, but the rule has no nonResourceRules and this is a non-resource request"}
	}
	var misses []string
	for i, nr := range rule.NonResourceRules {
		why, ok := matchNonResourceRule(nr, req)
		if ok {
			return RuleResult{Matched: true, Why: subj + " and " + ordinal("nonResourceRules", i, len(rule.NonResourceRules)) + " match"}
		}
		misses = append(misses, prefixed("nonResourceRules", i, len(rule.NonResourceRules), why))
	}
	return RuleResult{Why: subj + " matches, but " + strings.Join(misses, "; ")}
}

func ordinal(field string, i, n int) string {
	if n == 1 {
		return field[:len(field)-1]
	}
	return field + "[" + strconv.Itoa(i) + "]"
}

func prefixed(field string, i, n int, why string) string {
	if n == 1 {
		return why
	}
	return field + "[" + strconv.Itoa(i) + "]: " + why
}

// matchingSubject mirrors matchesASubject and returns the first subject that
// matches, described.
func matchingSubject(subjects []flowcontrolv1.Subject, req Request) (string, bool) {
	for _, s := range subjects {
		if matchSubject(s, req) {
			return "subject " + SubjectText(s), true
		}
	}
	return "", false
}

// matchSubject mirrors matchesSubject: by kind; "*" matches every user or
// group; a service account is matched on the user name, its "*" name on the
// namespace part only.
func matchSubject(s flowcontrolv1.Subject, req Request) bool {
	switch s.Kind {
	case flowcontrolv1.SubjectKindUser:
		return s.User != nil && (s.User.Name == flowcontrolv1.NameAll || s.User.Name == req.User)
	case flowcontrolv1.SubjectKindGroup:
		if s.Group == nil {
			return false
		}
		return s.Group.Name == flowcontrolv1.NameAll || slices.Contains(req.Groups, s.Group.Name)
	case flowcontrolv1.SubjectKindServiceAccount:
		if s.ServiceAccount == nil {
			return false
		}
		if s.ServiceAccount.Name == flowcontrolv1.NameAll {
			return serviceAccountInNamespace(s.ServiceAccount.Namespace, req.User)
		}
		return req.User == serviceAccountPrefix+s.ServiceAccount.Namespace+":"+s.ServiceAccount.Name
	}
	return false
}

// serviceAccountInNamespace mirrors serviceAccountMatchesNamespace.
func serviceAccountInNamespace(namespace, user string) bool {
	rest, ok := strings.CutPrefix(user, serviceAccountPrefix)
	if !ok {
		return false
	}
	rest, ok = strings.CutPrefix(rest, namespace)
	return ok && strings.HasPrefix(rest, ":")
}

// matchResourceRule mirrors matchesResourcePolicyRule, checking in the same
// order: verb, resource (with "/subresource"), API group, then scope.
func matchResourceRule(r flowcontrolv1.ResourcePolicyRule, req Request) (string, bool) {
	if !containsString(req.Verb, r.Verbs, flowcontrolv1.VerbAll) {
		return fmt.Sprintf("verb %q is not in verbs %s", req.Verb, list(r.Verbs)), false
	}
	res := req.Resource
	if req.Subresource != "" {
		res += "/" + req.Subresource
	}
	if !containsString(res, r.Resources, flowcontrolv1.ResourceAll) {
		return fmt.Sprintf("resource %q is not in resources %s", res, list(r.Resources)), false
	}
	if !containsString(req.APIGroup, r.APIGroups, flowcontrolv1.APIGroupAll) {
		return fmt.Sprintf("API group %s is not in apiGroups %s", groupText(req.APIGroup), list(r.APIGroups)), false
	}
	if req.Namespace == "" {
		if !r.ClusterScope {
			return "the request is cluster-scoped and clusterScope is false", false
		}
		return "", true
	}
	if !containsString(req.Namespace, r.Namespaces, flowcontrolv1.NamespaceEvery) {
		return fmt.Sprintf("namespace %q is not in namespaces %s", req.Namespace, list(r.Namespaces)), false
	}
	return "", true
}

// matchNonResourceRule mirrors matchesNonResourcePolicyRule.
func matchNonResourceRule(r flowcontrolv1.NonResourcePolicyRule, req Request) (string, bool) {
	if !containsString(req.Verb, r.Verbs, flowcontrolv1.VerbAll) {
		return fmt.Sprintf("verb %q is not in verbs %s", req.Verb, list(r.Verbs)), false
	}
	if !matchURL(r.NonResourceURLs, req.Path) {
		return fmt.Sprintf("path %q is not covered by nonResourceURLs %s", req.Path, list(r.NonResourceURLs)), false
	}
	return "", true
}

// matchURL mirrors matchPolicyRuleNonResourceURL. Note the apiserver treats
// every entry as a prefix too: "/healthz" also matches "/healthz/etcd", and
// "/apis/*" matches "/apis/x" but not "/apis" itself.
func matchURL(urls []string, path string) bool {
	for _, u := range urls {
		if u == flowcontrolv1.NonResourceAll || u == path {
			return true
		}
		prefix := strings.TrimSuffix(u, "*")
		if !strings.HasSuffix(prefix, "/") {
			prefix += "/"
		}
		if strings.HasPrefix(path, prefix) {
			return true
		}
	}
	return false
}

// containsString mirrors the apiserver's: the wildcard counts only as the
// sole entry of the list (validation forbids mixing it with other values).
func containsString(x string, values []string, wildcard string) bool {
	if len(values) == 1 && values[0] == wildcard {
		return true
	}
	return slices.Contains(values, x)
}

func list(ss []string) string {
	if len(ss) == 0 {
		return "(none)"
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s
		if s == "" {
			out[i] = `""` // the core API group
		}
	}
	return "[" + strings.Join(out, ", ") + "]"
}

func groupText(g string) string {
	if g == "" {
		return `"" (core)`
	}
	return strconv.Quote(g)
}

// SubjectText describes one subject: "user alice", "group system:nodes",
// "serviceaccount kube-system/*".
func SubjectText(s flowcontrolv1.Subject) string {
	switch {
	case s.Kind == flowcontrolv1.SubjectKindUser && s.User != nil:
		return "user " + s.User.Name
	case s.Kind == flowcontrolv1.SubjectKindGroup && s.Group != nil:
		return "group " + s.Group.Name
	case s.Kind == flowcontrolv1.SubjectKindServiceAccount && s.ServiceAccount != nil:
		return "serviceaccount " + s.ServiceAccount.Namespace + "/" + s.ServiceAccount.Name
	}
	return "invalid subject of kind " + strconv.Quote(string(s.Kind))
}

// SubjectsText describes a subject list.
func SubjectsText(ss []flowcontrolv1.Subject) string {
	if len(ss) == 0 {
		return "no subjects"
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = SubjectText(s)
	}
	return strings.Join(out, ", ")
}
