package kube

import (
	"context"
	"fmt"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/pager"
)

// LookupPageSize bounds each page of a Lookup list, so a cluster with many
// PersistentVolumes is read in pieces and never held whole.
const LookupPageSize = 500

// Lookup reads a few objects straight from the API server for one detail page:
// the Service behind a webhook and its EndpointSlices, and the objects that
// use a CSI driver. These kinds get no informer: watching every Service,
// EndpointSlice and PersistentVolume of the cluster for pages that are rarely
// opened would cost far more than a few requests when one is. It reads as the
// identity in its rest.Config (the signed-in user's, like Writer), so the API
// server's RBAC applies and a Forbidden error is the answer to show.
type Lookup struct {
	client kubernetes.Interface
	// dynamic reads objects of kinds known only at run time (a
	// ValidatingAdmissionPolicy's paramKind).
	dynamic dynamic.Interface
}

// NewLookup returns a Lookup for the identity in cfg. It does no network I/O.
func NewLookup(cfg *rest.Config) (*Lookup, error) {
	cs, err := kubernetes.NewForConfig(clientConfig(cfg))
	if err != nil {
		return nil, fmt.Errorf("lookup client: %w", err)
	}
	dyn, err := dynamic.NewForConfig(clientConfig(cfg))
	if err != nil {
		return nil, fmt.Errorf("lookup dynamic client: %w", err)
	}
	return &Lookup{client: cs, dynamic: dyn}, nil
}

// ServiceState is what the API server says about one Service.
type ServiceState struct {
	Found          bool
	ExternalName   bool // type ExternalName: resolved by DNS, it has no endpoints
	ReadyEndpoints int  // ready endpoints over all its EndpointSlices
}

// Service GETs the Service namespace/name and, when it exists, LISTs its
// EndpointSlices (label kubernetes.io/service-name) to count ready endpoints.
// A missing Service is not an error: Found is false.
func (l *Lookup) Service(ctx context.Context, namespace, name string) (ServiceState, error) {
	svc, err := l.client.CoreV1().Services(namespace).Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return ServiceState{}, nil
	case err != nil:
		return ServiceState{}, err
	}
	st := ServiceState{Found: true, ExternalName: svc.Spec.Type == corev1.ServiceTypeExternalName}
	if st.ExternalName {
		return st, nil
	}
	slices, err := l.client.DiscoveryV1().EndpointSlices(namespace).List(ctx, metav1.ListOptions{
		LabelSelector: discoveryv1.LabelServiceName + "=" + name,
	})
	if err != nil {
		return st, err
	}
	for _, s := range slices.Items {
		for _, e := range s.Endpoints {
			// A nil ready condition means ready (discovery/v1 API contract).
			if e.Conditions.Ready == nil || *e.Conditions.Ready {
				st.ReadyEndpoints++
			}
		}
	}
	return st, nil
}

// StorageClasses calls fn for every StorageClass.
func (l *Lookup) StorageClasses(ctx context.Context, fn func(*storagev1.StorageClass)) error {
	return each(ctx, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
		return l.client.StorageV1().StorageClasses().List(ctx, o)
	}, fn)
}

// Namespaces calls fn for every Namespace, a page at a time (the replay's
// namespace selectors meet today's labels).
func (l *Lookup) Namespaces(ctx context.Context, fn func(*corev1.Namespace)) error {
	return each(ctx, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
		return l.client.CoreV1().Namespaces().List(ctx, o)
	}, fn)
}

// PersistentVolumes calls fn for every PersistentVolume, a page at a time.
func (l *Lookup) PersistentVolumes(ctx context.Context, fn func(*corev1.PersistentVolume)) error {
	return each(ctx, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
		return l.client.CoreV1().PersistentVolumes().List(ctx, o)
	}, fn)
}

// CSINodes calls fn for every CSINode.
func (l *Lookup) CSINodes(ctx context.Context, fn func(*storagev1.CSINode)) error {
	return each(ctx, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
		return l.client.StorageV1().CSINodes().List(ctx, o)
	}, fn)
}

// VolumeAttachments calls fn for every VolumeAttachment.
func (l *Lookup) VolumeAttachments(ctx context.Context, fn func(*storagev1.VolumeAttachment)) error {
	return each(ctx, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
		return l.client.StorageV1().VolumeAttachments().List(ctx, o)
	}, fn)
}

