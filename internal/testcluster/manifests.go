package testcluster

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"
)

// ReadManifests parses a multi-document YAML file (deploy/) into objects;
// empty documents are skipped.
func ReadManifests(t testing.TB, path string) []*unstructured.Unstructured {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(raw)))
	var out []*unstructured.Unstructured
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		js, err := yaml.YAMLToJSON(doc)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if len(bytes.TrimSpace(js)) == 0 || string(bytes.TrimSpace(js)) == "null" {
			continue
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(js); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, u)
	}
}

// Applier creates objects of any kind on the devcluster, mapping kinds to
// resources through discovery.
type Applier struct {
	dyn    dynamic.Interface
	mapper meta.RESTMapper
}

// NewApplier returns an Applier acting with cfg.
func NewApplier(t testing.TB, cfg *rest.Config) *Applier {
	t.Helper()
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &Applier{dyn: dyn, mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))}
}

// Create creates obj (dryRun: with dryRun=All and strict field validation, so
// an unknown or misspelt field is an error). An object that exists already is
// an error (apierrors.IsAlreadyExists).
func (a *Applier) Create(ctx context.Context, obj *unstructured.Unstructured, dryRun bool) (*unstructured.Unstructured, error) {
	ri, err := a.resource(obj)
	if err != nil {
		return nil, err
	}
	opts := metav1.CreateOptions{FieldValidation: "Strict"}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	return ri.Create(ctx, obj, opts)
}

// DryRun asks the API server to validate obj as it would store it: a
// dry-run create, or, for an object that exists already (a cluster-scoped
// one the devcluster holds, such as a CRD its seed installed), a dry-run
// replacement of it, with the same strict field validation.
func (a *Applier) DryRun(ctx context.Context, obj *unstructured.Unstructured) error {
	_, err := a.Create(ctx, obj, true)
	if !apierrors.IsAlreadyExists(err) {
		return err
	}
	ri, err := a.resource(obj)
	if err != nil {
		return err
	}
	live, err := ri.Get(ctx, obj.GetName(), metav1.GetOptions{})
	if err != nil {
		return err
	}
	replacement := obj.DeepCopy()
	replacement.SetResourceVersion(live.GetResourceVersion())
	_, err = ri.Update(ctx, replacement, metav1.UpdateOptions{FieldValidation: "Strict", DryRun: []string{metav1.DryRunAll}})
	return err
}

func (a *Applier) resource(obj *unstructured.Unstructured) (dynamic.ResourceInterface, error) {
	gvk := obj.GroupVersionKind()
	m, err := a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, err
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		return a.dyn.Resource(m.Resource).Namespace(obj.GetNamespace()), nil
	}
	return a.dyn.Resource(m.Resource), nil
}

// DeleteNamespace deletes namespace name. The devcluster runs no namespace
// controller, so a deleted namespace would stay Terminating for ever: the
// finalize subresource clears its finalizer and the API server removes it.
// Nothing deletes the objects inside: delete those first.
func DeleteNamespace(t testing.TB, cs kubernetes.Interface, name string) {
	t.Helper()
	ctx := context.Background()
	ns, err := cs.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return
	}
	if err != nil {
		t.Errorf("namespace %s: %v", name, err)
		return
	}
	if err := cs.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("delete namespace %s: %v", name, err)
		return
	}
	ns, err = cs.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return
	}
	if err != nil {
		t.Errorf("namespace %s: %v", name, err)
		return
	}
	ns.Spec.Finalizers = nil
	if _, err := cs.CoreV1().Namespaces().Finalize(ctx, ns, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("finalize namespace %s: %v", name, err)
	}
}
