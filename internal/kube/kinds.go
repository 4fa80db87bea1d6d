package kube

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

	// MutatingWebhooks are shown read-only (no editor): their pages explain them.
	MutatingWebhooks KindID = "mutatingwebhooks"
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

// flowcontrolVersions lists, best first, the flowcontrol.apiserver.k8s.io versions the
// console can read. Kubernetes 1.29+ serves v1 (1.32+ only v1); 1.26–1.28 only v1beta3.
var flowcontrolVersions = []string{"v1", "v1beta3"}

// AllKinds returns every kind in display order. The flowcontrol kinds have Version ""
// because only discovery can tell which version the API server serves; Cache.Kind
// returns the chosen one.
func AllKinds() []Kind {
	return []Kind{
		{ID: CSRs, Title: "CertificateSigningRequests", Singular: "CertificateSigningRequest",
			Group: "certificates.k8s.io", Version: "v1", Resource: "certificatesigningrequests"},
		{ID: FlowSchemas, Title: "FlowSchemas", Singular: "FlowSchema",
			Group: "flowcontrol.apiserver.k8s.io", Resource: "flowschemas"},
		{ID: PriorityLevels, Title: "PriorityLevelConfigurations", Singular: "PriorityLevelConfiguration",
			Group: "flowcontrol.apiserver.k8s.io", Resource: "prioritylevelconfigurations"},
		{ID: CRDs, Title: "CustomResourceDefinitions", Singular: "CustomResourceDefinition",
			Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"},
		{ID: Webhooks, Title: "ValidatingWebhookConfigurations", Singular: "ValidatingWebhookConfiguration",
			Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingwebhookconfigurations"},
		{ID: MutatingWebhooks, Title: "MutatingWebhookConfigurations", Singular: "MutatingWebhookConfiguration",
			Group: "admissionregistration.k8s.io", Version: "v1", Resource: "mutatingwebhookconfigurations"},
		{ID: CSIDrivers, Title: "CSIDrivers", Singular: "CSIDriver",
			Group: "storage.k8s.io", Version: "v1", Resource: "csidrivers"},
	}
}

// candidateVersions returns, best first, the versions of k the console can read.
func candidateVersions(k Kind) []string {
	if k.Version == "" {
		return flowcontrolVersions
	}
	return []string{k.Version}
}
