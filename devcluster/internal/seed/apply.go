// Package seed fills a devcluster with objects for the console to show: the
// demo set kept in this package, and fixture manifests from disk.
package seed

import (
	"context"
	"fmt"
	"sort"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
)

// fieldManager names devcluster in managedFields of what it creates.
const fieldManager = "devcluster-seed"

// item is one object to create and the manifest it came from.
type item struct {
	source string
	obj    *unstructured.Unstructured
}

// Result counts the outcome of a load.
type Result struct {
	Created, Existing int
	Warnings          []string
}

func (r *Result) warn(format string, args ...any) {
	r.Warnings = append(r.Warnings, fmt.Sprintf(format, args...))
}

// createAll creates items in phase order. An object that already exists is
// left as it is, so seeding the same directory twice is harmless; any other
// failure becomes a warning and the rest still load.
func createAll(ctx context.Context, dyn dynamic.Interface, items []item, res *Result) {
	sort.SliceStable(items, func(i, j int) bool {
		_, ki, _ := resourceFor(items[i].obj)
		_, kj, _ := resourceFor(items[j].obj)
		return ki.phase < kj.phase
	})
	for _, it := range items {
		gvr, _, err := resourceFor(it.obj)
		if err != nil {
			res.warn("%s: %v", it.source, err)
			continue
		}
		_, err = dyn.Resource(gvr).Create(ctx, it.obj, metav1.CreateOptions{FieldManager: fieldManager})
		switch {
		case err == nil:
			res.Created++
		case apierrors.IsAlreadyExists(err):
			res.Existing++
		default:
			res.warn("%s: %s %s: %v", it.source, it.obj.GetKind(), it.obj.GetName(), err)
		}
	}
}
