package flowschemaform

import (
	"slices"
	"strconv"
	"strings"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"

	"github.com/clusterdesk/clusterdesk/internal/flowschemaform/form"
)

// Hints are clusterdesk's reading of the API's rules for the
// form as typed, by field key. They are advice shown beside the fields; the
// request is sent anyway and the API server's answer is what counts. levels
// are the priority levels that exist (nil when unknown: no hint about it).
func Hints(f form.Form, levels []string) map[string][]string {
	h := map[string][]string{}
	add := func(key, msg string) { h[key] = append(h[key], msg) }
	if n, err := strconv.Atoi(f.Precedence); err == nil {
		switch {
		case n < 1 || n > 10000:
			add(form.FieldPrecedence, "The API server accepts 1 to 10000.")
		case n == 1 && f.Name != flowcontrolv1.FlowSchemaNameExempt:
			add(form.FieldPrecedence, "Only the FlowSchema named exempt may have precedence 1.")
		}
	}
	pl := form.PriorityLevelName(f)
	switch {
	case pl == "":
		add(form.FieldPriorityLevel, "Name a priority level.")
	case levels != nil && !slices.Contains(levels, pl):
		add(form.FieldPriorityLevel, "No PriorityLevelConfiguration "+pl+" exists: the API server would mark this FlowSchema Dangling and skip it.")
	}
	if len(f.Rules) == 0 {
		add(form.FieldRules, "Without rules this FlowSchema matches no request.")
	}
	for i, r := range f.Rules {
		rk := form.RuleKey(i)
		if len(r.Subjects) == 0 {
			add(form.Key(rk, form.RowSubjects), "A rule needs at least one subject.")
		}
		if len(r.ResourceRules) == 0 && len(r.NonResourceRules) == 0 {
			add(rk, "A rule needs at least one resource rule or non-resource rule.")
		}
		// A row not yet filled in gets no hints: the user has not got to it.
		for j, s := range r.Subjects {
			sk := form.SubjectKey(i, j)
			if s.Name == "" && s.Namespace == "" {
				continue
			}
			if s.Name == "" {
				add(form.Key(sk, form.RowName), "Give a name, or * for all.")
			}
			if s.Kind == form.KindServiceAccount && s.Namespace == "" {
				add(form.Key(sk, form.RowNamespace), "A service account needs its namespace.")
			}
		}
		for j, rr := range r.ResourceRules {
			k := form.ResourceKey(i, j)
			if len(rr.Verbs) == 0 && rr.APIGroups == "" && rr.Resources == "" && rr.Namespaces == "" && !rr.ClusterScope {
				continue
			}
			verbHints(add, form.Key(k, form.RowVerbs), rr.Verbs)
			wildcardHint(add, form.Key(k, form.RowAPIGroups), form.SplitList(rr.APIGroups, true), "API group", true)
			wildcardHint(add, form.Key(k, form.RowResources), form.SplitList(rr.Resources, false), "resource", true)
			nss := form.SplitList(rr.Namespaces, false)
			if !rr.ClusterScope && len(nss) == 0 {
				add(form.Key(k, form.RowNamespaces), "Check cluster scope, list namespaces, or both (* for every namespace).")
			}
			wildcardHint(add, form.Key(k, form.RowNamespaces), nss, "namespace", false)
		}
		for j, nr := range r.NonResourceRules {
			k := form.NonResourceKey(i, j)
			if len(nr.Verbs) == 0 && nr.URLs == "" {
				continue
			}
			verbHints(add, form.Key(k, form.RowVerbs), nr.Verbs)
			urls := form.SplitList(nr.URLs, false)
			wildcardHint(add, form.Key(k, form.RowURLs), urls, "URL", true)
			if len(urls) > 1 || (len(urls) == 1 && urls[0] != "*") {
				for _, u := range urls {
					if msg := urlHint(u); msg != "" {
						add(form.Key(k, form.RowURLs), u+": "+msg)
					}
				}
			}
		}
	}
	return h
}

func verbHints(add func(string, string), key string, verbs []string) {
	switch {
	case len(verbs) == 0:
		add(key, "Check at least one verb.")
	case len(verbs) > 1 && slices.Contains(verbs, "*"):
		add(key, "* must be the only verb.")
	}
}

func wildcardHint(add func(string, string), key string, list []string, what string, required bool) {
	switch {
	case len(list) == 0 && required:
		add(key, "Give at least one "+what+", or *.")
	case len(list) > 1 && slices.Contains(list, "*"):
		add(key, "* must be the only "+what+".")
	}
}

// urlHint mirrors the API server's ValidateNonResourceURLPath.
func urlHint(u string) string {
	switch {
	case u == "/":
		return ""
	case !strings.HasPrefix(u, "/"):
		return "must start with /."
	case strings.Contains(u, "//"):
		return "must not contain //."
	case strings.Count(u, "*") > 1 || (strings.Contains(u, "*") && !strings.HasSuffix(u, "/*")):
		return "* only as the last segment, as a prefix rule: /apis/*."
	}
	return ""
}
