// Package handlers translates HTTP into calls on the cluster cache, the writer
// and the presenters, and renders the result. It decides nothing about Kubernetes.
package handlers

import (
	"context"
	"log/slog"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/clusterdesk/clusterdesk/internal/activity"
	"github.com/clusterdesk/clusterdesk/internal/apfload"
	"github.com/clusterdesk/clusterdesk/internal/audit"
	"github.com/clusterdesk/clusterdesk/internal/auth"
	"github.com/clusterdesk/clusterdesk/internal/csrqueue"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/metrics"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// Cluster is the read side the pages need: the shared informer cache.
type Cluster interface {
	Ready() bool
	ServerVersion() string
	Statuses() []kube.KindStatus
	Status(id kube.KindID) kube.KindStatus
	Kind(id kube.KindID) (kube.Kind, bool)
	Object(id kube.KindID, name string) (runtime.Object, error)
	// Meta is a cached object's metadata, for what needs no more: cheap,
	// where Object decodes a CRD's schemas.
	Meta(id kube.KindID, name string) (metav1.Object, error)
	// List and Get read any registered kind from the cache, as the Go type
	// the typed methods below return (flowcontrol v1 also where v1beta3 is
	// served); the objects are the cache's own: never modify them. A kind
	// without typed methods is read only through these (handlers/kinds.go).
	List(id kube.KindID) ([]runtime.Object, error)
	Get(id kube.KindID, name string) (runtime.Object, error)

	CSRs() ([]*certificatesv1.CertificateSigningRequest, error)
	CSR(name string) (*certificatesv1.CertificateSigningRequest, error)
	FlowSchemas() ([]*flowcontrolv1.FlowSchema, error)
	FlowSchema(name string) (*flowcontrolv1.FlowSchema, error)
	PriorityLevels() ([]*flowcontrolv1.PriorityLevelConfiguration, error)
	PriorityLevel(name string) (*flowcontrolv1.PriorityLevelConfiguration, error)
	CRDs() ([]*apiextensionsv1.CustomResourceDefinition, error)
	// CRDs and CRD keep each version's schema as a stub (kube.IsSchemaStub);
	// CRDWithSchemas decodes them, for the pages that show schemas.
	CRD(name string) (*apiextensionsv1.CustomResourceDefinition, error)
	CRDWithSchemas(name string) (*apiextensionsv1.CustomResourceDefinition, error)
	Webhooks() ([]*admissionregistrationv1.ValidatingWebhookConfiguration, error)
	Webhook(name string) (*admissionregistrationv1.ValidatingWebhookConfiguration, error)
	MutatingWebhooks() ([]*admissionregistrationv1.MutatingWebhookConfiguration, error)
	MutatingWebhook(name string) (*admissionregistrationv1.MutatingWebhookConfiguration, error)
	CSIDrivers() ([]*storagev1.CSIDriver, error)
	CSIDriver(name string) (*storagev1.CSIDriver, error)
}

// Access answers whether the signed-in user may do something (SelfSubjectAccessReview).
type Access interface {
	Can(ctx context.Context, verb, group, resource, subresource, name string) (bool, error)
}

// URLAccess answers whether the signed-in user may do something on a
// non-resource URL (get /metrics), by access review.
type URLAccess interface {
	CanURL(ctx context.Context, verb, path string) (bool, error)
}

// APFLoad is the shared sampler of the API server's flow-control metrics
// (internal/apfload); Look and Current also tell it someone looks. Look
// answers at once, Current waits for a sample.
type APFLoad interface {
	Look() (apfload.Load, error)
	Current(ctx context.Context) (apfload.Load, error)
	Interval() time.Duration
}

// CSRDecider approves or denies CSRs as the signed-in user.
type CSRDecider interface {
	DecideCSR(ctx context.Context, name string, uid types.UID, approve bool, reason, message string) (warnings []string, err error)
}

// CSRIssuer reads a CSR and writes the certificate an external CA issued
// for it into status.certificate, as the signed-in user (issue.Writer).
type CSRIssuer interface {
	ReadCSR(ctx context.Context, name string) (*certificatesv1.CertificateSigningRequest, error)
	WriteCSRCertificate(ctx context.Context, csr *certificatesv1.CertificateSigningRequest) (*certificatesv1.CertificateSigningRequest, []string, error)
}

// ObjectEditor reads and writes whole objects as the signed-in user: the YAML
// editor's create, update and delete, each of which can be a dry run.
type ObjectEditor interface {
	Get(ctx context.Context, k kube.Kind, name string) (*unstructured.Unstructured, error)
	Update(ctx context.Context, k kube.Kind, obj *unstructured.Unstructured, dryRun bool) (kube.WriteResult, error)
	Create(ctx context.Context, k kube.Kind, obj *unstructured.Unstructured, dryRun bool) (kube.WriteResult, error)
	Delete(ctx context.Context, k kube.Kind, name string, uid types.UID, dryRun bool, policy metav1.DeletionPropagation) (kube.WriteResult, error)
	CountCustomResources(ctx context.Context, crd *unstructured.Unstructured) (kube.CRCount, error)
	// Apply is server-side apply as field manager clusterdesk (the editor's other write mode).
	Apply(ctx context.Context, k kube.Kind, obj *unstructured.Unstructured, dryRun, force bool) (kube.WriteResult, error)
	// Table lists a kind's objects in the API server's Table format, one page at a time.
	Table(ctx context.Context, k kube.Kind, limit int64, cont, selector string) (*metav1.Table, error)
	// ListMetadata lists the candidates of a cleanup of custom resources (cleanup.go).
	ListMetadata(ctx context.Context, k kube.Kind, selector string) ([]metav1.PartialObjectMetadata, error)
}

// FieldDocs gives the editor's docs panel the documented fields of a kind,
// from the API server's OpenAPI v3 document.
type FieldDocs interface {
	Fields(ctx context.Context, k kube.Kind, serverVersion string) ([]model.SchemaNode, error)
}

// Lookup reads, as the signed-in user, the few objects an insight page needs
// beyond the cache: the Service behind a webhook, the objects using a CSI
// driver. One page view costs a handful of requests; no informer watches them.
type Lookup interface {
	Service(ctx context.Context, namespace, name string) (kube.ServiceState, error)
	StorageClasses(ctx context.Context, fn func(*storagev1.StorageClass)) error
	PersistentVolumes(ctx context.Context, fn func(*corev1.PersistentVolume)) error
	CSINodes(ctx context.Context, fn func(*storagev1.CSINode)) error
	VolumeAttachments(ctx context.Context, fn func(*storagev1.VolumeAttachment)) error
	Namespace(ctx context.Context, name string) (labels map[string]string, found bool, err error)
	ResourceVersions(ctx context.Context, group, resource string) ([]string, error)
	ResourceLists(ctx context.Context, resource string) ([]*metav1.APIResourceList, error)
	NodeAddresses(ctx context.Context, name string) (addresses []string, found bool, err error)
	// SubjectAccessReview answers the interception simulator's CEL
	// `authorizer` checks about the simulated user.
	SubjectAccessReview(ctx context.Context, spec authorizationv1.SubjectAccessReviewSpec) (authorizationv1.SubjectAccessReviewStatus, error)
	// ParamResource and Params read the param objects of a
	// ValidatingAdmissionPolicy binding (any paramKind).
	ParamResource(ctx context.Context, apiVersion, kind string) (gvr schema.GroupVersionResource, namespaced, found bool, err error)
	Params(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string, selector labels.Selector) ([]map[string]any, error)
}

// Deps is everything the handlers need, built by main.
type Deps struct {
	Log      *slog.Logger
	Cluster  Cluster
	Access   Access
	Writer   CSRDecider
	Issuer   CSRIssuer // uploads of externally issued certificates; nil offers none
	Editor   ObjectEditor
	Docs     FieldDocs // the editor's field documentation; nil leaves the panel out
	Sessions *auth.Sessions
	Logins   *auth.LoginTokens
	User     string // who the console acts as (local mode: the kubeconfig's identity)
	ReadOnly bool
	DevUI    bool              // serve the component gallery at /ui
	Lookup   Lookup            // direct reads for insight pages; nil skips them (the pages say so)
	Live     *LiveUpdates      // live updates over server-sent events; nil turns them off
	Metrics  *metrics.Registry // request metrics; nil records none (metrics.go)

	// Gate decides who each request is (local, token or proxy mode); nil is
	// local mode over Sessions.
	Gate *auth.Gate
	// TokenReview learns who a pasted bearer token is (token mode).
	TokenReview TokenReviewer
	// SignInLimit bounds each client's sign-in attempts; zero is DefaultSignInLimit.
	SignInLimit SignInLimit
	// Users drops an identity's per-user clients at its sign-out (logout.go);
	// nil keeps them until the cache evicts them.
	Users UserForgetter

	// Audit records every write made through clusterdesk (JSON line and
	// Kubernetes Event); nil logs one "write" line instead (edit_audit.go).
	Audit *audit.Recorder
	// Activity is what the console observed of changes (activity.go); nil
	// leaves the activity pages without watch history.
	Activity *activity.Store
	// APFLoad is the live load of API Priority and Fairness, read as the
	// console and shown to users who may get /metrics (URLAccess); nil for
	// either leaves the load out of the pages.
	APFLoad   APFLoad
	URLAccess URLAccess

	// CleanupProgressAfter is how long a confirmed cleanup may run before
	// its page is sent with progress lines; zero is
	// DefaultCleanupProgressAfter (cleanup_run.go).
	CleanupProgressAfter time.Duration

	// PublicOrigin is --public-url's origin (https://console.example.com),
	// "" without it. Set, it is the only Origin forms are accepted from
	// (csrf.go), and an https one sends HSTS over a plain listener behind a
	// TLS-terminating proxy (hsts.go). Cookie security follows it through
	// Sessions.Secure, which main sets.
	PublicOrigin string

	// CSRQueue is the CSR queue's caches; nil: Live's, else New builds them
	// (csr_queue.go, csrQueueOf).
	CSRQueue *csrqueue.Queue
}
