// Package seed fills a devcluster with objects for the console to show: the
// demo set kept in this package, and fixture manifests from disk.
package seed

import (
	"context"
	"fmt"
	"sort"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"
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
	NotServed         int // objects of kinds this server does not serve (kind.newer)
}

func (r *Result) warn(format string, args ...any) {
	r.Warnings = append(r.Warnings, fmt.Sprintf(format, args...))
}

// olderVersion is the version to create an object with when the API server
// does not serve the manifest's version. flowcontrol.apiserver.k8s.io v1beta3
// has v1's fields (v1 only made nominalConcurrencyShares a pointer), and
// Kubernetes 1.26-1.28 serve v1beta3 but not v1.
var olderVersion = map[schema.GroupVersion]schema.GroupVersion{
	{Group: "flowcontrol.apiserver.k8s.io", Version: "v1"}: {Group: "flowcontrol.apiserver.k8s.io", Version: "v1beta3"},
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
		gvr, k, err := resourceFor(it.obj)
		if err != nil {
			res.warn("%s: %v", it.source, err)
			continue
		}
		// A starved API server may give up on a create (CI1 of stop 59:
		// a CRD with a megabyte schema timed out after 60 s while the
		// machine compiled beside it): try again. The object may or may not
		// have been written; AlreadyExists below covers the case it was.
		err = retry.OnError(transientBackoff, transient, func() error {
			_, err := dyn.Resource(gvr).Create(ctx, it.obj, metav1.CreateOptions{FieldManager: fieldManager})
			return err
		})
		for deadline := time.Now().Add(20 * time.Second); k.custom && apierrors.IsNotFound(err) && time.Now().Before(deadline); {
			// The CRD was created a moment ago and is not served yet.
			time.Sleep(200 * time.Millisecond)
			_, err = dyn.Resource(gvr).Create(ctx, it.obj, metav1.CreateOptions{FieldManager: fieldManager})
		}
		if older, ok := olderVersion[gvr.GroupVersion()]; ok && apierrors.IsNotFound(err) {
			// The version is not served (flowcontrol v1 on Kubernetes 1.28):
			// the older one has the same schema, so the same object loads.
			obj := it.obj.DeepCopy()
			obj.SetAPIVersion(older.String())
			_, err = dyn.Resource(older.WithResource(gvr.Resource)).Create(ctx, obj, metav1.CreateOptions{FieldManager: fieldManager})
		}
		switch {
		case err == nil:
			res.Created++
		case apierrors.IsAlreadyExists(err):
			res.Existing++
		case k.newer && apierrors.IsNotFound(err):
			res.NotServed++
		default:
			res.warn("%s: %s %s: %v", it.source, it.obj.GetKind(), it.obj.GetName(), err)
		}
	}
}

// transientBackoff: a create the API server could not finish (a timeout,
// 429, 5xx) is tried 4 times in all, a second apart, before it becomes a
// warning.
var transientBackoff = wait.Backoff{Steps: 4, Duration: time.Second, Factor: 1}

// transient tells the API server's "try again" answers from a refusal of the
// object: a warning there would leave a seeded cluster silently short of an
// object that tests count on.
func transient(err error) bool {
	return apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) || apierrors.IsTooManyRequests(err) ||
		apierrors.IsServiceUnavailable(err) || apierrors.IsInternalError(err)
}
