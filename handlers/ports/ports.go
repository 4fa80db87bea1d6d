// Package ports declares the interfaces the handlers consume: what main
// builds (the shared cache, the per-user clients, the samplers) as the web
// layer sees it. It is its own package so that the feature packages under
// handlers/ can take the ports they use without importing handlers, which
// imports them; handlers/deps.go keeps the same names as aliases, so main and
// the tests keep writing handlers.Cluster.
package ports

import (
	"context"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/clusterdesk/clusterdesk/internal/apfload"
	"github.com/clusterdesk/clusterdesk/internal/kube"
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
	// without typed methods is read only through these (handlers/kinds).
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
	// ListMetadata lists the candidates of a cleanup of custom resources (handlers/cleanup).
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
	// Namespaces lists the namespaces (the replay's namespace selectors).
	Namespaces(ctx context.Context, fn func(*corev1.Namespace)) error
	CSINodes(ctx context.Context, fn func(*storagev1.CSINode)) error
	VolumeAttachments(ctx context.Context, fn func(*storagev1.VolumeAttachment)) error
	Namespace(ctx context.Context, name string) (labels map[string]string, found bool, err error)
	ResourceVersions(ctx context.Context, group, resource string) ([]string, error)
	ResourceLists(ctx context.Context, resource string) ([]*metav1.APIResourceList, error)
	NodeAddresses(ctx context.Context, name string) (addresses []string, found bool, err error)
	// CSR reads a CertificateSigningRequest: its issued certificate, which
	// the cache leaves out (kube.CertificateLeftOut).
	CSR(ctx context.Context, name string) (*certificatesv1.CertificateSigningRequest, error)
	// ClusterRBAC lists the ClusterRoles and ClusterRoleBindings, for "who
	// approves this signer?".
	ClusterRBAC(ctx context.Context) ([]rbacv1.ClusterRole, []rbacv1.ClusterRoleBinding, error)
	// CSRApprovalPolicies lists the CSR approval policies (NotFound without their CRD).
	CSRApprovalPolicies(ctx context.Context) ([]unstructured.Unstructured, error)
	// SubjectAccessReview answers the interception simulator's CEL
	// `authorizer` checks about the simulated user.
	SubjectAccessReview(ctx context.Context, spec authorizationv1.SubjectAccessReviewSpec) (authorizationv1.SubjectAccessReviewStatus, error)
	// ParamResource and Params read the param objects of a
	// ValidatingAdmissionPolicy binding (any paramKind).
	ParamResource(ctx context.Context, apiVersion, kind string) (gvr schema.GroupVersionResource, namespaced, found bool, err error)
	Params(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string, selector labels.Selector) ([]map[string]any, error)
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
