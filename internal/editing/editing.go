// Package editing is what the YAML editor's requests do, step by step, as the
// signed-in user: read the object, dry-run the write and stop where the user
// asked for a preview or the server would ignore part of the change, write it,
// read the current version after a conflict, rebase onto it, delete with the
// UID the user saw, and wait until the shared cache shows the write. Every
// write, dry runs included, goes to the audit trail with its "before" read
// from the API server. No HTTP, no templates: handlers parse and render.
package editing

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// API reads and writes whole objects as the signed-in user (kube.Writer).
type API interface {
	Get(ctx context.Context, k kube.Kind, name string) (*unstructured.Unstructured, error)
	Update(ctx context.Context, k kube.Kind, obj *unstructured.Unstructured, dryRun bool) (kube.WriteResult, error)
	Create(ctx context.Context, k kube.Kind, obj *unstructured.Unstructured, dryRun bool) (kube.WriteResult, error)
	Apply(ctx context.Context, k kube.Kind, obj *unstructured.Unstructured, dryRun, force bool) (kube.WriteResult, error)
	Delete(ctx context.Context, k kube.Kind, name string, uid types.UID, dryRun bool, policy metav1.DeletionPropagation) (kube.WriteResult, error)
	CountCustomResources(ctx context.Context, crd *unstructured.Unstructured) (kube.CRCount, error)
	Table(ctx context.Context, k kube.Kind, limit int64, cont, selector string) (*metav1.Table, error)
}

// Cache is the shared informer cache the pages read after a write.
type Cache interface {
	Meta(id kube.KindID, name string) (metav1.Object, error)
}

// Write is one write for the audit trail.
type Write struct {
	Verb   string // "create", "update", "apply", "apply-force", "delete"
	Kind   string // the API kind, "FlowSchema"
	Name   string
	Before string // resourceVersion the write started from, "" if none
	After  string // resourceVersion the API server answered with, "" if none
	DryRun bool
	Err    error

	// Group and Resource are the kind's API group and resource: they say
	// which kind the object is (audit.Record), its kind's name does not.
	// Namespace is a namespaced custom resource's.
	Group, Resource, Namespace string
	// Propagation is a deletion's propagationPolicy as sent ("" when none was).
	Propagation metav1.DeletionPropagation
	// From and To are the object before and after the write, nil when not
	// known. From comes from the API server (or the cache), never the browser.
	From, To runtime.Object
}

// Auditor records the writes of the request's user.
type Auditor interface {
	Record(w Write)
	// FromCache fills w.From (and w.Before when empty) from the shared cache
	// when the API server could not give the object before the write.
	FromCache(w *Write)
}

// Service runs the editor's requests for one user.
type Service struct {
	API   API
	Cache Cache
	Audit Auditor
	// Check refuses, before anything is sent, what the API server cannot
	// refuse for a kind: a CSRApprovalPolicy whose CEL does not compile is
	// valid to its CRD's schema, and would only fail where it runs (nil:
	// nothing checked).
	Check func(k kube.Kind, obj *unstructured.Unstructured, text string) error
}

// check runs the service's Check, if any.
func (s *Service) check(k kube.Kind, obj *unstructured.Unstructured, text string) error {
	if s.Check == nil {
		return nil
	}
	return s.Check(k, obj, text)
}

// Conflict is what a stale update meets: the object as it is now on the API
// server, or why it could not be read (deleted meanwhile, or no longer readable).
type Conflict struct {
	Current *unstructured.Unstructured
	Err     error
}

// apiVersion is the apiVersion of k's served version.
func apiVersion(k kube.Kind) string {
	if k.Group == "" {
		return k.Version
	}
	return k.Group + "/" + k.Version
}

// Read reads the object as the user, as the editor and the forms open it.
func (s *Service) Read(ctx context.Context, k kube.Kind, name string) (*unstructured.Unstructured, error) {
	return s.API.Get(ctx, k, name)
}

// before reads, as the user, the object a write is about to change: the
// "before" of its audit records. The form's base is the browser's word and
// only drives the diff the user is shown; the person being audited must not
// choose what their change is compared with.
//
// It is read from the API server, not the shared cache: the cache may lag,
// and it keeps a stripped copy (no last-applied annotation, shallow
// managedFields) that would show as a change of its own. One GET per request
// is the price. If the object changed between this read and the write, an
// update fails (it carries the starting resourceVersion) and records no diff;
// a server-side apply carries none, so a change landing in that gap would be
// included in its diff: the API server's audit log stays the authority.
func (s *Service) before(ctx context.Context, k kube.Kind, name string) *unstructured.Unstructured {
	obj, err := s.API.Get(ctx, k, name)
	if err != nil {
		// The write will fail the same way and say why; the audit still
		// tries the cache at the starting version.
		return nil
	}
	return obj
}

// from sets the record's "before" to the API server's object, and its starting
// resourceVersion to that object's (for an update the write's precondition
// makes them agree; a server-side apply sends none, so the form's would be
// the browser's word too).
func (w Write) from(obj *unstructured.Unstructured) Write {
	if obj != nil {
		w.From, w.Before = obj, obj.GetResourceVersion()
	}
	return w
}

func writeOf(verb string, k kube.Kind, name, before string, dryRun bool, res kube.WriteResult, err error) Write {
	w := NewWrite(verb, k, name)
	w.Before, w.DryRun, w.Err = before, dryRun, err
	if res.Object != nil {
		w.To, w.After = res.Object, res.Object.GetResourceVersion()
	}
	return w
}

// NewWrite is the audit record of verb on k's object name, with the kind's
// name, group and resource and a custom resource's namespace.
func NewWrite(verb string, k kube.Kind, name string) Write {
	return Write{Verb: verb, Kind: k.Singular, Group: k.Group, Resource: k.Resource, Namespace: k.Namespace, Name: name}
}

// CreateWrite is the audit record of a creation of obj.
func CreateWrite(k kube.Kind, obj *unstructured.Unstructured, dryRun bool, res kube.WriteResult, err error) Write {
	w := writeOf("create", k, obj.GetName(), "", dryRun, res, err)
	if res.Object != nil {
		w.Name = res.Object.GetName()
	}
	return w
}

// UpdateWrite is the audit record of an update of name started from before.
func UpdateWrite(k kube.Kind, name, before string, dryRun bool, res kube.WriteResult, err error) Write {
	return writeOf("update", k, name, before, dryRun, res, err)
}
