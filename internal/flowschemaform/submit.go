// Package flowschemaform is what the FlowSchema form's Preview and Save do,
// step by step, as the signed-in user: read the live object, dry-run the
// write, retry once when the only change on the server since the form was
// opened is the API server's own status, stop where the server would store
// other values than typed, write, read the current version after a conflict,
// and wait until the shared cache shows the write. No HTTP, no templates.
package flowschemaform

import (
	"context"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/clusterdesk/clusterdesk/internal/apf"
	"github.com/clusterdesk/clusterdesk/internal/edit"
	"github.com/clusterdesk/clusterdesk/internal/editing"
	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// API reads and writes FlowSchemas as the signed-in user (kube.Writer).
type API interface {
	Get(ctx context.Context, k kube.Kind, name string) (*unstructured.Unstructured, error)
	Update(ctx context.Context, k kube.Kind, obj *unstructured.Unstructured, dryRun bool) (kube.WriteResult, error)
	Create(ctx context.Context, k kube.Kind, obj *unstructured.Unstructured, dryRun bool) (kube.WriteResult, error)
}

// Service runs the form's requests for one user.
type Service struct {
	API   API
	Cache editing.Cache
	Audit editing.Auditor
}

// Submission is one press of Preview or Save.
type Submission struct {
	Kind   kube.Kind // FlowSchemas, at the version discovery chose
	Name   string
	Create bool
	Spec   flowcontrolv1.FlowSchemaSpec // the form's fields, checked locally
	// ResourceVersion is the version an edit started from (required to update).
	ResourceVersion string
	// BaseText is that version's text as the editors show it ("" when
	// unknown): a conflict shows what changed since.
	BaseText string
	Save     bool // false: Preview, a dry run only
}

// Outcome is what a submission did. Written false (and no error): it stopped
// after the dry run, a preview or because the server would store other
// values than typed (Changed); Answer is the dry run's.
type Outcome struct {
	Live     *unstructured.Unstructured // an edit: the object before, as the API server had it
	Warnings []string
	Answer   *unstructured.Unstructured
	Changed  []string // apf.FormSpecFields the server would store differently
	// Changes says, by form field key (form.Key…), what the server would
	// store instead of what was typed; nil when nothing differs.
	Changes map[string][]string
	// ResourceVersion is the version the form now starts from: the one it
	// was opened at, or a newer one that differs only in what the server writes.
	ResourceVersion string
	Written         bool
	Stored          *unstructured.Unstructured // what the API server stored
	Name, After     string                     // the stored FlowSchema and its new resourceVersion
	Conflict        *editing.Conflict
}

// Read reads a FlowSchema as the user, to fill the form or to rebase it onto
// the current version.
func (s *Service) Read(ctx context.Context, k kube.Kind, name string) (*unstructured.Unstructured, error) {
	return s.API.Get(ctx, k, name)
}

// Submit previews or saves the form. Save runs the dry run first too: a
// refused object is shown, not half written. The error is the API server's
// refusal (a conflict with Outcome.Conflict) or the read's.
func (s *Service) Submit(ctx context.Context, sub Submission) (Outcome, error) {
	k := sub.Kind
	out := Outcome{ResourceVersion: sub.ResourceVersion}
	var live *unstructured.Unstructured
	if !sub.Create {
		var err error
		if live, err = s.API.Get(ctx, k, sub.Name); err != nil {
			return out, err
		}
		out.Live = live
	}
	obj, err := apf.FormObject(live, apiVersion(k), sub.Name, sub.Spec)
	if err != nil {
		return out, err
	}
	if !sub.Create {
		obj.SetResourceVersion(sub.ResourceVersion)
	}
	write := func(dryRun bool) (kube.WriteResult, editing.Write, error) {
		var res kube.WriteResult
		var w editing.Write
		var err error
		if sub.Create {
			res, err = s.API.Create(ctx, k, obj, dryRun)
			w = editing.CreateWrite(k, obj, dryRun, res, err)
		} else {
			res, err = s.API.Update(ctx, k, obj, dryRun)
			// The record's "before" is the object the API server returned, never the form's base.
			w = editing.UpdateWrite(k, obj.GetName(), out.ResourceVersion, dryRun, res, err)
			w.From = live
		}
		s.Audit.Record(w)
		return res, w, err
	}

	res, _, err := write(true)
	var current *currentRead
	if apierrors.IsConflict(err) && !sub.Create {
		// The API server writes a FlowSchema's status itself (its Dangling
		// condition, right after creation): a new version that reads the same
		// as the one the form started from is no one's change to protect.
		current = s.readCurrent(ctx, k, sub.Name, sub.BaseText)
		if current.unchanged() {
			rv := current.obj.GetResourceVersion()
			obj.SetResourceVersion(rv)
			out.ResourceVersion = rv
			current = nil // the retry may meet a newer version still
			res, _, err = write(true)
		}
	}
	out.Warnings = res.Warnings
	if err != nil {
		return s.failed(ctx, sub, out, current, err)
	}
	// Where the server would store other values than typed (a precedence of 0
	// becomes 1000), Save stops: the form says so beside each field.
	out.Changed, out.Changes = changedFields(sub.Spec, res.Object)
	if !sub.Save || out.Changed != nil {
		out.Answer = res.Object
		return out, nil
	}

	res, w, err := write(false)
	out.Warnings = res.Warnings
	if err != nil {
		return s.failed(ctx, sub, out, nil, err)
	}
	out.Written, out.Stored, out.Name, out.After = true, res.Object, w.Name, w.After
	from := out.ResourceVersion
	if sub.Create {
		from = ""
	}
	editing.AwaitWritten(ctx, s.Cache, k.ID, w.Name, from, w.After)
	return out, nil
}

// failed adds, to a conflict of an edit, the object as it is now (read
// again unless the retry check read it already).
func (s *Service) failed(ctx context.Context, sub Submission, out Outcome, current *currentRead, err error) (Outcome, error) {
	if !apierrors.IsConflict(err) || sub.Create {
		return out, err
	}
	if current == nil || !current.read {
		obj, rerr := s.API.Get(ctx, sub.Kind, sub.Name)
		current = &currentRead{obj: obj, err: rerr, read: true}
	}
	out.Conflict = &editing.Conflict{Current: current.obj, Err: current.err}
	return out, err
}

// currentRead is the FlowSchema as the server has it after a conflict.
type currentRead struct {
	obj  *unstructured.Unstructured
	err  error
	read bool   // false: there was no base to compare with, so it was not read
	text string // obj as the editors show it
	base string
}

// unchanged reports whether the FlowSchema on the server now reads, as the
// editors show it (without status, resourceVersion and managedFields),
// exactly as the version the form started from.
func (c *currentRead) unchanged() bool {
	return c.read && c.err == nil && c.text == c.base
}

func (s *Service) readCurrent(ctx context.Context, k kube.Kind, name, base string) *currentRead {
	if base == "" {
		return &currentRead{}
	}
	obj, err := s.API.Get(ctx, k, name)
	c := &currentRead{obj: obj, err: err, read: true, base: base}
	if err == nil {
		if c.text, err = edit.Text(obj, false); err != nil {
			c.read = false // read again to show the conflict; it is no proof of "unchanged"
		}
	}
	return c
}

// changedFields are the form's fields the dry run's answer stores otherwise,
// and what to say beside each (serverChanges). The answer is decoded here,
// once per submission.
func changedFields(sent flowcontrolv1.FlowSchemaSpec, answer *unstructured.Unstructured) ([]string, map[string][]string) {
	var got flowcontrolv1.FlowSchema
	if answer == nil || runtime.DefaultUnstructuredConverter.FromUnstructured(answer.Object, &got) != nil {
		return nil, nil
	}
	changed := apf.StoredDifferently(sent, got.Spec)
	return changed, serverChanges(sent, got.Spec, changed)
}

func apiVersion(k kube.Kind) string {
	if k.Group == "" {
		return k.Version
	}
	return k.Group + "/" + k.Version
}
