// Package writeaudit builds the audit record of each write made through the
// console (the YAML editor, the FlowSchema form, a cleanup, a CSR decision or
// certificate upload): who made it, the object before (the API server's
// answer, else the shared cache's object at that version) and after, the
// diff, a CSR's signer. The use cases (internal/editing, flowschemaform,
// cleanup, decide, issue) call it through their Auditor; it hands the record
// to internal/audit's Recorder, whose sinks feed the ledger. It knows no
// HTTP: the request's user comes with its context (kube.IdentityFrom).
package writeaudit

import (
	"context"
	"log/slog"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/clusterdesk/clusterdesk/internal/audit"
	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// write is one write performed through clusterdesk, for the audit trail.
type write struct {
	Verb string // "create", "update", "apply", "delete", "approve", "deny", "issue"
	Kind string // the API kind, "FlowSchema"
	Name string
	// Group and Resource say which kind the object is (kube.KindByResource);
	// Namespace is a namespaced custom resource's.
	Group, Resource, Namespace string
	Before                     string // resourceVersion the write started from, "" if none
	After                      string // resourceVersion the API server answered with, "" if none
	DryRun                     bool
	Err                        error

	Reason string // the approver's own text on a CSR decision
	// Propagation is a deletion's propagationPolicy as sent ("" when none was).
	Propagation string
	// From and To are the object before and after the write (nil when there
	// is none, or it is not known); they give the diff and the UID. Both come
	// from the API server (or its cache), never from the browser: the person
	// audited must not be able to write their own "before" (Trail.before).
	From, To runtime.Object
}

// Cache is what recording reads of the shared cache: the object before a
// write and the kinds' served versions.
type Cache interface {
	Kind(id kube.KindID) (kube.Kind, bool)
	Object(id kube.KindID, name string) (runtime.Object, error)
}

// Trail is where the writes made through clusterdesk are recorded, with only
// what recording reads. The handlers build one per server and give it to the
// features, which take the auditor of each request from it (For).
type Trail struct {
	Cache Cache
	// Recorder is the JSON line and the Kubernetes Event of each write; nil
	// logs one "write" line to Log instead.
	Recorder *audit.Recorder
	Log      *slog.Logger
	// User is who the console acts as: a request's user when its context
	// carries no identity (the sign-in middleware puts it there).
	User string
}

// who is the user and groups the request of ctx acts as.
func (t *Trail) who(ctx context.Context) (user string, groups []string) {
	id, ok := kube.IdentityFrom(ctx)
	if !ok {
		return t.User, nil
	}
	user = id.User
	if user == "" {
		user = t.User
	}
	return user, id.Groups
}

// record records one write (dry runs, denials and failures included) with who
// made it: the JSON line and the Kubernetes Event of the Recorder, or without
// one a structured log line.
func (t *Trail) record(ctx context.Context, r write) {
	user, groups := t.who(ctx)
	rec := audit.Record{
		User: user, Groups: groups, Verb: r.Verb, Kind: r.Kind, APIGroup: r.Group, Resource: r.Resource, Namespace: r.Namespace,
		Name: r.Name, Reason: r.Reason,
		RVBefore: r.Before, RVAfter: r.After, DryRun: r.DryRun, Propagation: r.Propagation,
	}
	rec.Finish(r.Err)
	if t.Recorder == nil {
		// group and resource last: the line's first fields keep the order
		// that people's (and the tests') searches of the log were written for.
		args := []any{"who", rec.User, "verb", r.Verb, "kind", r.Kind, "name", r.Name,
			"rvBefore", r.Before, "rvAfter", r.After, "dryRun", r.DryRun, "result", rec.Result, "err", errString(r.Err),
			"group", r.Group, "resource", r.Resource}
		if r.Propagation != "" {
			args = append(args, "propagation", r.Propagation)
		}
		t.Log.Info("write", args...)
		return
	}
	t.before(&r)
	rec.RVBefore = r.Before // before may have found it
	rec.APIVersion = t.apiVersion(r)
	rec.UID = uid(r.To, r.From)
	rec.Signer = signer(r.Group, r.Resource, r.To, r.From)
	_, ours := kube.KindByResource(r.Group, r.Resource)
	if ours && r.Err == nil && (!audit.IsNil(r.To) || r.Verb == "delete") {
		// A refused write changed nothing: a diff would claim it did. A
		// deletion's "after" is nothing, by design.
		//
		// Only the console's own kinds get a diff. A custom resource's body
		// may hold anything (a spec.password), and the API server's own audit
		// keeps custom resources at Metadata, without bodies
		// (deploy/audit-webhook/policy.yaml): the console's record of one
		// says who did what to which object and how it ended, as the API
		// server's does, and keeps no more of it than that.
		before, after := t.texts(r)
		rec.SetDiff(before, after)
	}
	t.Recorder.Record(rec)
}

// before finds the object before the write when the call site did not give
// it: the cached object if it is at the version the write started from (for a
// deletion, whatever version it has). Never the form's base: that is the
// browser's word.
func (t *Trail) before(r *write) {
	if !audit.IsNil(r.From) || r.Verb == "create" {
		return
	}
	// Only the console's kinds are cached; a custom resource of the same
	// kind name is not the cached object of that name.
	k, ok := kube.KindByResource(r.Group, r.Resource)
	if !ok {
		return
	}
	obj, err := t.Cache.Object(k.ID, r.Name)
	if err != nil || audit.IsNil(obj) {
		return
	}
	if m, ok := obj.(interface{ GetResourceVersion() string }); ok && (r.Before == "" || m.GetResourceVersion() == r.Before) {
		r.From = t.typed(k.ID, obj)
		if r.Before == "" && r.Verb != "approve" && r.Verb != "deny" {
			r.Before = m.GetResourceVersion()
		}
	}
}

// texts renders both sides of the diff the same way, without managedFields,
// resourceVersion and PEM data (audit.ObjectText).
func (t *Trail) texts(r write) (before, after string) {
	var err error
	if before, err = audit.ObjectText(r.From); err != nil {
		t.Log.Warn("audit: cannot render the object before the write", "kind", r.Kind, "name", r.Name, "err", err)
	}
	if after, err = audit.ObjectText(r.To); err != nil {
		t.Log.Warn("audit: cannot render the object after the write", "kind", r.Kind, "name", r.Name, "err", err)
	}
	return before, after
}

// apiVersion is the written object's apiVersion, from the objects or the
// kind's served version.
func (t *Trail) apiVersion(r write) string {
	for _, o := range []runtime.Object{r.To, r.From} {
		if u, ok := o.(*unstructured.Unstructured); ok && u != nil && u.GetAPIVersion() != "" {
			return u.GetAPIVersion()
		}
	}
	if k, ok := kube.KindByResource(r.Group, r.Resource); ok {
		if served, ok := t.Cache.Kind(k.ID); ok && served.Version != "" {
			return apiVersion(served)
		}
	}
	return ""
}

// apiVersion is the apiVersion of kind k's objects ("v1", "apps/v1").
func apiVersion(k kube.Kind) string {
	if k.Group == "" {
		return k.Version
	}
	return k.Group + "/" + k.Version
}

func uid(objs ...runtime.Object) string {
	for _, o := range objs {
		if audit.IsNil(o) {
			continue
		}
		if m, ok := o.(interface{ GetUID() types.UID }); ok && m.GetUID() != "" {
			return string(m.GetUID())
		}
	}
	return ""
}

// signer is a CSR's spec.signerName from the first of objs that has one, ""
// for any other kind (by group and resource: a custom resource may call its
// kind CertificateSigningRequest): the ledger's per-signer view lists the
// console's writes by it, decisions, uploads and YAML edits alike.
func signer(group, resource string, objs ...runtime.Object) string {
	if group != certificatesv1.GroupName || resource != "certificatesigningrequests" {
		return ""
	}
	for _, o := range objs {
		switch o := o.(type) {
		case *certificatesv1.CertificateSigningRequest:
			if o != nil && o.Spec.SignerName != "" {
				return o.Spec.SignerName
			}
		case *unstructured.Unstructured:
			if o == nil {
				continue
			}
			if s, _, _ := unstructured.NestedString(o.Object, "spec", "signerName"); s != "" {
				return s
			}
		}
	}
	return ""
}

// typed returns a cached object as unstructured with its apiVersion and kind
// (informers' objects carry none), so that it renders like the API server's
// answers.
func (t *Trail) typed(id kube.KindID, obj runtime.Object) runtime.Object {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return obj
	}
	u := &unstructured.Unstructured{Object: m}
	if k, ok := t.Cache.Kind(id); ok {
		u.SetAPIVersion(apiVersion(k))
		u.SetKind(k.Singular)
	}
	return u
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
