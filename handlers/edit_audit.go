package handlers

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/internal/audit"
	"github.com/clusterdesk/clusterdesk/internal/edit"
	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// writeRecord is one write performed through clusterdesk, for the audit trail.
type writeRecord struct {
	Verb   string // "create", "update", "apply", "delete", "approve", "deny"
	Kind   string // the API kind, "FlowSchema"
	Name   string
	Before string // resourceVersion the write started from, "" if none
	After  string // resourceVersion the API server answered with, "" if none
	DryRun bool
	Err    error

	Reason string // the approver's own text on a CSR decision
	// From and To are the object before and after the write (nil when there
	// is none, or it is not known); they give the diff and the UID.
	From, To runtime.Object
	// FromText is the editor text the user started from, when From is not
	// known; WithStatus says whether it shows status (else To's is left out).
	FromText   string
	WithStatus bool
}

// audit records one write (dry runs, denials and failures included) with who
// made it: the JSON line and the Kubernetes Event of deps.Audit, or without a
// recorder one structured log line.
func (h *Handlers) audit(c echo.Context, r writeRecord) {
	rec := audit.Record{
		User: h.user(c), Verb: r.Verb, Kind: r.Kind, Name: r.Name, Reason: r.Reason,
		RVBefore: r.Before, RVAfter: r.After, DryRun: r.DryRun,
	}
	if id, ok := kube.IdentityFrom(c.Request().Context()); ok {
		rec.Groups = id.Groups
	}
	rec.Finish(r.Err)
	if h.deps.Audit == nil {
		h.deps.Log.Info("write", "who", rec.User, "verb", r.Verb, "kind", r.Kind, "name", r.Name,
			"rvBefore", r.Before, "rvAfter", r.After, "dryRun", r.DryRun, "result", rec.Result, "err", errString(r.Err))
		return
	}
	h.auditBefore(c, &r)
	rec.RVBefore = r.Before // auditBefore may have found it
	rec.APIVersion = h.auditAPIVersion(r)
	rec.UID = auditUID(r.To, r.From)
	before, after := h.auditTexts(r)
	rec.SetDiff(before, after)
	h.deps.Audit.Record(rec)
}

// auditBefore finds the object before the write when the call site did not
// give it: for an update, the editor text the form started from, else the
// cached object if it is at the version the write started from; for a
// deletion, the cached object.
func (h *Handlers) auditBefore(c echo.Context, r *writeRecord) {
	if !audit.IsNil(r.From) || r.FromText != "" || r.Verb == "create" {
		return
	}
	if f := c.Request().PostForm; f != nil && f.Get("base") != "" && r.Before != "" {
		if text, err := edit.DecodeBase(f.Get("base")); err == nil {
			r.FromText, r.WithStatus = text, f.Get("status") == "1"
			return
		}
	}
	for _, k := range kube.AllKinds() {
		if k.Singular != r.Kind {
			continue
		}
		obj, err := h.deps.Cluster.Object(k.ID, r.Name)
		if err != nil || audit.IsNil(obj) {
			return
		}
		if m, ok := obj.(interface{ GetResourceVersion() string }); ok && (r.Before == "" || m.GetResourceVersion() == r.Before) {
			r.From = h.typed(k.ID, obj)
			if r.Before == "" && r.Verb != "approve" && r.Verb != "deny" {
				r.Before = m.GetResourceVersion()
			}
		}
		return
	}
}

// auditTexts renders both sides of the diff the same way, without managedFields,
// resourceVersion and PEM data (audit.ObjectText).
func (h *Handlers) auditTexts(r writeRecord) (before, after string) {
	var err error
	to := r.To
	if audit.IsNil(r.From) && r.FromText != "" {
		if before, err = scrubbedYAML(r.FromText); err != nil {
			before = ""
		}
		if u, ok := to.(*unstructured.Unstructured); ok && u != nil && !r.WithStatus {
			u = u.DeepCopy()
			unstructured.RemoveNestedField(u.Object, "status")
			to = u
		}
	} else if before, err = audit.ObjectText(r.From); err != nil {
		h.deps.Log.Warn("audit: cannot render the object before the write", "kind", r.Kind, "name", r.Name, "err", err)
	}
	if after, err = audit.ObjectText(to); err != nil {
		h.deps.Log.Warn("audit: cannot render the object after the write", "kind", r.Kind, "name", r.Name, "err", err)
	}
	return before, after
}

// scrubbedYAML re-renders editor text as audit.ObjectText renders objects.
func scrubbedYAML(text string) (string, error) {
	var m map[string]any
	if err := yaml.Unmarshal([]byte(text), &m); err != nil {
		return "", err
	}
	if m == nil {
		return "", nil
	}
	return audit.ObjectText(&unstructured.Unstructured{Object: m})
}

// auditAPIVersion is the written object's apiVersion, from the objects or the
// kind's served version.
func (h *Handlers) auditAPIVersion(r writeRecord) string {
	for _, o := range []runtime.Object{r.To, r.From} {
		if u, ok := o.(*unstructured.Unstructured); ok && u != nil && u.GetAPIVersion() != "" {
			return u.GetAPIVersion()
		}
	}
	for _, k := range kube.AllKinds() {
		if k.Singular == r.Kind {
			if served, ok := h.deps.Cluster.Kind(k.ID); ok && served.Version != "" {
				return apiVersion(served)
			}
		}
	}
	return ""
}

func auditUID(objs ...runtime.Object) string {
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

// typed returns a cached object as unstructured with its apiVersion and kind
// (informers' objects carry none), so that it renders like the API server's
// answers.
func (h *Handlers) typed(id kube.KindID, obj runtime.Object) runtime.Object {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return obj
	}
	u := &unstructured.Unstructured{Object: m}
	if k, ok := h.deps.Cluster.Kind(id); ok {
		u.SetAPIVersion(apiVersion(k))
		u.SetKind(k.Singular)
	}
	return u
}
