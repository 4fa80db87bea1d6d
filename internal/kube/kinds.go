package kube

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	flowcontrolv1beta3 "k8s.io/api/flowcontrol/v1beta3"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// KindID names one kind the console shows; it is also the kind's URL segment.
type KindID string

// The kinds the console shows.
const (
	CRDs           KindID = "crds"
	CSIDrivers     KindID = "csidrivers"
	FlowSchemas    KindID = "flowschemas"
	PriorityLevels KindID = "prioritylevels"
	Webhooks       KindID = "validatingwebhooks"
	CSRs           KindID = "csrs"

	// MutatingWebhooks: their pages explain them, the editor replays a draft
	// before it is applied (issue 45).
	MutatingWebhooks KindID = "mutatingwebhooks"

	// The CEL successor to validating webhooks (admissionregistration v1,
	// Kubernetes 1.30+), shown and edited beside them.
	AdmissionPolicies       KindID = "validatingadmissionpolicies"
	AdmissionPolicyBindings KindID = "validatingadmissionpolicybindings"

	// Shown read-only: which pods the scheduler places and preempts first.
	PriorityClasses KindID = "priorityclasses"

	// The console's own custom resource (deploy/base/csrapprovalpolicies.yaml):
	// its CRD may be installed or deleted at any time, so its informer is the
	// PolicyCache's (Cache.FollowPolicies), not one decided at start.
	CSRApprovalPolicies KindID = "csrapprovalpolicies"
)

// Kind describes one kind the console shows. All of them are cluster-scoped.
type Kind struct {
	ID       KindID
	Title    string // plural, for headings: "CertificateSigningRequests"
	Singular string // the API kind: "CertificateSigningRequest"
	Group    string
	Version  string // the served version; "" for flowcontrol until discovery has chosen one
	Resource string // the plural resource name in URLs: "certificatesigningrequests"
	// Namespace is set only for a namespaced custom resource's Kind (see
	// CustomResourceKind): the namespace the Editor addresses. The console's
	// own kinds are cluster-scoped and leave it empty.
	Namespace string
}

