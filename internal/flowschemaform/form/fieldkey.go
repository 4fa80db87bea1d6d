package form

import (
	"strconv"
	"strings"
)

// FieldKey maps a field path of the API server's error (details.causes)
// to the form field that shows it, or "" when no field of the form does.
func FieldKey(path string) string {
	switch {
	case path == "metadata.name":
		return FieldName
	case path == "spec.matchingPrecedence":
		return FieldPrecedence
	case strings.HasPrefix(path, "spec.priorityLevelConfiguration"):
		return FieldPriorityLevel
	case strings.HasPrefix(path, "spec.distinguisherMethod"):
		return FieldDistinguisher
	case path == "spec.rules":
		return FieldRules
	}
	rest, ok := strings.CutPrefix(path, "spec.rules[")
	if !ok {
		return ""
	}
	i, rest, ok := cutIndex(rest)
	if !ok {
		return ""
	}
	rk := RuleKey(i)
	if rest == "" {
		return rk
	}
	switch {
	case rest == ".subjects":
		return Key(rk, RowSubjects)
	case strings.HasPrefix(rest, ".subjects["):
		j, field, ok := cutIndex(strings.TrimPrefix(rest, ".subjects["))
		if !ok {
			return Key(rk, RowSubjects)
		}
		sk := SubjectKey(i, j)
		switch {
		case field == ".kind":
			return Key(sk, RowKind)
		case strings.HasSuffix(field, ".namespace"):
			return Key(sk, RowNamespace)
		case field != "":
			return Key(sk, RowName)
		}
		return Key(sk, RowName)
	case strings.HasPrefix(rest, ".resourceRules["):
		j, field, ok := cutIndex(strings.TrimPrefix(rest, ".resourceRules["))
		if !ok {
			return rk
		}
		k := ResourceKey(i, j)
		for api, form := range map[string]string{".verbs": RowVerbs, ".apiGroups": RowAPIGroups, ".resources": RowResources, ".namespaces": RowNamespaces, ".clusterScope": RowNamespaces} {
			if field == api || strings.HasPrefix(field, api+"[") {
				return Key(k, form)
			}
		}
		return Key(k, RowVerbs)
	case strings.HasPrefix(rest, ".nonResourceRules["):
		j, field, ok := cutIndex(strings.TrimPrefix(rest, ".nonResourceRules["))
		if !ok {
			return rk
		}
		k := NonResourceKey(i, j)
		if strings.HasPrefix(field, ".nonResourceURLs") {
			return Key(k, RowURLs)
		}
		return Key(k, RowVerbs)
	}
	return rk
}

// cutIndex reads "12]rest" into 12 and "rest".
func cutIndex(s string) (int, string, bool) {
	num, rest, ok := strings.Cut(s, "]")
	if !ok {
		return 0, "", false
	}
	n, err := strconv.Atoi(num)
	if err != nil || n < 0 {
		return 0, "", false
	}
	return n, rest, true
}
