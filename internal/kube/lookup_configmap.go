package kube

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// ConfigMap GETs a ConfigMap as an unstructured object (what a
// ValidatingAdmissionPolicy sees as `params`); found is false when it does
// not exist.
func (l *Lookup) ConfigMap(ctx context.Context, namespace, name string) (map[string]any, bool, error) {
	cm, err := l.client.CoreV1().ConfigMaps(namespace).Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil, false, nil
	case err != nil:
		return nil, false, err
	}
	cm.APIVersion, cm.Kind = "v1", "ConfigMap"
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(cm)
	if err != nil {
		return nil, false, err
	}
	return obj, true, nil
}

// ConfigMap is Lookup.ConfigMap as the identity in ctx.
func (l UserLookup) ConfigMap(ctx context.Context, namespace, name string) (map[string]any, bool, error) {
	lk, err := l.lookup(ctx)
	if err != nil {
		return nil, false, err
	}
	return lk.ConfigMap(ctx, namespace, name)
}
