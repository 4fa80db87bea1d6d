package apf

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"sigs.k8s.io/yaml"

	"github.com/clusterdesk/clusterdesk/internal/testfixtures"
)

// fuzzFixturesDir is the shared real-world manifests beside the repository.
const fuzzFixturesDir = "../../../shared/fixtures/real"

// fuzzObjects reads the FlowSchemas and priority levels Classify starts from:
// a v1.36.3 apiserver's defaults (testdata) and the real-world fixtures. It
// also returns the raw text of each real-world file, as seeds.
func fuzzObjects(f *testing.F) (schemas []*flowcontrolv1.FlowSchema, levels []*flowcontrolv1.PriorityLevelConfiguration, fsTexts, plTexts [][]byte) {
	schemas, levels = testfixtures.DefaultAPF(f)
	read := func(kind string) [][]byte {
		files, err := filepath.Glob(filepath.Join(fuzzFixturesDir, kind, "*.yaml"))
		if err != nil || len(files) == 0 {
			f.Fatalf("no %s fixtures in %s (is ../shared beside the repository?): %v", kind, fuzzFixturesDir, err)
		}
		slices.Sort(files)
		var out [][]byte
		for _, file := range files {
			raw, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			out = append(out, raw)
		}
		return out
	}
	fsTexts, plTexts = read("flowschemas"), read("prioritylevelconfigurations")
	for _, raw := range fsTexts {
		var fs flowcontrolv1.FlowSchema
		if err := yaml.Unmarshal(raw, &fs); err != nil {
			f.Fatalf("fixture FlowSchema: %v", err)
		}
		schemas = append(schemas, &fs)
	}
	for _, raw := range plTexts {
		var pl flowcontrolv1.PriorityLevelConfiguration
		if err := yaml.Unmarshal(raw, &pl); err != nil {
			f.Fatalf("fixture priority level: %v", err)
		}
		levels = append(levels, &pl)
	}
	return schemas, levels, fsTexts, plTexts
}

// fuzzRequests are requests the real FlowSchemas are written for.
var fuzzRequests = []Request{
	{User: "system:apiserver", Groups: []string{"system:masters", GroupAuthenticated}, IsResourceRequest: true, Verb: "list", APIGroup: "", Resource: "pods", Namespace: "default"},
	{User: "system:node:worker-1", Groups: []string{"system:nodes", GroupAuthenticated}, IsResourceRequest: true, Verb: "update", APIGroup: "coordination.k8s.io", Resource: "leases", Namespace: "kube-node-lease"},
	{User: "system:serviceaccount:openshift-monitoring:prometheus-k8s", Groups: []string{"system:serviceaccounts", "system:serviceaccounts:openshift-monitoring", GroupAuthenticated}, Verb: "get", Path: "/metrics"},
	{User: "system:anonymous", Groups: []string{GroupUnauthenticated}, Verb: "get", Path: "/healthz/etcd"},
	{User: "system:serviceaccount:default:default", Groups: []string{GroupAuthenticated}, IsResourceRequest: true, Verb: "list", Resource: "events", Namespace: "default"},
	{User: "nobody", Verb: "post", Path: "/apis"},
}

// FuzzClassify classifies arbitrary requests against the default and
// real-world FlowSchemas plus one fuzzed FlowSchema and priority level
// (decoded from arbitrary YAML or JSON: any shape the API types can hold,
// nil pointers included), some of the defaults left out, and priority
// levels known or not. Classify must never panic and must always give a
// consistent answer.
func FuzzClassify(f *testing.F) {
	schemas, levels, fsTexts, plTexts := fuzzObjects(f)
	for i, raw := range fsTexts {
		r := fuzzRequests[i%len(fuzzRequests)]
		f.Add(raw, plTexts[i%len(plTexts)], uint32(i), r.User, strings.Join(r.Groups, ","), r.Verb, r.APIGroup, r.Resource, r.Subresource, r.Namespace, r.Path, r.IsResourceRequest)
	}
	for i, r := range fuzzRequests {
		f.Add([]byte(`{"metadata":{"name":"catch-all"},"spec":{"matchingPrecedence":1,"priorityLevelConfiguration":{"name":"missing"},`+
			`"rules":[{"subjects":[{"kind":"User"},{"kind":"Group","group":null},{"kind":"ServiceAccount","serviceAccount":{"name":"*"}}],`+
			`"resourceRules":[{"verbs":["*"],"apiGroups":["*"],"resources":["*"],"namespaces":[]}],"nonResourceRules":[{"verbs":[],"nonResourceURLs":["*",""]}]}],`+
			`"distinguisherMethod":{"type":"ByNamespace"}}}`),
			[]byte(`{"metadata":{"name":"missing"},"spec":{"type":"Limited","limited":{"limitResponse":{"type":"Queue"}}}}`),
			uint32(1<<i), r.User, strings.Join(r.Groups, ","), r.Verb, r.APIGroup, r.Resource, "status", r.Namespace, r.Path, !r.IsResourceRequest)
	}

	f.Fuzz(func(t *testing.T, fsRaw, plRaw []byte, drop uint32, user, groups, verb, apiGroup, resource, subresource, namespace, path string, isResource bool) {
		var in []*flowcontrolv1.FlowSchema
		for i, fs := range schemas {
			if drop&(1<<(i%32)) == 0 {
				in = append(in, fs)
			}
		}
		var extra flowcontrolv1.FlowSchema
		if yaml.Unmarshal(fsRaw, &extra) == nil {
			in = append(in, &extra)
		}
		pls := slices.Clone(levels)
		var extraPL flowcontrolv1.PriorityLevelConfiguration
		if yaml.Unmarshal(plRaw, &extraPL) == nil {
			pls = append(pls, &extraPL)
		}
		req := Request{User: user, Verb: verb, APIGroup: apiGroup, Resource: resource, Subresource: subresource,
			Namespace: namespace, Path: path, IsResourceRequest: isResource}
		if groups != "" {
			req.Groups = strings.Split(groups, ",")
		}
		for _, lv := range []Levels{LevelsOf(pls), nil} {
			checkClassification(t, in, lv, req, Classify(in, lv, req))
		}
	})
}

