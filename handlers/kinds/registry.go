// Package kinds is the kind registry of the web layer: one declaration per
// kind (registry below) that the handlers root and the feature packages read
// directly. The API half of each kind (names, versions, informer) stays in
// internal/kube (kinds.go), the bottom of the graph, because it is client-go
// code (ARCHITECTURE.md, rules 6 and 7); this package names the same KindIDs
// and registry_test.go fails for a kind declared in part.
//
// What a few kinds add that needs the root's services (a detail page with
// direct lookups as the user, the API server's metrics, the CSR queue's own
// pages and live rows) is the root's, keyed by KindID (handlers/kind_hooks.go).
package kinds

import (
	"fmt"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/clusterdesk/clusterdesk/handlers/ports"
	"github.com/clusterdesk/clusterdesk/internal/cleanup"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// registry declares every kube.AllKinds kind, one entry each, in any order
// (kube's registry gives the display order).
var registry = []Kind{
	// The CSR page and queue are the approval workflow (handlers/csrs): the
	// root replaces the detail page and live rows (kind_hooks.go).
	withCandidates(declare(kube.CSRs, "c", typed(ports.Cluster.CSRs, ports.Cluster.CSR), present.CSRList, plain(present.CSRDetail)),
		csrCandidates),
	// APF pages show the API server's live load (the root's kind_hooks.go).
	declare(kube.FlowSchemas, "f", typed(ports.Cluster.FlowSchemas, ports.Cluster.FlowSchema), present.FlowSchemaList, plain(present.FlowSchemaDetail)),
	declare(kube.PriorityLevels, "p", typed(ports.Cluster.PriorityLevels, ports.Cluster.PriorityLevel), present.PriorityLevelList,
		func(c ports.Cluster, pl *flowcontrolv1.PriorityLevelConfiguration, now time.Time) model.DetailPage {
			// The "used by" table is a courtesy: if FlowSchemas cannot be read
			// (forbidden, syncing) the priority level still shows.
			schemas, err := c.FlowSchemas()
			if err != nil {
				schemas = nil
			}
			return present.PriorityLevelDetail(pl, schemas, now)
		}),
	// The CRD page counts its custom resources as the user (the root's
	// kind_hooks.go); live rows and search need no schemas (Cluster.CRD
	// keeps them packed).
	declare(kube.CRDs, "r", typed(ports.Cluster.CRDs, ports.Cluster.CRD).detailFrom(ports.Cluster.CRDWithSchemas),
		present.CRDList, plain(present.CRDDetail)),
	// Webhook pages show each webhook's health (kind_hooks.go).
	declare(kube.Webhooks, "w", typed(ports.Cluster.Webhooks, ports.Cluster.Webhook), present.WebhookList,
		plain(func(c *admissionregistrationv1.ValidatingWebhookConfiguration, now time.Time) model.DetailPage {
			return present.WebhookDetail(c, nil, now)
		})),
	// Editable, as the validating ones are: the editor replays a draft
	// against the recorded writes before it is applied (issue 45).
	declare(kube.MutatingWebhooks, "m", typed(ports.Cluster.MutatingWebhooks, ports.Cluster.MutatingWebhook), present.MutatingWebhookList,
		plain(func(c *admissionregistrationv1.MutatingWebhookConfiguration, now time.Time) model.DetailPage {
			return present.MutatingWebhookDetail(c, nil, now)
		})),
	declare(kube.AdmissionPolicies, "v", admissionPolicies, present.PolicyList, policyDetail),
	declare(kube.AdmissionPolicyBindings, "b", policyBindings, present.BindingList, bindingDetail),
	declare(kube.CSIDrivers, "d", typed(ports.Cluster.CSIDrivers, ports.Cluster.CSIDriver), present.CSIDriverList,
		plain(func(d *storagev1.CSIDriver, now time.Time) model.DetailPage {
			return present.CSIDriverDetail(d, nil, now)
		})),
	readOnly(declare(kube.PriorityClasses, "i", cachedAs[*schedulingv1.PriorityClass](kube.PriorityClasses),
		present.PriorityClassList, plain(present.PriorityClassDetail))),
	// The console's own custom resource, read from the PolicyCache's
	// dynamic informer (kube.Cache follows it as the CRD comes and goes).
	declare(kube.CSRApprovalPolicies, "a", cachedAs[*unstructured.Unstructured](kube.CSRApprovalPolicies),
		present.CSRPolicyList, plain(present.CSRPolicyDetail)),
}

// byID indexes registry by id.
var byID = index(registry)

func index(all []Kind) map[kube.KindID]Kind {
	m := make(map[kube.KindID]Kind, len(all))
	for _, k := range all {
		if _, twice := m[k.ID]; twice {
			panic(fmt.Sprintf("kinds: kind %s declared twice", k.ID))
		}
		m[k.ID] = k
	}
	return m
}

// All returns every declared kind.
func All() []Kind { return append([]Kind(nil), registry...) }

// Of returns kind id's declaration; false for a kind the console does not show.
func Of(id kube.KindID) (Kind, bool) {
	k, ok := byID[id]
	return k, ok
}

// Editable reports whether the console offers the editor (and cleanup) for
// kind id.
func Editable(id kube.KindID) bool {
	k, ok := byID[id]
	return ok && !k.ReadOnly
}

// Objects lists a kind's objects in the shared cache, for search; an
// unregistered kind has none.
func Objects(c ports.Cluster, id kube.KindID) ([]metav1.Object, error) {
	k, ok := byID[id]
	if !ok {
		return nil, nil
	}
	return k.Objects(c)
}

// Candidates lists kind id's cached objects as cleanup candidates; false when
// the console offers no cleanup of the kind (the read-only kinds).
func Candidates(c ports.Cluster, id kube.KindID) (func() ([]cleanup.Candidate, error), bool) {
	candidates := byID[id].Candidates
	if candidates == nil {
		return nil, false
	}
	return func() ([]cleanup.Candidate, error) { return candidates(c) }, true
}
