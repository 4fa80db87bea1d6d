// Package handlers translates HTTP into calls on the cluster cache, the writer
// and the presenters, and renders the result. It decides nothing about Kubernetes.
package handlers

import (
	"context"
	"log/slog"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/clusterdesk/clusterdesk/internal/auth"
	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// Cluster is the read side the pages need: the shared informer cache.
type Cluster interface {
	Ready() bool
	ServerVersion() string
	Statuses() []kube.KindStatus
	Status(id kube.KindID) kube.KindStatus
	Kind(id kube.KindID) (kube.Kind, bool)
	Object(id kube.KindID, name string) (runtime.Object, error)

	CSRs() ([]*certificatesv1.CertificateSigningRequest, error)
	CSR(name string) (*certificatesv1.CertificateSigningRequest, error)
	FlowSchemas() ([]*flowcontrolv1.FlowSchema, error)
	FlowSchema(name string) (*flowcontrolv1.FlowSchema, error)
	PriorityLevels() ([]*flowcontrolv1.PriorityLevelConfiguration, error)
	PriorityLevel(name string) (*flowcontrolv1.PriorityLevelConfiguration, error)
	CRDs() ([]*apiextensionsv1.CustomResourceDefinition, error)
	CRD(name string) (*apiextensionsv1.CustomResourceDefinition, error)
	Webhooks() ([]*admissionregistrationv1.ValidatingWebhookConfiguration, error)
	Webhook(name string) (*admissionregistrationv1.ValidatingWebhookConfiguration, error)
	CSIDrivers() ([]*storagev1.CSIDriver, error)
	CSIDriver(name string) (*storagev1.CSIDriver, error)
}

// Access answers whether the signed-in user may do something (SelfSubjectAccessReview).
type Access interface {
	Can(ctx context.Context, verb, group, resource, subresource, name string) (bool, error)
}

// CSRDecider approves or denies CSRs as the signed-in user.
type CSRDecider interface {
	DecideCSR(ctx context.Context, name string, approve bool, reason, message string) (warnings []string, err error)
}

// Deps is everything the handlers need, built by main.
type Deps struct {
	Log      *slog.Logger
	Cluster  Cluster
	Access   Access
	Writer   CSRDecider
	Sessions *auth.Sessions
	Logins   *auth.LoginTokens
	User     string // who the console acts as (local mode: the kubeconfig's identity)
	ReadOnly bool
}
