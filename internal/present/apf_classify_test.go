package present

import (
	"slices"
	"strings"
	"testing"

	"github.com/clusterdesk/clusterdesk/internal/apf"
	"github.com/clusterdesk/clusterdesk/internal/testfixtures"
	"github.com/clusterdesk/clusterdesk/views/model"
)

func TestClassifyRequest(t *testing.T) {
	cases := []struct {
		name    string
		form    model.ClassifyForm
		want    apf.Request
		errKeys []string
	}{
		{"user and groups, system:authenticated added",
			model.ClassifyForm{User: "bob", Groups: "devs, ops  devs", Verb: "list", Resource: "pods", Namespace: "team-a"},
			apf.Request{User: "bob", Groups: []string{"devs", "ops", "system:authenticated"}, IsResourceRequest: true, Verb: "list", Resource: "pods", Namespace: "team-a"}, nil},
		{"exact groups",
			model.ClassifyForm{User: "bob", Groups: "devs", ExactGroups: true, Verb: "get", Resource: "nodes"},
			apf.Request{User: "bob", Groups: []string{"devs"}, IsResourceRequest: true, Verb: "get", Resource: "nodes"}, nil},
		{"service account fills user and groups",
			model.ClassifyForm{ServiceAccount: "kube-system/job-controller", Groups: "extra", Verb: "patch", APIGroup: "batch", Resource: "jobs/status", Namespace: "default"},
			apf.Request{User: "system:serviceaccount:kube-system:job-controller",
				Groups:            []string{"system:serviceaccounts", "system:serviceaccounts:kube-system", "extra", "system:authenticated"},
				IsResourceRequest: true, Verb: "patch", APIGroup: "batch", Resource: "jobs", Subresource: "status", Namespace: "default"}, nil},
		{"service account with its own user name",
			model.ClassifyForm{User: "system:serviceaccount:a:b", ServiceAccount: "a/b", Verb: "get", Resource: "pods"},
			apf.Request{User: "system:serviceaccount:a:b", Groups: []string{"system:serviceaccounts", "system:serviceaccounts:a", "system:authenticated"},
				IsResourceRequest: true, Verb: "get", Resource: "pods"}, nil},
		{"anonymous probe",
			model.ClassifyForm{User: "system:anonymous", NonResource: true, Verb: "get", Path: "/livez"},
			apf.Request{User: "system:anonymous", Groups: []string{"system:unauthenticated"}, Verb: "get", Path: "/livez"}, nil},
		{"nothing given", model.ClassifyForm{}, apf.Request{}, []string{"user", "verb", "resource"}},
		{"service account and another user", model.ClassifyForm{User: "bob", ServiceAccount: "a/b", Verb: "get", Resource: "pods"}, apf.Request{}, []string{"user"}},
		{"malformed service account", model.ClassifyForm{ServiceAccount: "a", Verb: "get", Resource: "pods"}, apf.Request{}, []string{"serviceaccount"}},
		{"service account with a colon", model.ClassifyForm{ServiceAccount: "a/b:c", Verb: "get", Resource: "pods"}, apf.Request{}, []string{"serviceaccount"}},
		{"relative path", model.ClassifyForm{User: "bob", NonResource: true, Verb: "get", Path: "healthz"}, apf.Request{}, []string{"path"}},
		{"two slashes in the resource", model.ClassifyForm{User: "bob", Verb: "get", Resource: "pods/a/b"}, apf.Request{}, []string{"resource"}},
		{"core group by name", model.ClassifyForm{User: "bob", Verb: "get", APIGroup: "core", Resource: "pods"}, apf.Request{}, []string{"apigroup"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, errs := ClassifyRequest(c.form)
			var keys []string
			for k := range errs {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			slices.Sort(c.errKeys)
			if !slices.Equal(keys, c.errKeys) {
				t.Fatalf("errors %v, want on %v", errs, c.errKeys)
			}
			if len(c.errKeys) > 0 {
				return
			}
			if req.User != c.want.User || !slices.Equal(req.Groups, c.want.Groups) || req.IsResourceRequest != c.want.IsResourceRequest ||
				req.Verb != c.want.Verb || req.APIGroup != c.want.APIGroup || req.Resource != c.want.Resource ||
				req.Subresource != c.want.Subresource || req.Namespace != c.want.Namespace || req.Path != c.want.Path {
				t.Errorf("got  %+v\nwant %+v", req, c.want)
			}
		})
	}
}

func TestClassifyResultView(t *testing.T) {
	fss, pls := testfixtures.DefaultAPF(t)
	fss = append(fss, ghostSchema())
	levels := apf.LevelsOf(pls)
	req, _ := ClassifyRequest(model.ClassifyForm{User: "ghost", Verb: "list", Resource: "pods", Namespace: "default"})
	res := apf.Classify(fss, levels, req)
	v := ClassifyResultView(res, req, len(apf.Sequence(fss, levels)))
	if v.FlowSchema != "global-default" || v.FlowSchemaHref != "/flowschemas/global-default" || v.Position != "11 of 12" || v.Precedence != "9900" {
		t.Errorf("flow schema %q %q %q %q", v.FlowSchema, v.FlowSchemaHref, v.Position, v.Precedence)
	}
	if v.MatchedRule != "rule 1: subject group system:authenticated and resourceRule match" {
		t.Errorf("rule %q", v.MatchedRule)
	}
	if v.PriorityLevel != "global-default" || v.PriorityLevelHref != "/prioritylevels/global-default" ||
		v.PriorityLevelType != "Limited (20 shares), queues: 128 queues, hand size 6, 50 per queue" {
		t.Errorf("priority level %q %q %q", v.PriorityLevel, v.PriorityLevelHref, v.PriorityLevelType)
	}
	if v.Distinguisher != "ByUser" || v.DistinguisherValue != "ghost" || !strings.HasPrefix(v.DistinguisherNote, "Requests with this value form one flow") {
		t.Errorf("distinguisher %q %q %q", v.Distinguisher, v.DistinguisherValue, v.DistinguisherNote)
	}
	if v.Identity != "user ghost in groups system:authenticated" || v.Request != "list pods (core group), in namespace default" {
		t.Errorf("identity %q request %q", v.Identity, v.Request)
	}
	if len(v.Trace) != 11 {
		t.Fatalf("trace of %d steps", len(v.Trace))
	}
	ghost := v.Trace[8]
	if ghost.FlowSchema != "ghost-users" || ghost.Outcome.Text != "Skipped" || len(ghost.Reasons) != 1 || !strings.Contains(ghost.Reasons[0], `"no-such-level" does not exist`) {
		t.Errorf("ghost step %+v", ghost)
	}
	first := v.Trace[0]
	if first.FlowSchema != "exempt" || first.Outcome.Text != "No match" || !slices.Equal(first.Reasons, []string{"rule 1: no subject matches: it names group system:masters"}) {
		t.Errorf("first step %+v", first)
	}
	if last := v.Trace[10]; !last.Matched || last.Outcome.Text != "Matched" {
		t.Errorf("last step %+v", last)
	}

	// An exempt request: the distinguisher is not used.
	req, _ = ClassifyRequest(model.ClassifyForm{User: "bob", NonResource: true, Verb: "get", Path: "/healthz"})
	v = ClassifyResultView(apf.Classify(fss, levels, req), req, 12)
	if v.FlowSchema != "probes" || v.PriorityLevelType != "Exempt: not limited" || v.Distinguisher != "none" || !strings.HasPrefix(v.DistinguisherNote, "Not used") {
		t.Errorf("probe: %q %q %q %q", v.FlowSchema, v.PriorityLevelType, v.Distinguisher, v.DistinguisherNote)
	}
	// No auth group: the fallback is explained.
	req, _ = ClassifyRequest(model.ClassifyForm{User: "bob", ExactGroups: true, NonResource: true, Verb: "get", Path: "/version"})
	v = ClassifyResultView(apf.Classify(fss, levels, req), req, 12)
	if v.FlowSchema != "catch-all" || !strings.Contains(v.MatchedRule, "falls back to catch-all") || v.Identity != "user bob, in no group" {
		t.Errorf("fallback: %q %q %q", v.FlowSchema, v.MatchedRule, v.Identity)
	}
	// Priority levels unknown.
	req, _ = ClassifyRequest(model.ClassifyForm{User: "bob", Verb: "get", Resource: "pods", Namespace: "x"})
	v = ClassifyResultView(apf.Classify(fss, nil, req), req, 12)
	if v.PriorityLevelHref != "/prioritylevels/global-default" || !strings.HasPrefix(v.PriorityLevelType, "unknown") || !strings.Contains(v.DistinguisherNote, "unknown") {
		t.Errorf("levels unknown: %q %q %q", v.PriorityLevelHref, v.PriorityLevelType, v.DistinguisherNote)
	}
}
