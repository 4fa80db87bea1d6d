package kube

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// YAML renders obj for display, without metadata.managedFields: they are server-side
// apply bookkeeping, often longer than the object itself. obj is not modified.
func YAML(obj runtime.Object) (string, error) {
	obj = obj.DeepCopyObject()
	m, err := meta.Accessor(obj)
	if err != nil {
		return "", fmt.Errorf("yaml: %w", err)
	}
	m.SetManagedFields(nil)
	out, err := yaml.Marshal(obj)
	if err != nil {
		return "", fmt.Errorf("yaml: %w", err)
	}
	return string(out), nil
}
