package kube

import (
	"context"
	"errors"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// Apply writes obj with server-side apply as field manager clusterdesk: the
// API server merges the fields in obj into the live object field by field and
// records clusterdesk as their owner. A field another manager (kubectl, a
// controller) owns and obj sets to a different value is a 409 Conflict whose
// details.causes name the manager and the field, unless force takes the field
// over. obj should carry no resourceVersion: with one, the API server also
// refuses the apply if the object changed since, which is the update mode's
// job. Unknown fields are refused (fieldValidation=Strict).
func (e *Editor) Apply(ctx context.Context, k Kind, obj *unstructured.Unstructured, dry, force bool) (WriteResult, error) {
	if obj.GetName() == "" {
		return WriteResult{}, errors.New("server-side apply needs metadata.name")
	}
	r, err := e.resource(k)
	if err != nil {
		return WriteResult{}, err
	}
	body, err := obj.MarshalJSON()
	if err != nil {
		return WriteResult{}, err
	}
	ctx, w := withWarnings(ctx)
	out, err := r.Patch(ctx, obj.GetName(), types.ApplyPatchType, body, metav1.PatchOptions{
		DryRun: dryRun(dry), Force: &force, FieldManager: FieldManager, FieldValidation: metav1.FieldValidationStrict,
	})
	return WriteResult{Object: out, Warnings: w.list()}, err
}
