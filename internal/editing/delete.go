package editing

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// DeletePlan is what the delete confirmation shows: the live object (whose
// UID the deletion will carry), the API server's dry run of the deletion and,
// for a CRD, how many custom resources go with it.
type DeletePlan struct {
	Object    *unstructured.Unstructured
	DryRunErr error // the dry run's refusal; nil when it passed
	Warnings  []string
	// CRs counts a CRD's custom resources (Counted), or CountErr says why not.
	Counted  bool
	CRs      kube.CRCount
	CountErr error
}

// PlanDelete reads the live object and dry-runs its deletion. Showing the
// page is not an action: this dry run is not recorded (no audit line, no
// Event), or every visit, prefetch or crawler would write to the trail. The
// error is the read's; a refused dry run is in the plan.
func (s *Service) PlanDelete(ctx context.Context, k kube.Kind, name string) (DeletePlan, error) {
	obj, err := s.API.Get(ctx, k, name)
	if err != nil {
		return DeletePlan{}, err
	}
	p := DeletePlan{Object: obj}
	res, err := s.API.Delete(ctx, k, name, obj.GetUID(), true, Propagations[0])
	p.Warnings, p.DryRunErr = res.Warnings, err
	if k.ID == kube.CRDs {
		p.Counted = true
		p.CRs, p.CountErr = s.API.CountCustomResources(ctx, obj)
	}
	return p, nil
}

// Deletion is a confirmed deletion: the object the user saw, by UID.
type Deletion struct {
	Kind   kube.Kind
	Name   string
	UID    string
	Cached bool // the shared cache holds the kind: wait until it no longer shows the object
	// Propagation is what happens to the objects it owns (ParsePropagation;
	// "" is Background).
	Propagation metav1.DeletionPropagation
}

// Deleted is what a deletion did. When it failed, Plan is the confirmation
// page again (PlanErr when the object can no longer be read).
type Deleted struct {
	Warnings []string
	Plan     DeletePlan
	PlanErr  error
}

// Delete dry-runs the deletion again, then deletes only the object with the
// UID the user confirmed (a replaced object is a conflict, not a deletion).
// Both are recorded, with the object before read from the API server.
func (s *Service) Delete(ctx context.Context, d Deletion) (Deleted, error) {
	k, name, uid := d.Kind, d.Name, types.UID(d.UID)
	policy := d.Propagation
	if policy == "" {
		policy = Propagations[0]
	}
	res, err := s.API.Delete(ctx, k, name, uid, true, policy)
	// The object as the API server holds it before, read once for both
	// records; the cache at any version if it cannot be read.
	w := NewWrite("delete", k, name)
	w.DryRun, w.Err, w.Propagation = true, err, policy
	w = w.from(s.before(ctx, k, name))
	s.Audit.FromCache(&w)
	s.Audit.Record(w)
	if err == nil {
		res, err = s.API.Delete(ctx, k, name, uid, false, policy)
		w.DryRun, w.Err = false, err
		s.Audit.Record(w)
	}
	out := Deleted{Warnings: res.Warnings}
	if err != nil {
		out.Plan, out.PlanErr = s.PlanDelete(ctx, k, name)
		return out, err
	}
	// With Foreground the object stays, marked for deletion, until the
	// garbage collector has deleted what it owns: do not wait for it here.
	if d.Cached && policy != metav1.DeletePropagationForeground {
		awaitGone(ctx, s.Cache, k.ID, name, d.UID)
	}
	return out, nil
}
