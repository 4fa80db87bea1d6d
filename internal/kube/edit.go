package kube

import (
	"context"
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
)

// FieldManager names clusterdesk in managedFields of the objects it writes.
const FieldManager = "clusterdesk"

// Editor reads and writes whole objects of the console's kinds as one identity
// (the signed-in user's), through the dynamic client so that exactly the text
// the user wrote is sent, unknown fields included (which strict field
// validation then refuses). Every write can be a dry run (dryRun=All); each
// call returns the API server's Warning headers, also on error. Errors are the
// API server's (apierrors), untouched. It is safe for concurrent use.
type Editor struct {
	dyn  dynamic.Interface
	del  dynamic.Interface // Delete's own client: its rate limit is DeleteQPS
	meta metadata.Interface
	raw  rest.Interface // for what the typed clients cannot ask: the Table format
}

// DeleteQPS and DeleteBurst are the client-side rate limit of an Editor's
// deletions. A cleanup deletes each object it previewed by its own request
// with the object's UID as precondition (internal/cleanup), never by
// deletecollection; at the per-user client's 20 QPS (clientConfig) 5,000
// objects would take over four minutes. The number of deletions in flight is
// bounded by cleanup.Workers, and the API server's priority and fairness
// shares its capacity among users; this limit only keeps one user's cleanup
// from sending more than this many requests a second.
const (
	DeleteQPS   = 200
	DeleteBurst = 200
)

// WriteResult is the API server's answer to a write: the object as it stored
// it (or, in a dry run, would store it) and its warnings.
type WriteResult struct {
	Object   *unstructured.Unstructured
	Warnings []string
}

// NewEditor returns an Editor for the identity in cfg. It does no network I/O.
func NewEditor(cfg *rest.Config) (*Editor, error) {
	c := clientConfig(cfg)
	c.WarningHandler = nil
	c.WarningHandlerWithContext = warningCollector{}
	dyn, err := dynamic.NewForConfig(c)
	if err != nil {
		return nil, fmt.Errorf("editor client: %w", err)
	}
	meta, err := metadata.NewForConfig(c)
	if err != nil {
		return nil, fmt.Errorf("editor metadata client: %w", err)
	}
	raw, err := tableClient(c)
	if err != nil {
		return nil, fmt.Errorf("editor table client: %w", err)
	}
	dc := rest.CopyConfig(c)
	dc.QPS, dc.Burst = DeleteQPS, DeleteBurst
	del, err := dynamic.NewForConfig(dc)
	if err != nil {
		return nil, fmt.Errorf("editor delete client: %w", err)
	}
	return &Editor{dyn: dyn, del: del, meta: meta, raw: raw}, nil
}

// errNoVersion is returned for a flowcontrol kind before discovery chose its version.
var errNoVersion = errors.New("the API server's version of this kind is not known yet; try again in a moment")

func (e *Editor) resource(k Kind) (dynamic.ResourceInterface, error) {
	return e.resourceOf(e.dyn, k)
}

func (e *Editor) resourceOf(dyn dynamic.Interface, k Kind) (dynamic.ResourceInterface, error) {
	if k.Version == "" {
		return nil, fmt.Errorf("%s: %w", k.Title, errNoVersion)
	}
	r := dyn.Resource(schema.GroupVersionResource{Group: k.Group, Version: k.Version, Resource: k.Resource})
	if k.Namespace != "" {
		return r.Namespace(k.Namespace), nil
	}
	return r, nil
}

func dryRun(on bool) []string {
	if on {
		return []string{metav1.DryRunAll}
	}
	return nil
}

// Get reads the live object from the API server (not the cache: the editor
// must start from the newest version).
func (e *Editor) Get(ctx context.Context, k Kind, name string) (*unstructured.Unstructured, error) {
	r, err := e.resource(k)
	if err != nil {
		return nil, err
	}
	return r.Get(ctx, name, metav1.GetOptions{})
}