// checkClassification: a FlowSchema always comes out, the trace ends at it
// and holds every entry of the evaluation order up to it, skipped ones
// dangling, and the priority level and distinguisher follow from it.
func checkClassification(t *testing.T, in []*flowcontrolv1.FlowSchema, levels Levels, req Request, r Result) {
	t.Helper()
	if r.FlowSchema == nil || len(r.Trace) == 0 {
		t.Fatalf("no FlowSchema or empty trace: %+v", r)
	}
	if r.PriorityLevelName != r.FlowSchema.Spec.PriorityLevelConfiguration.Name {
		t.Fatalf("priority level %q, the FlowSchema names %q", r.PriorityLevelName, r.FlowSchema.Spec.PriorityLevelConfiguration.Name)
	}
	seq := Sequence(in, levels)
	last := r.Trace[len(r.Trace)-1]
	if r.Fallback {
		if r.FlowSchema.Name != flowcontrolv1.FlowSchemaNameCatchAll || r.Rule != -1 || len(r.Trace) != len(seq) {
			t.Fatalf("fallback to %q rule %d after %d of %d entries", r.FlowSchema.Name, r.Rule, len(r.Trace), len(seq))
		}
	} else {
		if last.Outcome != Matched || last.FlowSchema != r.FlowSchema || last.Position != r.Position {
			t.Fatalf("the trace ends with %s %q at %d, the result is %q at %d", last.Outcome, last.FlowSchema.Name, last.Position, r.FlowSchema.Name, r.Position)
		}
		if r.Rule < 0 || r.Rule >= len(r.FlowSchema.Spec.Rules) || r.Why == "" {
			t.Fatalf("matched rule %d of %d, why %q", r.Rule, len(r.FlowSchema.Spec.Rules), r.Why)
		}
	}
	for i, st := range r.Trace {
		if i >= len(seq) || st.FlowSchema != seq[i].FlowSchema || st.Position != i+1 {
			t.Fatalf("trace step %d (%q) is not entry %d of the evaluation order", i, st.FlowSchema.Name, i+1)
		}
		if (st.Outcome == Skipped) != seq[i].Dangling {
			t.Fatalf("step %d %q: outcome %s, dangling %v", i, st.FlowSchema.Name, st.Outcome, seq[i].Dangling)
		}
		if i < len(r.Trace)-1 && st.Outcome == Matched {
			t.Fatalf("step %d %q matched, but classification went on", i, st.FlowSchema.Name)
		}
		for _, rr := range st.Rules {
			if rr.Why == "" && !rr.Matched {
				t.Fatalf("step %d %q rule %d fails without a reason", i, st.FlowSchema.Name, rr.Index)
			}
		}
	}
	d := r.Distinguisher
	switch d.Method {
	case string(flowcontrolv1.FlowDistinguisherMethodByUserType):
		if d.Value != req.User {
			t.Fatalf("ByUser distinguisher %q for user %q", d.Value, req.User)
		}
	case string(flowcontrolv1.FlowDistinguisherMethodByNamespaceType):
		if d.Value != req.Namespace {
			t.Fatalf("ByNamespace distinguisher %q for namespace %q", d.Value, req.Namespace)
		}
	}
	if d.Known != (r.PriorityLevel != nil) {
		t.Fatalf("distinguisher Known=%v with priority level %v", d.Known, r.PriorityLevel)
	}
}
