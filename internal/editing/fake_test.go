package editing

import (
	"context"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// fakeAPI is an in-memory API server for the unit tests of one use case: it
// keeps one version per object, refuses a stale resourceVersion or UID with
// the API server's Conflict, and counts calls. keep lists spec fields whose
// stored value no write changes (as a CSR's spec after creation).
type fakeAPI struct {
	objs  map[string]*unstructured.Unstructured
	rv    int
	calls []string
	keep  []string
}

var gr = schema.GroupResource{Group: "storage.k8s.io", Resource: "csidrivers"}

func newFake(objs ...*unstructured.Unstructured) *fakeAPI {
	f := &fakeAPI{objs: map[string]*unstructured.Unstructured{}, rv: 100}
	for _, o := range objs {
		f.store(o.DeepCopy())
	}
	return f
}

func (f *fakeAPI) store(o *unstructured.Unstructured) *unstructured.Unstructured {
	f.rv++
	o.SetResourceVersion(strconv.Itoa(f.rv))
	if o.GetUID() == "" {
		o.SetUID(types.UID("uid-" + o.GetName()))
	}
	f.objs[o.GetName()] = o
	return o.DeepCopy()
}

func (f *fakeAPI) call(s string, dryRun bool) {
	if dryRun {
		s += " (dry run)"
	}
	f.calls = append(f.calls, s)
}

func (f *fakeAPI) Get(_ context.Context, _ kube.Kind, name string) (*unstructured.Unstructured, error) {
	f.call("get", false)
	o, ok := f.objs[name]
	if !ok {
		return nil, apierrors.NewNotFound(gr, name)
	}
	return o.DeepCopy(), nil
}

func (f *fakeAPI) Update(_ context.Context, _ kube.Kind, obj *unstructured.Unstructured, dryRun bool) (kube.WriteResult, error) {
	f.call("update", dryRun)
	cur, ok := f.objs[obj.GetName()]
	if !ok {
		return kube.WriteResult{}, apierrors.NewNotFound(gr, obj.GetName())
	}
	if obj.GetResourceVersion() != cur.GetResourceVersion() {
		return kube.WriteResult{}, apierrors.NewConflict(gr, obj.GetName(), errStale)
	}
	next := obj.DeepCopy()
	next.SetUID(cur.GetUID())
	for _, field := range f.keep {
		v, found, _ := unstructured.NestedFieldCopy(cur.Object, "spec", field)
		if found {
			_ = unstructured.SetNestedField(next.Object, v, "spec", field)
		}
	}
	if dryRun {
		return kube.WriteResult{Object: next, Warnings: []string{"dry"}}, nil
	}
	return kube.WriteResult{Object: f.store(next), Warnings: []string{"real"}}, nil
}

func (f *fakeAPI) Create(_ context.Context, _ kube.Kind, obj *unstructured.Unstructured, dryRun bool) (kube.WriteResult, error) {
	f.call("create", dryRun)
	if _, ok := f.objs[obj.GetName()]; ok {
		return kube.WriteResult{}, apierrors.NewAlreadyExists(gr, obj.GetName())
	}
	if dryRun {
		return kube.WriteResult{Object: obj.DeepCopy()}, nil
	}
	return kube.WriteResult{Object: f.store(obj.DeepCopy())}, nil
}

func (f *fakeAPI) Apply(ctx context.Context, k kube.Kind, obj *unstructured.Unstructured, dryRun, _ bool) (kube.WriteResult, error) {
	f.call("apply", dryRun)
	if cur, ok := f.objs[obj.GetName()]; ok {
		obj = obj.DeepCopy()
		obj.SetResourceVersion(cur.GetResourceVersion())
	}
	f.calls = f.calls[:len(f.calls)-1]
	res, err := f.Update(ctx, k, obj, dryRun)
	f.calls[len(f.calls)-1] = "apply"
	if dryRun {
		f.calls[len(f.calls)-1] += " (dry run)"
	}
	return res, err
}

func (f *fakeAPI) Delete(_ context.Context, _ kube.Kind, name string, uid types.UID, dryRun bool, _ metav1.DeletionPropagation) (kube.WriteResult, error) {
	f.call("delete", dryRun)
	cur, ok := f.objs[name]
	switch {
	case !ok:
		return kube.WriteResult{}, apierrors.NewNotFound(gr, name)
	case cur.GetUID() != uid:
		return kube.WriteResult{}, apierrors.NewConflict(gr, name, errUID)
	}
	if !dryRun {
		delete(f.objs, name)
	}
	return kube.WriteResult{}, nil
}

func (f *fakeAPI) CountCustomResources(context.Context, *unstructured.Unstructured) (kube.CRCount, error) {
	f.call("count", false)
	return kube.CRCount{Kind: "Widget", Resource: "widgets.example.com", Count: 3}, nil
}

func (f *fakeAPI) Table(_ context.Context, _ kube.Kind, limit int64, cont, _ string) (*metav1.Table, error) {
	f.call("table "+strconv.FormatInt(limit, 10)+" "+cont, false)
	return &metav1.Table{}, nil
}

// Meta makes the fake its own cache, always up to date.
func (f *fakeAPI) Meta(_ kube.KindID, name string) (metav1.Object, error) {
	o, ok := f.objs[name]
	if !ok {
		return nil, apierrors.NewNotFound(gr, name)
	}
	return o, nil
}

type fakeErr string

func (e fakeErr) Error() string { return string(e) }

const (
	errStale fakeErr = "the object has been modified; please apply your changes to the latest version and try again"
	errUID   fakeErr = "Precondition failed: UID in precondition does not match the UID in record"
)

// audits collects the records written.
type audits struct {
	writes    []Write
	fromCache int
}

func (a *audits) Record(w Write)   { a.writes = append(a.writes, w) }
func (a *audits) FromCache(*Write) { a.fromCache++ }
func (a *audits) verbs() (out []string) {
	for _, w := range a.writes {
		v := w.Verb
		if w.DryRun {
			v += " (dry run)"
		}
		out = append(out, v)
	}
	return out
}
