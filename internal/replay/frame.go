package replay

import (
	"cmp"
	"context"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apiserver/pkg/admission"

	"github.com/clusterdesk/clusterdesk/internal/celmatch"
	"github.com/clusterdesk/clusterdesk/internal/ledger"
)

// Counts are what every replay counts of the writes it scanned, whatever it
// replays them against (a policy, a webhook configuration).
type Counts struct {
	Scanned, Replayed int64
	Skipped           map[string]int64 // by Skip* reason
	// OldUnknown counts updates and deletes evaluated without the object
	// before them (its previous write was not recorded); NamespaceGone the
	// requests in a namespace that no longer exists (no labels today).
	OldUnknown, NamespaceGone int64
}

// frame is what every replay does with a recorded write before a version
// decides it: count it, report progress, leave out what the person may not
// list, skip what admission never saw, and build the request as the
// upstream matchers take it with its namespace as it is today.
type frame struct {
	counts   *Counts
	progress func(Progress)
	// total is the window's writes, counted when progress is reported.
	total   int64
	mayList func(group, resource string) bool
	ns      namespaces
	// listable memoizes mayList per group and resource: a replay asks it
	// once per resource, not per write.
	listable map[[2]string]bool
	last     time.Time
}

func newFrame(counts *Counts, progress func(Progress), mayList func(group, resource string) bool, todays []*corev1.Namespace) *frame {
	counts.Skipped = map[string]int64{}
	ns := namespaces{}
	for _, n := range todays {
		ns[n.Name] = n
	}
	return &frame{counts: counts, progress: progress, mayList: mayList, ns: ns, listable: map[[2]string]bool{}}
}

// admitted is one recorded write ready for the versions to decide.
type admitted struct {
	req celmatch.Request
	va  *admission.VersionedAttributes
	// ns is the request's namespace today (nil for a cluster-scoped
	// request and for a namespace itself).
	ns *corev1.Namespace
}

// admit counts w and returns it as the versions take it; ok is false when
// w is not replayed (hidden from the person, or skipped and counted).
func (f *frame) admit(w *ledger.Write) (a admitted, ok bool) {
	f.counts.Scanned++
	f.last = w.Time
	if f.progress != nil && f.counts.Scanned%ProgressEvery == 0 {
		f.progress(Progress{Scanned: f.counts.Scanned, Total: f.total, At: w.Time})
	}
	if f.mayList != nil && !f.listed(w.APIGroup, w.Resource) {
		return a, false
	}
	if reason := skip(w); reason != "" {
		f.counts.Skipped[reason]++
		return a, false
	}
	req, ok := request(w)
	if !ok {
		f.counts.Skipped[SkipUnreadable]++
		return a, false
	}
	f.counts.Replayed++
	if w.OldObject == nil && w.Operation != ledger.OpCreate {
		f.counts.OldUnknown++
	}
	if w.Namespace != "" && !(w.APIGroup == "" && w.Resource == "namespaces") {
		if n, ok := f.ns[w.Namespace]; ok {
			a.ns = n
		} else {
			f.counts.NamespaceGone++
			a.ns = &corev1.Namespace{}
			a.ns.Name = w.Namespace
		}
	}
	return admitted{req: req, va: celmatch.VersionedAttributes(req), ns: a.ns}, true
}

func (f *frame) listed(group, resource string) bool {
	k := [2]string{group, resource}
	ok, asked := f.listable[k]
	if !asked {
		ok = f.mayList(group, resource)
		f.listable[k] = ok
	}
	return ok
}

// done reports the end of a replay that was not cut short.
// countWindow counts the writes of the window before a replay whose
// progress is reported, so that it can say how many of how many it read.
// A time-based measure misleads: writes crowd the end of a 7-day window of
// a console installed yesterday, and the bar stood at 98% a third of the
// way through.
func (f *frame) countWindow(ctx context.Context, writes ledger.WriteStore, window ledger.WriteQuery) error {
	if f.progress == nil {
		return nil
	}
	n, err := writes.CountWrites(ctx, window)
	if err != nil {
		return err
	}
	f.total = n
	f.progress(Progress{Total: n})
	return nil
}

func (f *frame) done(err error) {
	if f.progress != nil && err == nil {
		f.progress(Progress{Scanned: f.counts.Scanned, Total: f.total, At: f.last, Done: true})
	}
}

// groupsOf returns the groups of m, most changes first, then by key: the
// order every replay's page lists them in.
func groupsOf[G any](m map[GroupKey]*G, total func(*G) int64) []G {
	keys := make([]GroupKey, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b GroupKey) int {
		return cmp.Or(cmp.Compare(total(m[b]), total(m[a])), cmp.Compare(a.User, b.User), cmp.Compare(a.Namespace, b.Namespace),
			cmp.Compare(a.Resource, b.Resource), cmp.Compare(a.Operation, b.Operation))
	})
	out := make([]G, 0, len(keys))
	for _, k := range keys {
		out = append(out, *m[k])
	}
	return out
}

// groupKey is the group of w's change.
func groupKey(w *ledger.Write) GroupKey {
	return GroupKey{User: w.User, Namespace: w.Namespace, Resource: resourceName(w), Operation: w.Operation}
}
