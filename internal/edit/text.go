package edit

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// Text renders obj as editor text: without metadata.managedFields (server-side
// apply bookkeeping, often longer than the object), without
// metadata.resourceVersion (the editor keeps the version it started from in a
// hidden field, so the text cannot pin a stale one), and without status unless
// showStatus (the API server ignores status in an update of these kinds). obj is
// not modified. Keys are sorted, so the same object always gives the same text.
func Text(obj *unstructured.Unstructured, showStatus bool) (string, error) {
	c := obj.DeepCopy()
	unstructured.RemoveNestedField(c.Object, "metadata", "managedFields")
	unstructured.RemoveNestedField(c.Object, "metadata", "resourceVersion")
	if !showStatus {
		unstructured.RemoveNestedField(c.Object, "status")
	}
	out, err := yaml.Marshal(c.Object)
	if err != nil {
		return "", fmt.Errorf("render %s %s as YAML: %w", obj.GetKind(), obj.GetName(), err)
	}
	return string(out), nil
}