// registry is the client-go half of the kind registry, in display order: each
// kind's names and, best first, the versions the console can read with how to
// list and watch each. It is the one list of kinds in this package; the
// web declaration (presenters, live rows, search, shortcut, read-only) is
// handlers/kinds, whose test fails for a kind registered in one half only.
//
// Routes, navigation, search, activity, live rows, cleanup, the editor, the
// informers and the metrics read the two halves. What cannot read them
// follows them, and a test fails naming the kind and the file where it does
// not: the column priorities (internal/present/column_priority.go), an
// editable kind's example (internal/edit/examples.go), and the get/list/watch
// rules in deploy/base/clusterdesk.yaml and the devcluster's
// devcluster/internal/access/clusterroles.yaml (kinds_rbac_test.go). Typed
// listers (listers.go) are optional: handlers read a kind without them
// through Cluster.List and Get. Behaviour special to one kind is a branch on
// its KindID; ARCHITECTURE.md's "How to add a kind" lists them.
//
// A kind served in one version names it in Kind.Version. A kind the console
// reads in several versions leaves Kind.Version "" because only discovery can
// tell which one the API server serves; Cache.Kind returns the chosen one.
var registry = []kindDef{
	{Kind{ID: CSRs, Title: "CertificateSigningRequests", Singular: "CertificateSigningRequest",
		Group: "certificates.k8s.io", Resource: "certificatesigningrequests"},
		[]readableVersion{
			{version: "v1", watch: watchWith[certificatesv1.CertificateSigningRequest](func(c *Cache) listWatchClient[*certificatesv1.CertificateSigningRequestList] {
				return c.k8s.CertificatesV1().CertificateSigningRequests()
			})},
		}},
	// Kubernetes 1.29+ serves flowcontrol v1 (1.32+ only v1); 1.26–1.28 only v1beta3.
	// The listers give v1 objects either way (convert.go).
	{Kind{ID: FlowSchemas, Title: "FlowSchemas", Singular: "FlowSchema",
		Group: "flowcontrol.apiserver.k8s.io", Resource: "flowschemas"},
		[]readableVersion{
			{version: "v1", watch: watchWith[flowcontrolv1.FlowSchema](func(c *Cache) listWatchClient[*flowcontrolv1.FlowSchemaList] {
				return c.k8s.FlowcontrolV1().FlowSchemas()
			})},
			{version: "v1beta3", watch: watchWith[flowcontrolv1beta3.FlowSchema](func(c *Cache) listWatchClient[*flowcontrolv1beta3.FlowSchemaList] {
				return c.k8s.FlowcontrolV1beta3().FlowSchemas()
			}), toV1: convertWith(flowSchemaV1)},
		}},
	{Kind{ID: PriorityLevels, Title: "PriorityLevelConfigurations", Singular: "PriorityLevelConfiguration",
		Group: "flowcontrol.apiserver.k8s.io", Resource: "prioritylevelconfigurations"},
		[]readableVersion{
			{version: "v1", watch: watchWith[flowcontrolv1.PriorityLevelConfiguration](func(c *Cache) listWatchClient[*flowcontrolv1.PriorityLevelConfigurationList] {
				return c.k8s.FlowcontrolV1().PriorityLevelConfigurations()
			})},
			{version: "v1beta3", watch: watchWith[flowcontrolv1beta3.PriorityLevelConfiguration](func(c *Cache) listWatchClient[*flowcontrolv1beta3.PriorityLevelConfigurationList] {
				return c.k8s.FlowcontrolV1beta3().PriorityLevelConfigurations()
			}), toV1: convertWith(priorityLevelV1)},
		}},
	{Kind{ID: CRDs, Title: "CustomResourceDefinitions", Singular: "CustomResourceDefinition",
		Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions"},
		[]readableVersion{
			// Paged, with schemas packed as each page arrives (crdlist.go).
			{version: "v1", watch: watchWith[apiextensionsv1.CustomResourceDefinition](func(c *Cache) listWatchClient[*apiextensionsv1.CustomResourceDefinitionList] {
				return pagedCRDs{client: c.ext.ApiextensionsV1().CustomResourceDefinitions(), transform: Transform(c.schemas)}
			})},
		}},
	{Kind{ID: Webhooks, Title: "ValidatingWebhookConfigurations", Singular: "ValidatingWebhookConfiguration",
		Group: "admissionregistration.k8s.io", Resource: "validatingwebhookconfigurations"},
		[]readableVersion{
			{version: "v1", watch: watchWith[admissionregistrationv1.ValidatingWebhookConfiguration](func(c *Cache) listWatchClient[*admissionregistrationv1.ValidatingWebhookConfigurationList] {
				return c.k8s.AdmissionregistrationV1().ValidatingWebhookConfigurations()
			})},
		}},
	{Kind{ID: MutatingWebhooks, Title: "MutatingWebhookConfigurations", Singular: "MutatingWebhookConfiguration",
		Group: "admissionregistration.k8s.io", Resource: "mutatingwebhookconfigurations"},
		[]readableVersion{
			{version: "v1", watch: watchWith[admissionregistrationv1.MutatingWebhookConfiguration](func(c *Cache) listWatchClient[*admissionregistrationv1.MutatingWebhookConfigurationList] {
				return c.k8s.AdmissionregistrationV1().MutatingWebhookConfigurations()
			})},
		}},
	// Served as v1 since Kubernetes 1.30; an older server leaves them "not served".
	{Kind{ID: AdmissionPolicies, Title: "ValidatingAdmissionPolicies", Singular: "ValidatingAdmissionPolicy",
		Group: "admissionregistration.k8s.io", Resource: "validatingadmissionpolicies"},
		[]readableVersion{
			{version: "v1", watch: watchWith[admissionregistrationv1.ValidatingAdmissionPolicy](func(c *Cache) listWatchClient[*admissionregistrationv1.ValidatingAdmissionPolicyList] {
				return c.k8s.AdmissionregistrationV1().ValidatingAdmissionPolicies()
			})},
		}},
	{Kind{ID: AdmissionPolicyBindings, Title: "ValidatingAdmissionPolicyBindings", Singular: "ValidatingAdmissionPolicyBinding",
		Group: "admissionregistration.k8s.io", Resource: "validatingadmissionpolicybindings"},
		[]readableVersion{
			{version: "v1", watch: watchWith[admissionregistrationv1.ValidatingAdmissionPolicyBinding](func(c *Cache) listWatchClient[*admissionregistrationv1.ValidatingAdmissionPolicyBindingList] {
				return c.k8s.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings()
			})},
		}},
	{Kind{ID: CSIDrivers, Title: "CSIDrivers", Singular: "CSIDriver",
		Group: "storage.k8s.io", Resource: "csidrivers"},
		[]readableVersion{
			{version: "v1", watch: watchWith[storagev1.CSIDriver](func(c *Cache) listWatchClient[*storagev1.CSIDriverList] {
				return c.k8s.StorageV1().CSIDrivers()
			})},
		}},
	{Kind{ID: PriorityClasses, Title: "PriorityClasses", Singular: "PriorityClass",
		Group: "scheduling.k8s.io", Resource: "priorityclasses"},
		[]readableVersion{
			{version: "v1", watch: watchWith[schedulingv1.PriorityClass](func(c *Cache) listWatchClient[*schedulingv1.PriorityClassList] {
				return c.k8s.SchedulingV1().PriorityClasses()
			})},
		}},
	// Read through PolicyCache's dynamic informer as *unstructured.Unstructured
	// (see readableVersion.followed); "not served" while the CRD is not installed.
	{Kind{ID: CSRApprovalPolicies, Title: "CSRApprovalPolicies", Singular: "CSRApprovalPolicy",
		Group: CSRApprovalPolicyResource.Group, Resource: CSRApprovalPolicyResource.Resource},
		[]readableVersion{{version: CSRApprovalPolicyResource.Version, followed: true}}},
}

// AllKinds returns every kind in display order, each with its version when the
// console reads it in one only (see registry).
func AllKinds() []Kind {
	out := make([]Kind, 0, len(registry))
	for _, d := range registry {
		k := d.Kind
		if len(d.served) == 1 {
			k.Version = d.served[0].version
		}
		out = append(out, k)
	}
	return out
}

// KindByResource returns the console's kind that the API server serves as
// resource in group, as its audit events name it (ObjectReference.APIGroup
// and .Resource). It is the one way a write's record is matched to the
// console's kinds: a kind's name is no identity, since a CRD of any group may
// call its kind CertificateSigningRequest or FlowSchema. Custom resources
// (CustomResourceKind) are none of the console's kinds.
func KindByResource(group, resource string) (Kind, bool) {
	for _, k := range AllKinds() {
		if k.Group == group && k.Resource == resource {
			return k, true
		}
	}
	return Kind{}, false
}
