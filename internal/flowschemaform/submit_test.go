package flowschemaform

import (
	"context"
	"slices"
	"strconv"
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/clusterdesk/clusterdesk/internal/apf"
	"github.com/clusterdesk/clusterdesk/internal/edit"
	"github.com/clusterdesk/clusterdesk/internal/editing"
	"github.com/clusterdesk/clusterdesk/internal/kube"
)

var flowSchemas = kube.Kind{ID: kube.FlowSchemas, Singular: "FlowSchema", Group: "flowcontrol.apiserver.k8s.io", Version: "v1", Resource: "flowschemas"}

// fakeAPI is an in-memory API server of FlowSchemas for the unit test of
// Submit: it refuses a stale resourceVersion with a Conflict and defaults a
// matching precedence of 0 to 1000, as kube-apiserver does.
type fakeAPI struct {
	objs  map[string]*unstructured.Unstructured
	rv    int
	calls []string
}

func (f *fakeAPI) store(o *unstructured.Unstructured) {
	f.rv++
	o.SetResourceVersion(strconv.Itoa(f.rv))
	f.objs[o.GetName()] = o
}

func (f *fakeAPI) Get(_ context.Context, _ kube.Kind, name string) (*unstructured.Unstructured, error) {
	f.calls = append(f.calls, "get")
	o, ok := f.objs[name]
	if !ok {
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "flowschemas"}, name)
	}
	return o.DeepCopy(), nil
}

func (f *fakeAPI) write(verb string, obj *unstructured.Unstructured, dryRun bool) (kube.WriteResult, error) {
	if dryRun {
		verb += " (dry run)"
	}
	f.calls = append(f.calls, verb)
	obj = obj.DeepCopy()
	if p, _, _ := unstructured.NestedInt64(obj.Object, "spec", "matchingPrecedence"); p == 0 {
		_ = unstructured.SetNestedField(obj.Object, int64(1000), "spec", "matchingPrecedence")
	}
	if !dryRun {
		f.store(obj)
	}
	return kube.WriteResult{Object: obj.DeepCopy()}, nil
}

func (f *fakeAPI) Create(_ context.Context, _ kube.Kind, obj *unstructured.Unstructured, dryRun bool) (kube.WriteResult, error) {
	return f.write("create", obj, dryRun)
}

func (f *fakeAPI) Update(_ context.Context, _ kube.Kind, obj *unstructured.Unstructured, dryRun bool) (kube.WriteResult, error) {
	if cur := f.objs[obj.GetName()]; cur.GetResourceVersion() != obj.GetResourceVersion() {
		f.calls = append(f.calls, "update refused")
		return kube.WriteResult{}, apierrors.NewConflict(schema.GroupResource{Resource: "flowschemas"}, obj.GetName(), errStale)
	}
	return f.write("update", obj, dryRun)
}

func (f *fakeAPI) Meta(_ kube.KindID, name string) (metav1.Object, error) { return f.objs[name], nil }

type staleErr struct{}

func (staleErr) Error() string { return "the object has been modified" }

var errStale = staleErr{}

type audits struct{ verbs []string }

func (a *audits) Record(w editing.Write) {
	v := w.Verb
	if w.DryRun {
		v += " (dry run)"
	}
	a.verbs = append(a.verbs, v)
}
func (a *audits) FromCache(*editing.Write) {}

func spec(precedence int32) flowcontrolv1.FlowSchemaSpec {
	return flowcontrolv1.FlowSchemaSpec{MatchingPrecedence: precedence,
		PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "workload-low"}}
}

// TestSubmit runs Preview and Save against an in-memory API server: the calls
// in order, where it stops, and how a conflict is told from the API server's
// own status write.
func TestSubmit(t *testing.T) {
	cases := []struct {
		name       string
		create     bool
		save       bool
		precedence int32
		// meanwhile changes the stored object after the form was opened:
		// "status" as the API server does (the Dangling condition), "spec" as a person.
		meanwhile string
		calls     []string
		audited   []string
		written   bool
		changed   []string
		conflict  bool
		retried   bool
	}{
		{name: "create preview", create: true, precedence: 500,
			calls: []string{"create (dry run)"}, audited: []string{"create (dry run)"}},
		{name: "create save", create: true, save: true, precedence: 500,
			calls: []string{"create (dry run)", "create"}, audited: []string{"create (dry run)", "create"}, written: true},
		{name: "a precedence the server would change stops Save", create: true, save: true, precedence: 0,
			calls: []string{"create (dry run)"}, audited: []string{"create (dry run)"}, changed: []string{apf.SpecPrecedence}},
		{name: "update save", save: true, precedence: 700,
			calls: []string{"get", "update (dry run)", "update"}, audited: []string{"update (dry run)", "update"}, written: true},
		{name: "status written meanwhile: retried from the new version", save: true, precedence: 700, meanwhile: "status",
			calls:   []string{"get", "update refused", "get", "update (dry run)", "update"},
			audited: []string{"update (dry run)", "update (dry run)", "update"}, written: true, retried: true},
		{name: "spec changed meanwhile: a conflict, the current version read once", save: true, precedence: 700, meanwhile: "spec",
			calls: []string{"get", "update refused", "get"}, audited: []string{"update (dry run)"}, conflict: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			api := &fakeAPI{objs: map[string]*unstructured.Unstructured{}}
			sub := Submission{Kind: flowSchemas, Name: "usecase-edit-fs", Create: tc.create, Spec: spec(tc.precedence), Save: tc.save}
			if !tc.create {
				obj, err := apf.FormObject(nil, "flowcontrol.apiserver.k8s.io/v1", sub.Name, spec(100))
				if err != nil {
					t.Fatal(err)
				}
				api.store(obj)
				sub.ResourceVersion = obj.GetResourceVersion()
				if sub.BaseText, err = edit.Text(obj, false); err != nil {
					t.Fatal(err)
				}
				next := obj.DeepCopy()
				switch tc.meanwhile {
				case "status":
					next.Object["status"] = map[string]any{"conditions": []any{map[string]any{"type": "Dangling", "status": "False"}}}
					api.store(next)
				case "spec":
					_ = unstructured.SetNestedField(next.Object, int64(200), "spec", "matchingPrecedence")
					api.store(next)
				}
			}
			audit := &audits{}
			out, err := (&Service{API: api, Cache: api, Audit: audit}).Submit(context.Background(), sub)
			if tc.conflict != apierrors.IsConflict(err) || (!tc.conflict && err != nil) {
				t.Fatalf("err = %v", err)
			}
			if !slices.Equal(api.calls, tc.calls) || !slices.Equal(audit.verbs, tc.audited) {
				t.Errorf("calls %q, audited %q", api.calls, audit.verbs)
			}
			if out.Written != tc.written || !slices.Equal(out.Changed, tc.changed) || (out.Conflict != nil) != tc.conflict {
				t.Errorf("written %v, changed %q, conflict %+v", out.Written, out.Changed, out.Conflict)
			}
			if tc.conflict && (out.Conflict.Err != nil || out.Conflict.Current.GetResourceVersion() != api.objs[sub.Name].GetResourceVersion()) {
				t.Errorf("conflict %+v does not hold the current version", out.Conflict)
			}
			if moved := out.ResourceVersion != sub.ResourceVersion; moved != tc.retried {
				t.Errorf("starting version %q → %q", sub.ResourceVersion, out.ResourceVersion)
			}
			if tc.written && (out.Stored == nil || out.After != api.objs[sub.Name].GetResourceVersion() || (!tc.create && out.Live == nil)) {
				t.Errorf("written: %+v", out)
			}
		})
	}
}
