package kube

import (
	"context"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// LeaseReader reads one Lease with the cache's identity: the approver's
// (`clusterdesk approver`'s leader election), whose holder and renewal say
// whether an approver leads (issue 47). nil, nil when it does not exist.
func (c *Cache) LeaseReader(namespace, name string) func(context.Context) (*coordinationv1.Lease, error) {
	return func(ctx context.Context) (*coordinationv1.Lease, error) {
		l, err := c.k8s.CoordinationV1().Leases(namespace).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return l, err
	}
}
