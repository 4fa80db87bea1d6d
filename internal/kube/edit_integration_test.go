//go:build integration

package kube

import (
	"context"
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

func editKind(id KindID) Kind {
	for _, k := range AllKinds() {
		if k.ID == id {
			if k.Version == "" {
				k.Version = "v1" // the devcluster (1.36) serves flowcontrol v1
			}
			return k
		}
	}
	panic(id)
}

func newTestEditor(t *testing.T, identity string) *Editor {
	t.Helper()
	e, err := NewEditor(testcluster.RestConfig(t, identity))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func editCSIDriver(name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver",
		"metadata": map[string]any{"name": name},
		"spec":     map[string]any{"attachRequired": false},
	}}
}

func editUniqueName(prefix string) string {
	return fmt.Sprintf("%s-%d.clusterdesk.test", prefix, time.Now().UnixNano())
}

func TestEditorDryRunsUpdatesAndDeletes(t *testing.T) {
	ctx := context.Background()
	e := newTestEditor(t, testcluster.Admin)
	k := editKind(CSIDrivers)
	name := editUniqueName("edit-kube")

	if _, err := e.Create(ctx, k, editCSIDriver(name), true); err != nil {
		t.Fatalf("dry-run create: %v", err)
	}
	if _, err := e.Get(ctx, k, name); !apierrors.IsNotFound(err) {
		t.Fatalf("after a dry-run create Get = %v, want NotFound", err)
	}
	created, err := e.Create(ctx, k, editCSIDriver(name), false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = e.Delete(context.Background(), k, name, "", false, "") })
	rv := created.Object.GetResourceVersion()

	changed := created.Object.DeepCopy()
	changed.SetLabels(map[string]string{"edited": "yes"})
	dry, err := e.Update(ctx, k, changed, true)
	if err != nil || dry.Object.GetLabels()["edited"] != "yes" {
		t.Fatalf("dry-run update: %v, labels %v", err, dry.Object.GetLabels())
	}
	if live, _ := e.Get(ctx, k, name); live.GetResourceVersion() != rv || live.GetLabels()["edited"] != "" {
		t.Fatalf("dry run changed the object: rv %s→%s, labels %v", rv, live.GetResourceVersion(), live.GetLabels())
	}
	real, err := e.Update(ctx, k, changed, false)
	if err != nil || real.Object.GetResourceVersion() == rv {
		t.Fatalf("update: %v (rv %s)", err, real.Object.GetResourceVersion())
	}
	// The same object again, from the version the first update started from.
	if _, err := e.Update(ctx, k, changed, false); !apierrors.IsConflict(err) {
		t.Fatalf("stale update: %v, want Conflict", err)
	}
	if _, err := e.Update(ctx, k, changed, true); !apierrors.IsConflict(err) {
		t.Fatalf("stale dry-run update: %v, want Conflict", err)
	}
	noRV := real.Object.DeepCopy()
	noRV.SetResourceVersion("")
	if _, err := e.Update(ctx, k, noRV, false); err == nil {
		t.Fatal("an update without resourceVersion was sent")
	}

	unknown := real.Object.DeepCopy()
	_ = unstructured.SetNestedField(unknown.Object, "x", "spec", "noSuchField")
	_, err = e.Update(ctx, k, unknown, true)
	if !apierrors.IsBadRequest(err) {
		t.Fatalf("unknown field: %v, want BadRequest (strict)", err)
	}
	t.Logf("unknown field: %v", err)

	if _, err := e.Delete(ctx, k, name, "not-the-uid", false, ""); !apierrors.IsConflict(err) {
		t.Fatalf("delete with another UID: %v, want Conflict (precondition)", err)
	}
	if _, err := e.Delete(ctx, k, name, real.Object.GetUID(), true, ""); err != nil {
		t.Fatalf("dry-run delete: %v", err)
	}
	if _, err := e.Get(ctx, k, name); err != nil {
		t.Fatalf("dry-run delete deleted: %v", err)
	}
	if _, err := e.Delete(ctx, k, name, real.Object.GetUID(), false, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Get(ctx, k, name); !apierrors.IsNotFound(err) {
		t.Fatalf("after delete Get = %v", err)
	}
}

func TestEditorCountsCustomResources(t *testing.T) {
	ctx := context.Background()
	e := newTestEditor(t, testcluster.Admin)
	k := editKind(CRDs)
	group := fmt.Sprintf("count%d.clusterdesk.test", time.Now().UnixNano())
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "gadgets." + group},
		"spec": map[string]any{
			"group": group, "scope": "Cluster",
			"names": map[string]any{"kind": "Gadget", "plural": "gadgets", "singular": "gadget", "listKind": "GadgetList"},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object"}}}},
		},
	}}
	if _, err := e.Create(ctx, k, crd, false); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = e.Delete(context.Background(), k, crd.GetName(), "", false, "") })

	dyn, err := dynamic.NewForConfig(testcluster.RestConfig(t, testcluster.Admin))
	if err != nil {
		t.Fatal(err)
	}
	gvr := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "gadgets"}
	// The new resource is served once the CRD is established.
	deadline := time.Now().Add(20 * time.Second)
	for i := 0; i < 3; {
		_, err := dyn.Resource(gvr).Create(ctx, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": group + "/v1", "kind": "Gadget", "metadata": map[string]any{"name": fmt.Sprintf("g%d", i)}}}, metav1.CreateOptions{})
		switch {
		case err == nil:
			i++
		case time.Now().After(deadline):
			t.Fatalf("create gadget: %v", err)
		default:
			time.Sleep(100 * time.Millisecond)
		}
	}
	n, err := e.CountCustomResources(ctx, crd)
	if err != nil || n.Count != 3 || n.AtLeast || n.Kind != "Gadget" || n.Resource != "gadgets."+group {
		t.Fatalf("count = %+v, %v; want 3 Gadgets", n, err)
	}
}
