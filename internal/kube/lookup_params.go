package kube

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ParamResource maps a ValidatingAdmissionPolicy's paramKind (apiVersion and
// kind) to its resource and scope, from the discovery document of that one
// group version (what a discovery RESTMapper's RESTMapping reads for it,
// without fetching every group). found is false when the API server serves no
// such kind.
func (l *Lookup) ParamResource(ctx context.Context, apiVersion, kind string) (gvr schema.GroupVersionResource, namespaced, found bool, err error) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return gvr, false, false, err
	}
	if err := ctx.Err(); err != nil {
		return gvr, false, false, err
	}
	list, err := l.client.Discovery().ServerResourcesForGroupVersion(apiVersion)
	switch {
	case apierrors.IsNotFound(err):
		return gvr, false, false, nil
	case err != nil:
		return gvr, false, false, err
	}
	for _, r := range list.APIResources {
		if r.Kind == kind && !isSubresource(r.Name) {
			return gv.WithResource(r.Name), r.Namespaced, true, nil
		}
	}
	return gvr, false, false, nil
}

func isSubresource(name string) bool {
	for _, c := range name {
		if c == '/' {
			return true
		}
	}
	return false
}

// MaxParams bounds how many param objects a label selector may bring into one
// simulation (each is one evaluation of the policy).
const MaxParams = 100

// Params reads param objects of resource gvr as unstructured objects (what a
// policy sees as `params`), through the dynamic client as the identity in
// the Lookup's config: the one named name (none when it does not exist), or
// those selected by selector when name is "". namespace is "" for a
// cluster-scoped kind. More than MaxParams selected is an error.
func (l *Lookup) Params(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string, selector labels.Selector) ([]map[string]any, error) {
	res := l.dynamic.Resource(gvr).Namespace(namespace)
	if name != "" {
		obj, err := res.Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return nil, nil
		case err != nil:
			return nil, err
		}
		return []map[string]any{obj.Object}, nil
	}
	list, err := res.List(ctx, metav1.ListOptions{LabelSelector: selector.String(), Limit: MaxParams + 1})
	if err != nil {
		return nil, err
	}
	if len(list.Items) > MaxParams || list.GetContinue() != "" {
		return nil, fmt.Errorf("the selector matches more than %d objects", MaxParams)
	}
	out := make([]map[string]any, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, list.Items[i].Object)
	}
	return out, nil
}

// ParamResource is Lookup.ParamResource as the identity in ctx.
func (l UserLookup) ParamResource(ctx context.Context, apiVersion, kind string) (schema.GroupVersionResource, bool, bool, error) {
	lk, err := l.lookup(ctx)
	if err != nil {
		return schema.GroupVersionResource{}, false, false, err
	}
	return lk.ParamResource(ctx, apiVersion, kind)
}

// Params is Lookup.Params as the identity in ctx.
func (l UserLookup) Params(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string, selector labels.Selector) ([]map[string]any, error) {
	lk, err := l.lookup(ctx)
	if err != nil {
		return nil, err
	}
	return lk.Params(ctx, gvr, namespace, name, selector)
}
