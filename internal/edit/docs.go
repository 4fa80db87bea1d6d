package edit

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/clusterdesk/clusterdesk/internal/crd"
	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// maxRefDepth bounds how deep references are inlined. Kubernetes schemas are
// recursive (a CRD's JSONSchemaProps holds JSONSchemaProps): a reference
// already being inlined further up stops there.
const maxRefDepth = 12

// FieldTree finds the schema of group/version kind in an OpenAPI v3 document
// from the API server and returns its fields as a tree, references inlined.
func FieldTree(doc []byte, group, version, kind string) (*crd.Node, error) {
	var d struct {
		Components struct {
			Schemas map[string]map[string]any `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, fmt.Errorf("OpenAPI document: %w", err)
	}
	schemas := d.Components.Schemas
	name := ""
	for n, s := range schemas {
		if hasGVK(s, group, version, kind) {
			name = n
			break
		}
	}
	if name == "" {
		return nil, fmt.Errorf("the OpenAPI document has no schema for %s/%s %s", group, version, kind)
	}
	inlined := inline(schemas[name], schemas, []string{name})
	raw, err := json.Marshal(inlined)
	if err != nil {
		return nil, err
	}
	var props apiextensionsv1.JSONSchemaProps
	if err := json.Unmarshal(raw, &props); err != nil {
		return nil, fmt.Errorf("schema of %s: %w", kind, err)
	}
	return crd.Tree(&props), nil
}

func hasGVK(s map[string]any, group, version, kind string) bool {
	gvks, _ := s["x-kubernetes-group-version-kind"].([]any)
	for _, g := range gvks {
		m, _ := g.(map[string]any)
		if m["group"] == group && m["version"] == version && m["kind"] == kind {
			return true
		}
	}
	return false
}

// inline replaces $ref (and the allOf: [{$ref}] Kubernetes wraps references
// in) by the referenced schema, keeping the referring schema's own
// description and default, down properties, items and additionalProperties.
func inline(s map[string]any, schemas map[string]map[string]any, stack []string) map[string]any {
	out := map[string]any{}
	for k, v := range s {
		out[k] = v
	}
	ref := refOf(s)
	if ref != "" {
		delete(out, "$ref")
		delete(out, "allOf")
		if target, ok := schemas[ref]; ok && len(stack) < maxRefDepth && !slices.Contains(stack, ref) {
			resolved := inline(target, schemas, append(stack, ref))
			for k, v := range resolved {
				if _, own := out[k]; !own || k != "description" && k != "default" {
					out[k] = v
				}
			}
		} else {
			out["type"] = "object"
			if slices.Contains(stack, ref) {
				out["description"] = strings.TrimSpace(fmt.Sprint(out["description"], "\n\n(The same structure as its enclosing field: see above.)"))
			}
		}
		return out
	}
	if props, ok := s["properties"].(map[string]any); ok {
		inl := map[string]any{}
		for k, v := range props {
			if m, ok := v.(map[string]any); ok {
				inl[k] = inline(m, schemas, stack)
			}
		}
		out["properties"] = inl
	}
	for _, key := range []string{"items", "additionalProperties"} {
		if m, ok := s[key].(map[string]any); ok {
			out[key] = inline(m, schemas, stack)
		}
	}
	return out
}

// refOf returns the component name s refers to, directly or through a
// one-element allOf.
func refOf(s map[string]any) string {
	ref, _ := s["$ref"].(string)
	if all, ok := s["allOf"].([]any); ok && ref == "" && len(all) == 1 {
		if m, ok := all[0].(map[string]any); ok {
			ref, _ = m["$ref"].(string)
		}
	}
	return strings.TrimPrefix(ref, "#/components/schemas/")
}

// Docs serves the docs panel's field trees, built once per server version and
// kind from the API server's OpenAPI v3 documents, laid out by tree (the
// presenter's present.DocTree). It is safe for concurrent use.
type Docs[T any] struct {
	fetch func(ctx context.Context, k kube.Kind, serverVersion string) ([]byte, error)
	tree  func(root *crd.Node) T

	mu    sync.Mutex
	trees map[string]T
}

// NewDocs returns Docs that read documents through o and lay them out with tree.
func NewDocs[T any](o *kube.OpenAPI, tree func(root *crd.Node) T) *Docs[T] {
	return &Docs[T]{fetch: o.Document, tree: tree, trees: map[string]T{}}
}

// Fields returns the field tree of k on the server of version serverVersion.
// The result is shared: callers must not change it.
func (d *Docs[T]) Fields(ctx context.Context, k kube.Kind, serverVersion string) (T, error) {
	key := serverVersion + " " + k.Group + "/" + k.Version + " " + k.Singular
	d.mu.Lock()
	tree, ok := d.trees[key]
	d.mu.Unlock()
	if ok {
		return tree, nil
	}
	var none T
	doc, err := d.fetch(ctx, k, serverVersion)
	if err != nil {
		return none, err
	}
	root, err := FieldTree(doc, k.Group, k.Version, k.Singular)
	if err != nil {
		return none, err
	}
	tree = d.tree(root)
	d.mu.Lock()
	d.trees[key] = tree
	d.mu.Unlock()
	return tree, nil
}