// Update replaces the object with obj. obj must carry the resourceVersion the
// user started from: the API server then refuses (409 Conflict) if anyone
// changed the object since, instead of silently undoing their change. Unknown
// or duplicate fields are refused (fieldValidation=Strict), not dropped.
func (e *Editor) Update(ctx context.Context, k Kind, obj *unstructured.Unstructured, dry bool) (WriteResult, error) {
	if obj.GetResourceVersion() == "" {
		// Without it the update would overwrite whatever is there.
		return WriteResult{}, errors.New("update without a resourceVersion refused: reload the editor")
	}
	r, err := e.resource(k)
	if err != nil {
		return WriteResult{}, err
	}
	ctx, w := withWarnings(ctx)
	out, err := r.Update(ctx, obj, metav1.UpdateOptions{DryRun: dryRun(dry), FieldValidation: metav1.FieldValidationStrict, FieldManager: FieldManager})
	return WriteResult{Object: out, Warnings: w.list()}, err
}

// Create creates obj, with the same strictness as Update.
func (e *Editor) Create(ctx context.Context, k Kind, obj *unstructured.Unstructured, dry bool) (WriteResult, error) {
	r, err := e.resource(k)
	if err != nil {
		return WriteResult{}, err
	}
	obj = obj.DeepCopy()
	// A copied object's version would make the create fail with a confusing message.
	obj.SetResourceVersion("")
	ctx, w := withWarnings(ctx)
	out, err := r.Create(ctx, obj, metav1.CreateOptions{DryRun: dryRun(dry), FieldValidation: metav1.FieldValidationStrict, FieldManager: FieldManager})
	return WriteResult{Object: out, Warnings: w.list()}, err
}

// Delete deletes the object name, but only if its UID is still uid: an object
// deleted and re-created under the same name meanwhile is not the one the user
// confirmed. policy is what the garbage collector does with the objects it
// owns (DeleteOptions.propagationPolicy); "" leaves it to the API server
// (Background for these kinds, as kubectl does).
func (e *Editor) Delete(ctx context.Context, k Kind, name string, uid types.UID, dry bool, policy metav1.DeletionPropagation) (WriteResult, error) {
	r, err := e.resourceOf(e.del, k)
	if err != nil {
		return WriteResult{}, err
	}
	ctx, w := withWarnings(ctx)
	opts := metav1.DeleteOptions{DryRun: dryRun(dry)}
	if policy != "" {
		opts.PropagationPolicy = &policy
	}
	if uid != "" {
		opts.Preconditions = &metav1.Preconditions{UID: &uid}
	}
	err = r.Delete(ctx, name, opts)
	return WriteResult{Warnings: w.list()}, err
}

// CRCount is how many custom resources a CRD holds.
type CRCount struct {
	Kind     string // "Widget"
	Resource string // "widgets.example.com"
	Count    int64
	AtLeast  bool // the server did not tell the total; Count is a lower bound
}

// CountCustomResources counts the custom resources of crd (in all namespaces)
// with a metadata-only LIST of one item: the API server reports the rest in
// remainingItemCount, so neither the objects nor even their metadata are sent.
func (e *Editor) CountCustomResources(ctx context.Context, crd *unstructured.Unstructured) (CRCount, error) {
	group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
	plural, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "plural")
	kind, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "kind")
	c := CRCount{Kind: kind, Resource: plural + "." + group}
	version := servedVersion(crd)
	if version == "" {
		// Nothing served, nothing to list; objects stored under an unserved
		// version cannot be counted through the API.
		return c, fmt.Errorf("%s serves no version, so its objects cannot be counted", crd.GetName())
	}
	list, err := e.meta.Resource(schema.GroupVersionResource{Group: group, Version: version, Resource: plural}).
		List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return c, err
	}
	c.Count = int64(len(list.Items))
	switch {
	case list.RemainingItemCount != nil:
		c.Count += *list.RemainingItemCount
	case list.Continue != "":
		c.AtLeast = true
	}
	return c, nil
}

// servedVersion prefers the storage version, then the first served one.
func servedVersion(crd *unstructured.Unstructured) string {
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	var served []string
	for _, v := range versions {
		m, ok := v.(map[string]any)
		if !ok {
			continue
		}
		name, _ := m["name"].(string)
		if s, _ := m["served"].(bool); !s {
			continue
		}
		if st, _ := m["storage"].(bool); st {
			return name
		}
		served = append(served, name)
	}
	if len(served) == 0 {
		return ""
	}
	return served[0]
}
