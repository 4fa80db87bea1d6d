package seed

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
)

// Fixtures creates every object in the YAML and JSON files under root
// (recursively; files may hold several documents). A file that cannot be read
// or an object that cannot be created is a warning in the result, not an
// error. Webhook configurations are created with every webhook's
// failurePolicy forced to Ignore: their Services do not exist, and with Fail
// they would reject unrelated writes; ignored counts the webhooks changed.
func Fixtures(ctx context.Context, dyn dynamic.Interface, root string) (res Result, ignored int, err error) {
	var items []item
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !isManifest(path) {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		data, err := os.ReadFile(path)
		if err != nil {
			res.warn("%s: %v", rel, err)
			return nil
		}
		objs, err := Decode(data)
		if err != nil {
			res.warn("%s: %v", rel, err)
			return nil
		}
		for _, obj := range objs {
			n, err := ignoreWebhookFailures(obj)
			if err != nil {
				res.warn("%s: %v", rel, err)
				continue
			}
			ignored += n
			items = append(items, item{source: rel, obj: obj})
		}
		return nil
	})
	if err != nil {
		return res, ignored, fmt.Errorf("fixtures %s: %w", root, err)
	}
	createAll(ctx, dyn, items, &res)
	return res, ignored, nil
}

func isManifest(path string) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

// ignoreWebhookFailures sets failurePolicy to Ignore on every webhook of a
// validating or mutating webhook configuration and reports how many it
// changed; other objects are left alone.
func ignoreWebhookFailures(obj *unstructured.Unstructured) (int, error) {
	if obj.GroupVersionKind().Group != "admissionregistration.k8s.io" ||
		(obj.GetKind() != "ValidatingWebhookConfiguration" && obj.GetKind() != "MutatingWebhookConfiguration") {
		return 0, nil
	}
	webhooks, _, err := unstructured.NestedSlice(obj.Object, "webhooks")
	if err != nil {
		return 0, fmt.Errorf("%s %s: %w", obj.GetKind(), obj.GetName(), err)
	}
	changed := 0
	for _, w := range webhooks {
		hook, ok := w.(map[string]any)
		if !ok {
			return 0, fmt.Errorf("%s %s: webhook is %T, not an object", obj.GetKind(), obj.GetName(), w)
		}
		if hook["failurePolicy"] != "Ignore" {
			hook["failurePolicy"] = "Ignore"
			changed++
		}
	}
	return changed, unstructured.SetNestedSlice(obj.Object, webhooks, "webhooks")
}
