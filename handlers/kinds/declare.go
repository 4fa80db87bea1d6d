package kinds

import (
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/clusterdesk/clusterdesk/handlers/ports"
	"github.com/clusterdesk/clusterdesk/internal/cleanup"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// Kind is one kind's declaration in the web layer: how the console shows,
// searches, updates live, edits and cleans up its objects. Its API facts
// (names, versions, informer) are internal/kube's (kinds.go), under the same
// ID; registry_test.go fails while the two, or the files that follow them,
// disagree.
type Kind struct {
	ID kube.KindID
	// Shortcut is the key after "g" that opens the list.
	Shortcut string
	// ReadOnly kinds are shown but never edited through the console: no New,
	// Edit or Delete control, no cleanup, and the editor routes answer 404
	// for them. Every other kind needs an example for its create page
	// (internal/edit/examples.go).
	ReadOnly bool

	// List and Detail build the generic list and detail pages from the cache.
	List   func(ports.Cluster, present.ListQuery, time.Time) (model.ListPage, error)
	Detail func(ports.Cluster, string, time.Time) (model.DetailPage, error)
	// Row renders one object's list row for live updates.
	Row RowFunc
	// Objects lists the cached objects' metadata, for search.
	Objects func(ports.Cluster) ([]metav1.Object, error)
	// Candidates lists the cached objects as cleanup candidates; nil for
	// read-only kinds, which offer no cleanup.
	Candidates func(ports.Cluster) ([]cleanup.Candidate, error)
}

// RowFunc renders one object's list row; found is false for an object that
// no longer exists.
type RowFunc func(c ports.Cluster, name string, now time.Time) (row model.Row, found bool, err error)

// access is how a kind's objects are read from the cache as T: the Cluster's
// typed methods, or cachedAs for a kind that has none.
type access[T metav1.Object] struct {
	list func(ports.Cluster) ([]T, error)
	get  func(ports.Cluster, string) (T, error)
	// whole, when set, reads the object for its detail page instead of get:
	// for a kind whose cache keeps parts out (CRD schemas).
	whole func(ports.Cluster, string) (T, error)
}

// detailFrom reads the detail page's object with whole.
func (a access[T]) detailFrom(whole func(ports.Cluster, string) (T, error)) access[T] {
	a.whole = whole
	return a
}

// typed reads a kind through its Cluster methods.
func typed[T metav1.Object](list func(ports.Cluster) ([]T, error), get func(ports.Cluster, string) (T, error)) access[T] {
	return access[T]{list: list, get: get}
}

// cachedAs reads kind id through Cluster.List and Cluster.Get, for a kind no
// page needs typed access to outside the registry: a new kind needs no
// method on ports.Cluster.
func cachedAs[T interface {
	metav1.Object
	runtime.Object
}](id kube.KindID) access[T] {
	return access[T]{
		list: func(c ports.Cluster) ([]T, error) {
			objs, err := c.List(id)
			if err != nil {
				return nil, err
			}
			out := make([]T, 0, len(objs))
			for _, o := range objs {
				t, ok := o.(T)
				if !ok {
					return nil, fmt.Errorf("kind %s: cached %T, want %T", id, o, t)
				}
				out = append(out, t)
			}
			return out, nil
		},
		get: func(c ports.Cluster, name string) (T, error) {
			var zero T
			o, err := c.Get(id, name)
			if err != nil {
				return zero, err
			}
			t, ok := o.(T)
			if !ok {
				return zero, fmt.Errorf("kind %s: cached %T, want %T", id, o, zero)
			}
			return t, nil
		},
	}
}

// declare wires a kind's cache access to its list and detail presenters; the
// live row is the row of a one-object list, search and cleanup read
// the same list.
func declare[T metav1.Object](
	id kube.KindID, shortcut string,
	read access[T],
	listPage func([]T, present.ListQuery, time.Time) model.ListPage,
	detailPage func(ports.Cluster, T, time.Time) model.DetailPage,
) Kind {
	whole := read.get
	if read.whole != nil {
		whole = read.whole
	}
	return Kind{
		ID: id, Shortcut: shortcut,
		List: func(c ports.Cluster, q present.ListQuery, now time.Time) (model.ListPage, error) {
			items, err := read.list(c)
			if err != nil {
				return model.ListPage{}, err
			}
			// The label selector filters the cached objects before the
			// presenter sees them; the total stays the kind's.
			page := listPage(present.Selected(items, q), q, now)
			page.Total = len(items)
			return page, nil
		},
		Detail: func(c ports.Cluster, name string, now time.Time) (model.DetailPage, error) {
			o, err := whole(c, name)
			if err != nil {
				return model.DetailPage{}, err
			}
			return detailPage(c, o, now), nil
		},
		Row: rowOf(read.get, listPage),
		Objects: func(c ports.Cluster) ([]metav1.Object, error) {
			items, err := read.list(c)
			if err != nil {
				return nil, err
			}
			out := make([]metav1.Object, len(items))
			for i, o := range items {
				out[i] = o
			}
			return out, nil
		},
		Candidates: func(c ports.Cluster) ([]cleanup.Candidate, error) {
			items, err := read.list(c)
			if err != nil {
				return nil, err
			}
			out := make([]cleanup.Candidate, len(items))
			for i, o := range items {
				out[i] = cleanup.CandidateOf(o)
			}
			return out, nil
		},
	}
}

// rowOf builds a RowFunc from a kind's getter and list presenter: the row of a
// one-object list is exactly the row the full list shows.
func rowOf[T any](get func(ports.Cluster, string) (T, error), list func([]T, present.ListQuery, time.Time) model.ListPage) RowFunc {
	return func(c ports.Cluster, name string, now time.Time) (model.Row, bool, error) {
		o, err := get(c, name)
		if apierrors.IsNotFound(err) {
			return model.Row{}, false, nil
		}
		if err != nil {
			return model.Row{}, false, err
		}
		p := list([]T{o}, present.ListQuery{}, now)
		if len(p.Rows) != 1 {
			return model.Row{}, false, fmt.Errorf("live: %T list of one gave %d rows", o, len(p.Rows))
		}
		return p.Rows[0], true, nil
	}
}

// withCandidates sets how a kind's cleanup reads its objects, for a kind
// whose filters need more than metadata (CSR state and signer).
func withCandidates(k Kind, candidates func(ports.Cluster) ([]cleanup.Candidate, error)) Kind {
	k.Candidates = candidates
	return k
}

// plain adapts a presenter that needs nothing but the object.
func plain[T any](f func(T, time.Time) model.DetailPage) func(ports.Cluster, T, time.Time) model.DetailPage {
	return func(_ ports.Cluster, o T, now time.Time) model.DetailPage { return f(o, now) }
}

// readOnly marks a kind the console never edits (nor cleans up).
func readOnly(k Kind) Kind {
	k.ReadOnly, k.Candidates = true, nil
	return k
}
