package cleanup

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/clusterdesk/clusterdesk/internal/editing"
	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// API deletes one object as the signed-in user (kube.Editor). There is no
// deletecollection here on purpose: it takes a label selector, not UIDs, so
// the API server would delete whatever matches when it runs, objects created
// (or replaced under the same name) after the preview included.
type API interface {
	// policy "" leaves propagation to the API server's default for the kind.
	Delete(ctx context.Context, k kube.Kind, name string, uid types.UID, dryRun bool, policy metav1.DeletionPropagation) (kube.WriteResult, error)
}

// Auditor records each deletion under the request's user.
type Auditor interface{ Record(w editing.Write) }

// Workers bounds the deletions in flight at once: enough to overlap round
// trips, few enough that one cleanup does not flood the API server. The
// user's Editor limits its deletions to kube.DeleteQPS a second too (the
// per-user clients' general 20 QPS would make 5,000 deletions take minutes).
const Workers = 8

// Service runs cleanups for one user.
type Service struct {
	API   API
	Audit Auditor
	// Done, when set, counts the objects whose deletion has finished, for a
	// page that shows a long cleanup's progress while it runs.
	Done *atomic.Int64
}

func (s *Service) finished(n int) {
	if s.Done != nil {
		s.Done.Add(int64(n))
	}
}

// Target is the kind a cleanup deletes. Namespaced kinds (custom resources)
// take each object's namespace from the object.
type Target struct {
	Kind       kube.Kind
	Namespaced bool
}

func (t Target) in(namespace string) kube.Kind {
	k := t.Kind
	if t.Namespaced {
		k.Namespace = namespace
	}
	return k
}

// Result is what became of one object.
type Result string

// Results, as the page words them.
const (
	WouldDelete Result = "would be deleted" // a dry run passed
	Deleted     Result = "deleted"
	NotFound    Result = "not found"
	Forbidden   Result = "forbidden"
	Conflict    Result = "conflict" // replaced under the same name: its UID differs
	Failed      Result = "failed"
)

// Outcome is one object's result.
type Outcome struct {
	Item     Candidate
	Result   Result
	Err      error
	Warnings []string
}

// resultOf classifies the API server's answer to one deletion.
func resultOf(err error, dry bool) Result {
	switch {
	case err == nil && dry:
		return WouldDelete
	case err == nil:
		return Deleted
	case apierrors.IsNotFound(err):
		return NotFound
	case apierrors.IsForbidden(err):
		return Forbidden
	case apierrors.IsConflict(err):
		// A failed UID precondition is a 409 Conflict: Preconditions.Check
		// fails with an InvalidObjError (k8s.io/apiserver/pkg/storage/
		// interfaces.go), which InterpretDeleteError turns into a Conflict
		// (k8s.io/apiserver/pkg/storage/errors/storage.go).
		return Conflict
	}
	return Failed
}

// DryRun asks the API server, as the user, whether each of items may be
// deleted (dryRun=All with the UID precondition): admission, RBAC per name and
// finalizer rules answer exactly as they would for the deletion. Dry runs are
// not recorded, like the single delete page's: looking is not an action.
func (s *Service) DryRun(ctx context.Context, t Target, items []Candidate) []Outcome {
	return s.each(ctx, t, items, true)
}

// Delete deletes exactly items as the user and reports each: one DELETE per
// object with its UID as a precondition, so that only an object the preview
// listed can go. An object deleted since is "not found"; one deleted and
// created again under its name has another UID and is refused by the API
// server (409, "conflict") and survives; one created since was never in
// items. The UID alone is the precondition, not the resourceVersion: an edit
// of a listed object (a label, an annotation, its status) leaves it the object
// the person chose to delete, whereas a resourceVersion precondition would
// refuse every object a controller touched since the preview (a status write
// bumps it) and make large cleanups fail for no reason the person can act on.
func (s *Service) Delete(ctx context.Context, t Target, items []Candidate) []Outcome {
	return s.each(ctx, t, items, false)
}

// each deletes (or dry-runs) every item with its UID as a precondition, at
// most Workers at a time, and keeps the order of items.
func (s *Service) each(ctx context.Context, t Target, items []Candidate, dry bool) []Outcome {
	out := make([]Outcome, len(items))
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range min(Workers, len(items)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				c := items[i]
				var (
					res kube.WriteResult
					err = ctx.Err()
				)
				if err == nil {
					res, err = s.API.Delete(ctx, t.in(c.Namespace), c.Name, types.UID(c.UID), dry, "")
				}
				out[i] = Outcome{Item: c, Result: resultOf(err, dry), Err: err, Warnings: res.Warnings}
				if !dry {
					s.record(t, c, err)
					s.finished(1)
				}
			}
		}()
	}
	for i := range items {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	return out
}

func (s *Service) record(t Target, c Candidate, err error) {
	if s.Audit == nil {
		return
	}
	name := c.Name
	if c.Namespace != "" {
		name = c.Namespace + "/" + c.Name
	}
	w := editing.NewWrite("delete", t.Kind, name)
	w.Namespace, w.Err = c.Namespace, err
	s.Audit.Record(w)
}

// Counts tallies outcomes by result.
func Counts(outcomes []Outcome) map[Result]int {
	n := map[Result]int{}
	for _, o := range outcomes {
		n[o.Result]++
	}
	return n
}

// ErrChanged is the confirmation of a set that is no longer the previewed one.
var ErrChanged = errors.New("the objects matching have changed since the preview")
