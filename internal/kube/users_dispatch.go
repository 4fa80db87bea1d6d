package kube

import (
	"context"

	authorizationv1 "k8s.io/api/authorization/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// UserWriter is Writer acting as the identity in each call's context.
type UserWriter struct{ Users *Users }

// DecideCSR is Writer.DecideCSR as the identity in ctx.
func (w UserWriter) DecideCSR(ctx context.Context, name string, uid types.UID, approve bool, reason, message string) ([]string, error) {
	c, err := w.Users.For(ctx)
	if err != nil {
		return nil, err
	}
	return c.Writer.DecideCSR(ctx, name, uid, approve, reason, message)
}

// UserEditor is Editor acting as the identity in each call's context.
type UserEditor struct{ Users *Users }

func (e UserEditor) editor(ctx context.Context) (*Editor, error) {
	c, err := e.Users.For(ctx)
	if err != nil {
		return nil, err
	}
	return c.Editor, nil
}

// Get is Editor.Get as the identity in ctx.
func (e UserEditor) Get(ctx context.Context, k Kind, name string) (*unstructured.Unstructured, error) {
	ed, err := e.editor(ctx)
	if err != nil {
		return nil, err
	}
	return ed.Get(ctx, k, name)
}

// Update is Editor.Update as the identity in ctx.
func (e UserEditor) Update(ctx context.Context, k Kind, obj *unstructured.Unstructured, dry bool) (WriteResult, error) {
	ed, err := e.editor(ctx)
	if err != nil {
		return WriteResult{}, err
	}
	return ed.Update(ctx, k, obj, dry)
}

// Create is Editor.Create as the identity in ctx.
func (e UserEditor) Create(ctx context.Context, k Kind, obj *unstructured.Unstructured, dry bool) (WriteResult, error) {
	ed, err := e.editor(ctx)
	if err != nil {
		return WriteResult{}, err
	}
	return ed.Create(ctx, k, obj, dry)
}

// Apply is Editor.Apply as the identity in ctx.
func (e UserEditor) Apply(ctx context.Context, k Kind, obj *unstructured.Unstructured, dry, force bool) (WriteResult, error) {
	ed, err := e.editor(ctx)
	if err != nil {
		return WriteResult{}, err
	}
	return ed.Apply(ctx, k, obj, dry, force)
}

// Delete is Editor.Delete as the identity in ctx.
func (e UserEditor) Delete(ctx context.Context, k Kind, name string, uid types.UID, dry bool, policy metav1.DeletionPropagation) (WriteResult, error) {
	ed, err := e.editor(ctx)
	if err != nil {
		return WriteResult{}, err
	}
	return ed.Delete(ctx, k, name, uid, dry, policy)
}

// CountCustomResources is Editor.CountCustomResources as the identity in ctx.
func (e UserEditor) CountCustomResources(ctx context.Context, crd *unstructured.Unstructured) (CRCount, error) {
	ed, err := e.editor(ctx)
	if err != nil {
		return CRCount{}, err
	}
	return ed.CountCustomResources(ctx, crd)
}

// Table is Editor.Table as the identity in ctx.
func (e UserEditor) Table(ctx context.Context, k Kind, limit int64, cont, selector string) (*metav1.Table, error) {
	ed, err := e.editor(ctx)
	if err != nil {
		return nil, err
	}
	return ed.Table(ctx, k, limit, cont, selector)
}

// ListMetadata is Editor.ListMetadata as the identity in ctx.
func (e UserEditor) ListMetadata(ctx context.Context, k Kind, selector string) ([]metav1.PartialObjectMetadata, error) {
	ed, err := e.editor(ctx)
	if err != nil {
		return nil, err
	}
	return ed.ListMetadata(ctx, k, selector)
}

// UserLookup is Lookup reading as the identity in each call's context.
type UserLookup struct{ Users *Users }

func (l UserLookup) lookup(ctx context.Context) (*Lookup, error) {
	c, err := l.Users.For(ctx)
	if err != nil {
		return nil, err
	}
	return c.Lookup, nil
}

// Service is Lookup.Service as the identity in ctx.
func (l UserLookup) Service(ctx context.Context, namespace, name string) (ServiceState, error) {
	lk, err := l.lookup(ctx)
	if err != nil {
		return ServiceState{}, err
	}
	return lk.Service(ctx, namespace, name)
}

// StorageClasses is Lookup.StorageClasses as the identity in ctx.
func (l UserLookup) StorageClasses(ctx context.Context, fn func(*storagev1.StorageClass)) error {
	lk, err := l.lookup(ctx)
	if err != nil {
		return err
	}
	return lk.StorageClasses(ctx, fn)
}

// Namespaces is Lookup.Namespaces as the identity in ctx.
func (l UserLookup) Namespaces(ctx context.Context, fn func(*corev1.Namespace)) error {
	lk, err := l.lookup(ctx)
	if err != nil {
		return err
	}
	return lk.Namespaces(ctx, fn)
}

// PersistentVolumes is Lookup.PersistentVolumes as the identity in ctx.
func (l UserLookup) PersistentVolumes(ctx context.Context, fn func(*corev1.PersistentVolume)) error {
	lk, err := l.lookup(ctx)
	if err != nil {
		return err
	}
	return lk.PersistentVolumes(ctx, fn)
}

// CSINodes is Lookup.CSINodes as the identity in ctx.
func (l UserLookup) CSINodes(ctx context.Context, fn func(*storagev1.CSINode)) error {
	lk, err := l.lookup(ctx)
	if err != nil {
		return err
	}
	return lk.CSINodes(ctx, fn)
}

// VolumeAttachments is Lookup.VolumeAttachments as the identity in ctx.
func (l UserLookup) VolumeAttachments(ctx context.Context, fn func(*storagev1.VolumeAttachment)) error {
	lk, err := l.lookup(ctx)
	if err != nil {
		return err
	}
	return lk.VolumeAttachments(ctx, fn)
}

// Namespace is Lookup.Namespace as the identity in ctx.
func (l UserLookup) Namespace(ctx context.Context, name string) (map[string]string, bool, error) {
	lk, err := l.lookup(ctx)
	if err != nil {
		return nil, false, err
	}
	return lk.Namespace(ctx, name)
}

// ResourceVersions is Lookup.ResourceVersions as the identity in ctx.
func (l UserLookup) ResourceVersions(ctx context.Context, group, resource string) ([]string, error) {
	lk, err := l.lookup(ctx)
	if err != nil {
		return nil, err
	}
	return lk.ResourceVersions(ctx, group, resource)
}

// ResourceLists is Lookup.ResourceLists as the identity in ctx.
func (l UserLookup) ResourceLists(ctx context.Context, resource string) ([]*metav1.APIResourceList, error) {
	lk, err := l.lookup(ctx)
	if err != nil {
		return nil, err
	}
	return lk.ResourceLists(ctx, resource)
}

// NodeAddresses is Lookup.NodeAddresses as the identity in ctx.
func (l UserLookup) NodeAddresses(ctx context.Context, name string) ([]string, bool, error) {
	lk, err := l.lookup(ctx)
	if err != nil {
		return nil, false, err
	}
	return lk.NodeAddresses(ctx, name)
}

// ClusterRBAC is Lookup.ClusterRBAC as the identity in ctx.
func (l UserLookup) ClusterRBAC(ctx context.Context) ([]rbacv1.ClusterRole, []rbacv1.ClusterRoleBinding, error) {
	lk, err := l.lookup(ctx)
	if err != nil {
		return nil, nil, err
	}
	return lk.ClusterRBAC(ctx)
}

// CSRApprovalPolicies is Lookup.CSRApprovalPolicies as the identity in ctx.
func (l UserLookup) CSRApprovalPolicies(ctx context.Context) ([]unstructured.Unstructured, error) {
	lk, err := l.lookup(ctx)
	if err != nil {
		return nil, err
	}
	return lk.CSRApprovalPolicies(ctx)
}

// SubjectAccessReview is Lookup.SubjectAccessReview as the identity in ctx.
func (l UserLookup) SubjectAccessReview(ctx context.Context, spec authorizationv1.SubjectAccessReviewSpec) (authorizationv1.SubjectAccessReviewStatus, error) {
	lk, err := l.lookup(ctx)
	if err != nil {
		return authorizationv1.SubjectAccessReviewStatus{}, err
	}
	return lk.SubjectAccessReview(ctx, spec)
}

// ReadCSR is Writer.ReadCSR as the identity in ctx.
func (w UserWriter) ReadCSR(ctx context.Context, name string) (*certificatesv1.CertificateSigningRequest, error) {
	c, err := w.Users.For(ctx)
	if err != nil {
		return nil, err
	}
	return c.Writer.ReadCSR(ctx, name)
}

// WriteCSRCertificate is Writer.WriteCSRCertificate as the identity in ctx.
func (w UserWriter) WriteCSRCertificate(ctx context.Context, csr *certificatesv1.CertificateSigningRequest) (*certificatesv1.CertificateSigningRequest, []string, error) {
	c, err := w.Users.For(ctx)
	if err != nil {
		return nil, nil, err
	}
	return c.Writer.WriteCSRCertificate(ctx, csr)
}
