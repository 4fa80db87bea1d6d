package editing

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/clusterdesk/clusterdesk/internal/edit"
	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// Change is one press of the editor's Preview, Apply or Create.
type Change struct {
	Kind kube.Kind // for a namespaced custom resource, Kind.Namespace is the object's namespace
	Name string    // "" to create
	Text string    // the user's YAML (edit.Normalize'd)
	// ResourceVersion is the version the user started from; an update
	// carries it as its precondition.
	ResourceVersion string
	// BaseText is the text the user started from ("" when unknown): what
	// their change is, to find the parts the server would not store.
	BaseText string
	DryRun   bool // Preview: stop after the dry run
	// Apply writes with server-side apply instead of an update; Force takes
	// over the fields other managers own, once ForceConfirmed.
	Apply, Force, ForceConfirmed bool
	// Namespaced kinds take a new object's namespace from its metadata.
	Namespaced bool
	// Cached says the shared cache holds the kind: a write waits until it shows it.
	Cached bool
}

// Outcome is what a change did. Written false with Answer set: it stopped
// after the dry run (a preview, or Ignored changes), nothing was stored.
type Outcome struct {
	Warnings []string
	Answer   *unstructured.Unstructured // the dry run's answer, when it stopped there
	Ignored  []edit.IgnoredChange       // changes the server would silently not store
	Written  bool
	// Name, Namespace and After name the stored object and its new resourceVersion.
	Name, Namespace, After string
	// Conflict is set when an update met a newer version (409).
	Conflict *Conflict
}

// Update previews or writes an existing object, in the change's write mode:
// an update guarded by the resourceVersion the user started from, or a
// server-side apply (field manager clusterdesk). The error is what the user
// is shown: their text's, the API server's refusal (a conflict with
// Outcome.Conflict), or a server-side apply conflict (edit.ApplyConflicts).
func (s *Service) Update(ctx context.Context, c Change) (Outcome, error) {
	k, name := c.Kind, c.Name
	obj, err := edit.Parse(c.Text, edit.Target{APIVersion: apiVersion(k), Kind: k.Singular, Name: name})
	if err != nil {
		return Outcome{}, err
	}
	if err := s.check(k, obj, c.Text); err != nil {
		return Outcome{}, err
	}
	if c.Apply {
		return s.apply(ctx, c, obj)
	}
	if c.ResourceVersion == "" {
		return Outcome{}, &edit.InputError{Title: "No starting version",
			Message: "The form does not say which version of the object you started from, so an update could overwrite someone else's change. Open the editor again."}
	}
	obj.SetResourceVersion(c.ResourceVersion)
	before := s.before(ctx, k, name)
	write := func(dryRun bool) (kube.WriteResult, Write, error) {
		res, err := s.API.Update(ctx, k, obj, dryRun)
		w := UpdateWrite(k, name, c.ResourceVersion, dryRun, res, err).from(before)
		s.Audit.Record(w)
		return res, w, err
	}
	out, w, err := s.dryRunThenWrite(c, obj, write)
	if apierrors.IsConflict(err) {
		out.Conflict = s.conflict(ctx, k, name)
	}
	if err != nil || !out.Written {
		return out, err
	}
	out.Name, out.After = name, w.After
	if c.Cached {
		AwaitWritten(ctx, s.Cache, k.ID, name, c.ResourceVersion, w.After)
	}
	return out, nil
}

// apply is Update with server-side apply. The text carries no resourceVersion:
// a change made meanwhile by someone else is not a conflict by itself; a field
// the text sets differently from the value another manager owns is.
func (s *Service) apply(ctx context.Context, c Change, obj *unstructured.Unstructured) (Outcome, error) {
	if c.Force && !c.ForceConfirmed {
		return Outcome{}, &edit.InputError{Title: "Force not confirmed",
			Message: "Tick the box that confirms taking the fields over from their managers, or change your text so it leaves their fields alone."}
	}
	k, name := c.Kind, c.Name
	obj.SetResourceVersion("")
	before := s.before(ctx, k, name)
	verb := "apply"
	if c.Force {
		verb = "apply-force"
	}
	write := func(dryRun bool) (kube.WriteResult, Write, error) {
		res, err := s.API.Apply(ctx, k, obj, dryRun, c.Force)
		w := writeOf(verb, k, name, c.ResourceVersion, dryRun, res, err).from(before)
		s.Audit.Record(w)
		return res, w, err
	}
	out, w, err := s.dryRunThenWrite(c, obj, write)
	if err != nil || !out.Written {
		return out, err
	}
	out.Name, out.After = name, w.After
	if c.Cached {
		AwaitWritten(ctx, s.Cache, k.ID, name, c.ResourceVersion, w.After)
	}
	return out, nil
}

// Create previews or creates the object of the change's text.
func (s *Service) Create(ctx context.Context, c Change) (Outcome, error) {
	k := c.Kind
	c.ResourceVersion, c.BaseText = "", ""
	obj, err := edit.Parse(c.Text, edit.Target{APIVersion: apiVersion(k), Kind: k.Singular})
	if err != nil {
		return Outcome{}, err
	}
	if err := s.check(k, obj, c.Text); err != nil {
		return Outcome{}, err
	}
	if c.Namespaced {
		if obj.GetNamespace() == "" {
			return Outcome{}, &edit.InputError{Title: "No namespace", Line: edit.Locate(c.Text, "metadata"),
				Message: "A " + k.Singular + " lives in a namespace: give it one in metadata.namespace."}
		}
		k.Namespace = obj.GetNamespace()
	}
	write := func(dryRun bool) (kube.WriteResult, Write, error) {
		res, err := s.API.Create(ctx, k, obj, dryRun)
		w := CreateWrite(k, obj, dryRun, res, err)
		s.Audit.Record(w)
		return res, w, err
	}
	out, w, err := s.dryRunThenWrite(c, obj, write)
	if err != nil || !out.Written {
		return out, err
	}
	out.Name, out.Namespace, out.After = w.Name, k.Namespace, w.After
	if c.Cached {
		AwaitWritten(ctx, s.Cache, k.ID, w.Name, "", w.After)
	}
	return out, nil
}

// dryRunThenWrite runs write as a dry run first, always: a write stops there
// when the user asked for a preview, or when the answer shows the server would
// silently keep its own value of a field the user changed (Ignored).
// Otherwise it writes for real.
func (s *Service) dryRunThenWrite(c Change, mine *unstructured.Unstructured, write func(dryRun bool) (kube.WriteResult, Write, error)) (Outcome, Write, error) {
	res, w, err := write(true)
	out := Outcome{Warnings: res.Warnings}
	if err != nil {
		return out, w, err
	}
	out.Ignored = ignored(c.BaseText, mine, res.Object)
	if c.DryRun || len(out.Ignored) > 0 {
		out.Answer = res.Object
		return out, w, nil
	}
	res, w, err = write(false)
	out.Warnings = res.Warnings
	out.Written = err == nil
	return out, w, err
}

// ignored lists the user's changes (from the base they started from) that the
// server's answer does not carry. Without a readable base there is nothing to
// compare with.
func ignored(baseText string, mine, result *unstructured.Unstructured) []edit.IgnoredChange {
	base := map[string]any{}
	if baseText != "" {
		var err error
		if base, err = edit.Fields(baseText); err != nil {
			return nil
		}
	}
	return edit.Ignored(base, mine.Object, result.Object)
}

// conflict reads the object as it is now, after a 409.
func (s *Service) conflict(ctx context.Context, k kube.Kind, name string) *Conflict {
	current, err := s.API.Get(ctx, k, name)
	return &Conflict{Current: current, Err: err}
}
