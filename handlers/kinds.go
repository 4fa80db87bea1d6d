package handlers

import (
	"fmt"
	"time"

	"github.com/labstack/echo/v4"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/clusterdesk/clusterdesk/handlers/insight"
	"github.com/clusterdesk/clusterdesk/internal/cleanup"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// kindPages is one entry of the kind registry's presentation half: how the
// console shows, searches, updates live and edits one kind. The client-go half
// (API names, versions, informer) is internal/kube/kinds.go; routes,
// navigation, search, activity, live rows, shortcuts and the editor all read
// these two, so adding a kind is an entry in each plus its presenters (and the
// few files the registry's tests hold to it: see internal/kube/kinds.go).
type kindPages struct {
	id kube.KindID
	// shortcut is the key after "g" that opens the list ("" for none).
	shortcut string
	// readOnly kinds are shown but never edited through the console: no New,
	// Edit or Delete control, and the editor routes answer 404 for them.
	// Every other kind needs an example for its create page (edit.Example).
	readOnly bool

	list   func(Cluster, present.ListQuery, time.Time) (model.ListPage, error)
	detail func(Cluster, string, time.Time) (model.DetailPage, error)
	// live, when set, builds the detail page instead of detail: for kinds
	// whose page adds direct lookups (handlers/insight, details.go).
	live func(*insight.Handlers, echo.Context, string, time.Time) (model.DetailPage, error)
	// row renders one object's list row for live updates.
	row rowFunc
	// page, when set, replaces the generic detail page, and ownRows the
	// generic live rows: for a kind with pages of its own (the CSR page, and
	// the queue, whose rows handlers/live renders from the queue's index).
	page    func(*Handlers, echo.Context) error
	ownRows bool
	// objects lists the cached objects' metadata, for search and activity.
	objects func(Cluster) ([]metav1.Object, error)
	// candidates lists the cached objects as cleanup candidates (cleanup.go);
	// nil for read-only kinds, which offer no cleanup.
	candidates func(Cluster) ([]cleanup.Candidate, error)
	// listMetrics and detailMetrics, when set, add what the API server's
	// /metrics says about the kind's objects (APF load, webhook health).
	// listMetrics decorates a list page with the user's view of the load
	// (columns and cells): the full list, and the one-row lists of live rows,
	// which users who may read /metrics receive on metricsRowsTopic.
	listMetrics   listMetricsFunc
	detailMetrics func(*Handlers, echo.Context, kube.KindID, string, *model.DetailPage)
}

// kindAccess is how a kind's objects are read from the cache as T: the
// Cluster's typed methods, or cachedAs for a kind that has none.
type kindAccess[T metav1.Object] struct {
	list func(Cluster) ([]T, error)
	get  func(Cluster, string) (T, error)
	// whole, when set, reads the object for its detail page instead of get:
	// for a kind whose cache keeps parts out (CRD schemas).
	whole func(Cluster, string) (T, error)
}

// detailFrom reads the detail page's object with whole.
func (a kindAccess[T]) detailFrom(whole func(Cluster, string) (T, error)) kindAccess[T] {
	a.whole = whole
	return a
}

// typed reads a kind through its Cluster methods.
func typed[T metav1.Object](list func(Cluster) ([]T, error), get func(Cluster, string) (T, error)) kindAccess[T] {
	return kindAccess[T]{list: list, get: get}
}

// cachedAs reads kind id through Cluster.List and Cluster.Get, for a kind no
// page needs typed access to outside the registry.
func cachedAs[T interface {
	metav1.Object
	runtime.Object
}](id kube.KindID) kindAccess[T] {
	return kindAccess[T]{
		list: func(c Cluster) ([]T, error) {
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
		get: func(c Cluster, name string) (T, error) {
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

// pagesFor wires a kind's cache access to its list and detail presenters; the
// live row is the row of a one-object list, and search and activity read the
// same list.
func pagesFor[T metav1.Object](
	id kube.KindID, shortcut string,
	read kindAccess[T],
	listPage func([]T, present.ListQuery, time.Time) model.ListPage,
	detailPage func(Cluster, T, time.Time) model.DetailPage,
) kindPages {
	whole := read.get
	if read.whole != nil {
		whole = read.whole
	}
	return kindPages{
		id: id, shortcut: shortcut,
		list: func(c Cluster, q present.ListQuery, now time.Time) (model.ListPage, error) {
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
		detail: func(c Cluster, name string, now time.Time) (model.DetailPage, error) {
			o, err := whole(c, name)
			if err != nil {
				return model.DetailPage{}, err
			}
			return detailPage(c, o, now), nil
		},
		row: rowOf(read.get, listPage),
		objects: func(c Cluster) ([]metav1.Object, error) {
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
		candidates: func(c Cluster) ([]cleanup.Candidate, error) {
			items, err := read.list(c)
			if err != nil {
				return nil, err
			}
			out := make([]cleanup.Candidate, len(items))
			for i, o := range items {
				out[i] = candidateOf(o)
			}
			return out, nil
		},
	}
}

// withCandidates sets how a kind's cleanup reads its objects, for a kind
// whose filters need more than metadata (CSR state and signer).
func withCandidates(kp kindPages, candidates func(Cluster) ([]cleanup.Candidate, error)) kindPages {
	kp.candidates = candidates
	return kp
}

// plain adapts a presenter that needs nothing but the object.
func plain[T any](f func(T, time.Time) model.DetailPage) func(Cluster, T, time.Time) model.DetailPage {
	return func(_ Cluster, o T, now time.Time) model.DetailPage { return f(o, now) }
}

// detailPage builds the kind's detail page of name, with its lookups as the
// user when the kind has any (h's insight pages).
func (kp kindPages) detailPage(h *Handlers, c echo.Context, name string, now time.Time) (model.DetailPage, error) {
	if kp.live != nil {
		return kp.live(h.insightPages, c, name, now)
	}
	return kp.detail(h.deps.Cluster, name, now)
}

// withLive sets the detail page builder that adds direct lookups.
func withLive(kp kindPages, live func(*insight.Handlers, echo.Context, string, time.Time) (model.DetailPage, error)) kindPages {
	kp.live = live
	return kp
}

// ownPages sets a kind's own detail page and live rows (see kindPages).
func ownPages(kp kindPages, page func(*Handlers, echo.Context) error) kindPages {
	kp.page, kp.ownRows = page, true
	return kp
}

// listMetricsFunc adds the load columns and the banner saying where they come
// from to a list page (or the one-row page of a live update).
type listMetricsFunc func(Cluster, kube.KindID, *model.ListPage, present.APFLoadState)

// withMetrics sets the live numbers a kind's list and detail pages add (either may be nil).
func withMetrics(kp kindPages, list listMetricsFunc,
	detail func(*Handlers, echo.Context, kube.KindID, string, *model.DetailPage)) kindPages {
	kp.listMetrics, kp.detailMetrics = list, detail
	return kp
}

// readOnly marks a kind the console never edits (nor cleans up).
func readOnly(kp kindPages) kindPages {
	kp.readOnly, kp.candidates = true, nil
	return kp
}

// registeredKinds is the presentation half of the kind registry, one entry per
// kube.AllKinds kind (kinds_test.go checks both halves agree).
var registeredKinds = []kindPages{
	// The CSR page and queue are the approval workflow (handlers/csrs).
	withCandidates(ownPages(pagesFor(kube.CSRs, "c", typed(Cluster.CSRs, Cluster.CSR), present.CSRList, plain(present.CSRDetail)),
		csrDetail), csrCandidates),
	// APF pages show the API server's live load (handlers/flowschemas/load.go, apf_load.go).
	withMetrics(pagesFor(kube.FlowSchemas, "f", typed(Cluster.FlowSchemas, Cluster.FlowSchema), present.FlowSchemaList, plain(present.FlowSchemaDetail)),
		nil, apfDetailLoad),
	withMetrics(pagesFor(kube.PriorityLevels, "p", typed(Cluster.PriorityLevels, Cluster.PriorityLevel), present.PriorityLevelList,
		func(c Cluster, pl *flowcontrolv1.PriorityLevelConfiguration, now time.Time) model.DetailPage {
			// The "used by" table is a courtesy: if FlowSchemas cannot be read
			// (forbidden, syncing) the priority level still shows.
			schemas, err := c.FlowSchemas()
			if err != nil {
				schemas = nil
			}
			return present.PriorityLevelDetail(pl, schemas, now)
		}),
		addPriorityLevelListLoad, apfDetailLoad),
	// The CRD page counts its custom resources as the user (handlers/insight);
	// live rows and search need no schemas (Cluster.CRD keeps them packed).
	withLive(pagesFor(kube.CRDs, "r", typed(Cluster.CRDs, Cluster.CRD).detailFrom(Cluster.CRDWithSchemas),
		present.CRDList, plain(present.CRDDetail)), (*insight.Handlers).CRDDetail),
	// Webhook pages show each webhook's health (webhook_health.go).
	withMetrics(withLive(pagesFor(kube.Webhooks, "w", typed(Cluster.Webhooks, Cluster.Webhook), present.WebhookList,
		plain(func(c *admissionregistrationv1.ValidatingWebhookConfiguration, now time.Time) model.DetailPage {
			return present.WebhookDetail(c, nil, now)
		})), (*insight.Handlers).WebhookDetail),
		addListWebhookHealth, (*Handlers).addDetailWebhookHealth),
	// Read-only: the pages explain mutating webhooks, the editor refuses them.
	readOnly(withMetrics(withLive(pagesFor(kube.MutatingWebhooks, "m", typed(Cluster.MutatingWebhooks, Cluster.MutatingWebhook), present.MutatingWebhookList,
		plain(func(c *admissionregistrationv1.MutatingWebhookConfiguration, now time.Time) model.DetailPage {
			return present.MutatingWebhookDetail(c, nil, now)
		})), (*insight.Handlers).MutatingWebhookDetail),
		addListWebhookHealth, (*Handlers).addDetailWebhookHealth)),
	readOnly(pagesFor(kube.AdmissionPolicies, "v", admissionPolicies,
		present.PolicyList, policyDetail)),
	readOnly(pagesFor(kube.AdmissionPolicyBindings, "b", policyBindings,
		present.BindingList, bindingDetail)),
	withLive(pagesFor(kube.CSIDrivers, "d", typed(Cluster.CSIDrivers, Cluster.CSIDriver), present.CSIDriverList,
		plain(func(d *storagev1.CSIDriver, now time.Time) model.DetailPage {
			return present.CSIDriverDetail(d, nil, now)
		})),
		(*insight.Handlers).CSIDriverDetail),
	// The console's own custom resource, read from the PolicyCache's
	// dynamic informer (kube.Cache follows it as the CRD comes and goes).
	pagesFor(kube.CSRApprovalPolicies, "a", cachedAs[*unstructured.Unstructured](kube.CSRApprovalPolicies),
		present.CSRPolicyList, plain(present.CSRPolicyDetail)),
}

// pagesByKind indexes registeredKinds by id. It is filled by init, not by its
// initializer: the entries refer to handlers that read it (chrome, kindFor),
// which an initializer would make an initialization cycle.
var pagesByKind map[kube.KindID]kindPages

func init() {
	pagesByKind = make(map[kube.KindID]kindPages, len(registeredKinds))
	for _, kp := range registeredKinds {
		if _, twice := pagesByKind[kp.id]; twice {
			panic(fmt.Sprintf("handlers: kind %s registered twice", kp.id))
		}
		pagesByKind[kp.id] = kp
	}
}

// editable reports whether the console offers the editor for kind id.
func editable(id kube.KindID) bool {
	kp, ok := pagesByKind[id]
	return ok && !kp.readOnly
}

// kindObjects lists a kind's objects in the shared cache, for search and
// activity; an unregistered kind has none.
func kindObjects(c Cluster, id kube.KindID) ([]metav1.Object, error) {
	kp, ok := pagesByKind[id]
	if !ok {
		return nil, nil
	}
	return kp.objects(c)
}
