package handlers

import (
	"time"

	"github.com/labstack/echo/v4"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	storagev1 "k8s.io/api/storage/v1"

	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// kindPages binds one kind to its lister and presenters.
type kindPages struct {
	list   func(Cluster, present.ListQuery, time.Time) (model.ListPage, error)
	detail func(Cluster, string, time.Time) (model.DetailPage, error)
	// live, when set, builds the detail page instead of detail: for kinds
	// whose page adds direct lookups (see insight.go).
	live func(*Handlers, echo.Context, string, time.Time) (model.DetailPage, error)
}

// pagesFor wires a kind's cache accessors to its presenters.
func pagesFor[T any](
	list func(Cluster) ([]T, error),
	get func(Cluster, string) (T, error),
	listPage func([]T, present.ListQuery, time.Time) model.ListPage,
	detailPage func(Cluster, T, time.Time) model.DetailPage,
) kindPages {
	return kindPages{
		list: func(c Cluster, q present.ListQuery, now time.Time) (model.ListPage, error) {
			items, err := list(c)
			if err != nil {
				return model.ListPage{}, err
			}
			return listPage(items, q, now), nil
		},
		detail: func(c Cluster, name string, now time.Time) (model.DetailPage, error) {
			o, err := get(c, name)
			if err != nil {
				return model.DetailPage{}, err
			}
			return detailPage(c, o, now), nil
		},
	}
}

// plain adapts a presenter that needs nothing but the object.
func plain[T any](f func(T, time.Time) model.DetailPage) func(Cluster, T, time.Time) model.DetailPage {
	return func(_ Cluster, o T, now time.Time) model.DetailPage { return f(o, now) }
}

// pagesByKind is the one place that maps a kind to how it is shown.
var pagesByKind = map[kube.KindID]kindPages{
	kube.CSRs:        pagesFor(Cluster.CSRs, Cluster.CSR, present.CSRList, plain(present.CSRDetail)),
	kube.FlowSchemas: pagesFor(Cluster.FlowSchemas, Cluster.FlowSchema, present.FlowSchemaList, plain(present.FlowSchemaDetail)),
	kube.PriorityLevels: pagesFor(Cluster.PriorityLevels, Cluster.PriorityLevel, present.PriorityLevelList,
		func(c Cluster, pl *flowcontrolv1.PriorityLevelConfiguration, now time.Time) model.DetailPage {
			// The "used by" table is a courtesy: if FlowSchemas cannot be read
			// (forbidden, syncing) the priority level still shows.
			schemas, err := c.FlowSchemas()
			if err != nil {
				schemas = nil
			}
			return present.PriorityLevelDetail(pl, schemas, now)
		}),
	// The CRD page counts its custom resources as the user (insight_crd_instances.go).
	kube.CRDs: withLive(pagesFor(Cluster.CRDs, Cluster.CRDWithSchemas, present.CRDList, plain(present.CRDDetail)), (*Handlers).crdDetail),
	kube.Webhooks: withLive(pagesFor(Cluster.Webhooks, Cluster.Webhook, present.WebhookList,
		plain(func(c *admissionregistrationv1.ValidatingWebhookConfiguration, now time.Time) model.DetailPage {
			return present.WebhookDetail(c, nil, now)
		})), (*Handlers).webhookDetail),
	// Read-only: the editor refuses this kind (insight_mutating.go).
	kube.MutatingWebhooks: withLive(pagesFor(Cluster.MutatingWebhooks, Cluster.MutatingWebhook, present.MutatingWebhookList,
		plain(func(c *admissionregistrationv1.MutatingWebhookConfiguration, now time.Time) model.DetailPage {
			return present.MutatingWebhookDetail(c, nil, now)
		})), (*Handlers).mutatingWebhookDetail),
	kube.CSIDrivers: withLive(pagesFor(Cluster.CSIDrivers, Cluster.CSIDriver, present.CSIDriverList,
		plain(func(d *storagev1.CSIDriver, now time.Time) model.DetailPage {
			return present.CSIDriverDetail(d, nil, now)
		})),
		(*Handlers).csiDriverDetail),
}