// each lists page by page and calls fn on every item of type *T.
func each[T any](ctx context.Context, list pager.ListPageFunc, fn func(*T)) error {
	p := pager.New(list)
	p.PageSize = LookupPageSize
	return p.EachListItem(ctx, metav1.ListOptions{}, func(obj runtime.Object) error {
		if t, ok := any(obj).(*T); ok {
			fn(t)
			return nil
		}
		return fmt.Errorf("lookup: unexpected %T in list", obj)
	})
}

// Namespace GETs a namespace's labels; found is false when it does not exist.
func (l *Lookup) Namespace(ctx context.Context, name string) (labels map[string]string, found bool, err error) {
	ns, err := l.client.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil, false, nil
	case err != nil:
		return nil, false, err
	}
	return ns.Labels, true, nil
}

// ResourceVersions asks discovery which versions of group serve resource, in
// the group's order (preferred first). The API server treats a resource's
// versions as equivalent for webhooks with matchPolicy Equivalent.
func (l *Lookup) ResourceVersions(ctx context.Context, group, resource string) ([]string, error) {
	groups, err := l.client.Discovery().ServerGroups()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, g := range groups.Groups {
		if g.Name != group {
			continue
		}
		for _, v := range g.Versions {
			if ctx.Err() != nil {
				return out, ctx.Err()
			}
			list, err := l.client.Discovery().ServerResourcesForGroupVersion(v.GroupVersion)
			if err != nil {
				return out, err
			}
			for _, r := range list.APIResources {
				if r.Name == resource {
					out = append(out, v.Version)
					break
				}
			}
		}
	}
	return out, nil
}

// NodeAddresses GETs the Node name and returns every address in its status
// (hostnames, DNS names and IPs); found is false when there is no such Node.
// A kubelet-serving CSR's SANs are checked against them on its detail page.
func (l *Lookup) NodeAddresses(ctx context.Context, name string) (addresses []string, found bool, err error) {
	node, err := l.client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil, false, nil
	case err != nil:
		return nil, false, err
	}
	for _, a := range node.Status.Addresses {
		addresses = append(addresses, a.Address)
	}
	return addresses, true, nil
}

// ClusterRBAC lists every ClusterRole and ClusterRoleBinding, a page at a
// time: what "who approves this signer?" walks (internal/approvers). Roles
// and RoleBindings are not read: they grant nothing cluster-scoped.
func (l *Lookup) ClusterRBAC(ctx context.Context) ([]rbacv1.ClusterRole, []rbacv1.ClusterRoleBinding, error) {
	var roles []rbacv1.ClusterRole
	var bindings []rbacv1.ClusterRoleBinding
	err := each(ctx, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
		return l.client.RbacV1().ClusterRoles().List(ctx, o)
	}, func(r *rbacv1.ClusterRole) { roles = append(roles, *r) })
	if err != nil {
		return nil, nil, err
	}
	err = each(ctx, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
		return l.client.RbacV1().ClusterRoleBindings().List(ctx, o)
	}, func(b *rbacv1.ClusterRoleBinding) { bindings = append(bindings, *b) })
	if err != nil {
		return nil, nil, err
	}
	return roles, bindings, nil
}

// CSRApprovalPolicyResource is where the console's CSR approval policies
// live (deploy/base/csrapprovalpolicies.yaml).
var CSRApprovalPolicyResource = schema.GroupVersionResource{Group: "clusterdesk.io", Version: "v1alpha1", Resource: "csrapprovalpolicies"}

// CSRApprovalPolicies lists the CSR approval policies. A cluster without
// their CRD answers NotFound (apierrors.IsNotFound).
func (l *Lookup) CSRApprovalPolicies(ctx context.Context) ([]unstructured.Unstructured, error) {
	list, err := l.dynamic.Resource(CSRApprovalPolicyResource).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	return list.Items, nil
}

// SubjectAccessReview asks the API server whether spec's user may do what
// spec describes: the authorization check the API server makes for a CEL
// `authorizer` expression about the requesting user. Creating a
// SubjectAccessReview takes `create subjectaccessreviews`; without it the
// answer is a Forbidden error (apierrors.IsForbidden), for the caller to
// report as unknown.
func (l *Lookup) SubjectAccessReview(ctx context.Context, spec authorizationv1.SubjectAccessReviewSpec) (authorizationv1.SubjectAccessReviewStatus, error) {
	sar, err := l.client.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{Spec: spec}, metav1.CreateOptions{})
	if err != nil {
		return authorizationv1.SubjectAccessReviewStatus{}, err
	}
	return sar.Status, nil
}
