package admission

import (
	"net"
	"strconv"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
)

// Summary is one webhook in words, defaults included and marked.
type Summary struct {
	Name              string
	Rules             []RuleSummary
	FailurePolicy     string // "Fail (default)"
	MatchPolicy       string
	SideEffects       string // "—" when unset
	Timeout           string // "10s (default)"
	ReviewVersions    string
	NamespaceSelector string
	ObjectSelector    string
	MatchConditions   []MatchCondition
	Target            string // "service cert-manager/cert-manager-webhook:443/validate" or the URL
	CABundle          string // "2 certificates", "empty", "not PEM"
	Reinvocation      string // mutating only
}

// RuleSummary is one rule: operations × groups/versions/resources × scope.
type RuleSummary struct {
	Operations string // "CREATE, UPDATE"
	Groups     string // `core, apps`
	Versions   string
	Resources  string
	Scope      string // "*" (any), "Namespaced" or "Cluster"
}

// String is the rule on one line, e.g. "CREATE, UPDATE core/v1 pods (Namespaced)".
func (r RuleSummary) String() string {
	return r.Operations + " · " + r.Groups + " / " + r.Versions + " / " + r.Resources + " · scope " + r.Scope
}

// MatchCondition is a CEL expression the API server evaluates before calling.
type MatchCondition struct {
	Name, Expression string
}

// Summarize describes h.
func Summarize(h Hook) Summary {
	s := Summary{
		Name:              h.Name,
		FailurePolicy:     defaulted(string(h.FailurePolicy), h.FailurePolicyDefaulted),
		MatchPolicy:       string(h.MatchPolicy),
		SideEffects:       "—",
		Timeout:           defaulted(strconv.Itoa(int(h.TimeoutSeconds))+"s", h.TimeoutDefaulted),
		ReviewVersions:    listText(h.AdmissionReviewVersions),
		NamespaceSelector: SelectorText(h.NamespaceSelector),
		ObjectSelector:    SelectorText(h.ObjectSelector),
		Target:            TargetText(h.ClientConfig),
		CABundle:          caBundleText(h.ClientConfig.CABundle),
		Reinvocation:      h.ReinvocationPolicy,
	}
	if h.SideEffects != nil {
		s.SideEffects = string(*h.SideEffects)
	}
	for _, r := range h.Rules {
		s.Rules = append(s.Rules, summarizeRule(r))
	}
	for _, c := range h.MatchConditions {
		s.MatchConditions = append(s.MatchConditions, MatchCondition{Name: c.Name, Expression: c.Expression})
	}
	return s
}

func summarizeRule(r admissionregistrationv1.RuleWithOperations) RuleSummary {
	ops := make([]string, 0, len(r.Operations))
	for _, o := range r.Operations {
		ops = append(ops, string(o))
	}
	groups := make([]string, 0, len(r.APIGroups))
	for _, g := range r.APIGroups {
		if g == "" {
			g = "core"
		}
		groups = append(groups, g)
	}
	scope := "*"
	if r.Scope != nil {
		scope = string(*r.Scope)
	}
	return RuleSummary{
		Operations: listText(ops), Groups: listText(groups), Versions: listText(r.APIVersions),
		Resources: listText(r.Resources), Scope: scope,
	}
}

// TargetText describes where the API server sends the review: a Service
// (namespace/name:port/path, port defaulting to 443) or a URL.
func TargetText(cc admissionregistrationv1.WebhookClientConfig) string {
	if cc.URL != nil {
		return *cc.URL
	}
	s := cc.Service
	if s == nil {
		return "—"
	}
	port := int32(443)
	if s.Port != nil {
		port = *s.Port
	}
	t := "service " + s.Namespace + "/" + net.JoinHostPort(s.Name, strconv.Itoa(int(port)))
	if s.Path != nil {
		t += *s.Path
	}
	return t
}

func defaulted(v string, isDefault bool) string {
	if isDefault {
		return v + " (default)"
	}
	return v
}

func listText(ss []string) string {
	if len(ss) == 0 {
		return "—"
	}
	return strings.Join(ss, ", ")
}
