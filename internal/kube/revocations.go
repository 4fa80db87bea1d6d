package kube

import (
	"context"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"
)

// Revocation scopes: one session, every session of one user issued until
// Since, or every session issued until Since.
const (
	RevokeSession = "session"
	RevokeUser    = "user"
	RevokeAll     = "all"
	// RevokeClock marks the one Lease that is no sign-out: the replicas'
	// heartbeat (Beat), which tells each replica how current its watch is.
	RevokeClock = "clock"
)

// ClockLeaseName is the heartbeat Lease every replica rewrites (Beat). A
// revocation's name has a scope letter and a hash after this prefix, so
// none can be this one.
const ClockLeaseName = "clusterdesk-signout-clock"

// RevocationLabel marks the Leases that are sign-outs, with their scope as
// value: the replicas watch only those.
const RevocationLabel = "clusterdesk.io/revocation"

// Revocation is one sign-out kept in the cluster, so that every replica of
// the console refuses the signed-out cookie. It is a Lease in the console's
// namespace: the smallest object kind with typed times, and one whose
// RBAC in that namespace grants nothing else of value (a Role on Secrets
// would reach the session keys, on ConfigMaps the console's settings).
// spec.acquireTime is Since; spec.leaseDurationSeconds runs to Until, after
// which the revoked session would have expired anyway and the Lease is
// deleted.
type Revocation struct {
	Name  string
	Scope string
	Since time.Time
	Until time.Time
}

// RevocationSink learns the revocations a watch sees.
type RevocationSink interface {
	Apply(Revocation)
	// Forget: the Lease named name is gone, or no longer reads as a
	// revocation (its label or times were edited away).
	Forget(name string)
	// Heard: the watch delivered the heartbeat carrying marker (Beat), so
	// every write that finished before that Beat was sent has been
	// delivered too: a watch delivers the events of its selection in the
	// order etcd committed them, resuming after a reconnect from the last
	// resourceVersion it delivered ("Efficient detection of changes" in
	// https://kubernetes.io/docs/reference/using-api/api-concepts/; the
	// watch cache keeps that order, k8s.io/apiserver/pkg/storage/cacher/
	// cacher.go). The first list is no such proof: the reflector asks for
	// resourceVersion "0", which the API server may serve from a watch
	// cache that lags (k8s.io/client-go/tools/cache/reflector.go).
	Heard(marker string)
}

// Revocations reads and writes the console's revocation Leases in one
// namespace, as the console's own identity.
type Revocations struct {
	client    kubernetes.Interface
	namespace string
}

// NewRevocations keeps revocations in namespace with cfg's identity.
func NewRevocations(cfg *rest.Config, namespace string) (*Revocations, error) {
	if namespace == "" {
		return nil, fmt.Errorf("revocations need a namespace")
	}
	c, err := kubernetes.NewForConfig(clientConfig(cfg))
	if err != nil {
		return nil, err
	}
	return &Revocations{client: c, namespace: namespace}, nil
}

// Namespace is where the revocations are kept.
func (r *Revocations) Namespace() string { return r.namespace }

func leaseFor(rev Revocation) *coordinationv1.Lease {
	since := metav1.NewMicroTime(rev.Since)
	secs := int32(min(rev.Until.Sub(rev.Since).Seconds()+1, 1<<30))
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: rev.Name, Labels: map[string]string{
			RevocationLabel: rev.Scope, "app.kubernetes.io/name": "clusterdesk",
		}},
		Spec: coordinationv1.LeaseSpec{AcquireTime: &since, LeaseDurationSeconds: &secs},
	}
}

// Put writes rev (one API call). A session's revocation that exists already
// stands; a user's or everyone's is moved to rev's times (a later sign-out
// covers more sessions).
func (r *Revocations) Put(ctx context.Context, rev Revocation) error {
	leases := r.client.CoordinationV1().Leases(r.namespace)
	_, err := leases.Create(ctx, leaseFor(rev), metav1.CreateOptions{FieldManager: FieldManager})
	if !apierrors.IsAlreadyExists(err) {
		return err
	}
	if rev.Scope == RevokeSession {
		return nil
	}
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := leases.Get(ctx, rev.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		want := leaseFor(rev)
		cur.Spec.AcquireTime, cur.Spec.LeaseDurationSeconds = want.Spec.AcquireTime, want.Spec.LeaseDurationSeconds
		_, err = leases.Update(ctx, cur, metav1.UpdateOptions{FieldManager: FieldManager})
		return err
	})
}

// Restore writes rev back as it was: the Lease was deleted or edited before
// the session it revokes expired (SharedRevoker keeps every revocation it
// has seen until then, and writes it back for the replicas that start
// later). Unlike Put it rewrites a session's revocation that exists, and it
// puts the label back on a Lease that lost it.
func (r *Revocations) Restore(ctx context.Context, rev Revocation) error {
	leases := r.client.CoordinationV1().Leases(r.namespace)
	_, err := leases.Create(ctx, leaseFor(rev), metav1.CreateOptions{FieldManager: FieldManager})
	if !apierrors.IsAlreadyExists(err) {
		return err
	}
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := leases.Get(ctx, rev.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		want := leaseFor(rev)
		if cur.Labels == nil {
			cur.Labels = map[string]string{}
		}
		cur.Labels[RevocationLabel] = rev.Scope
		cur.Spec.AcquireTime, cur.Spec.LeaseDurationSeconds = want.Spec.AcquireTime, want.Spec.LeaseDurationSeconds
		_, err = leases.Update(ctx, cur, metav1.UpdateOptions{FieldManager: FieldManager})
		return err
	})
}

// Beat writes marker into the heartbeat Lease (ClockLeaseName), creating it
// if it is missing: the replica that sent it knows its watch is current as
// of the moment it sent it once the watch delivers marker back
// (RevocationSink.Heard). Two API calls; replicas that beat at once retry
// on conflict.
func (r *Revocations) Beat(ctx context.Context, marker string) error {
	leases := r.client.CoordinationV1().Leases(r.namespace)
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := leases.Get(ctx, ClockLeaseName, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			_, err = leases.Create(ctx, &coordinationv1.Lease{
				ObjectMeta: metav1.ObjectMeta{Name: ClockLeaseName, Labels: map[string]string{
					RevocationLabel: RevokeClock, "app.kubernetes.io/name": "clusterdesk",
				}},
				Spec: coordinationv1.LeaseSpec{HolderIdentity: &marker},
			}, metav1.CreateOptions{FieldManager: FieldManager})
			if apierrors.IsAlreadyExists(err) {
				return apierrors.NewConflict(coordinationv1.Resource("leases"), ClockLeaseName, err)
			}
			return err
		}
		if err != nil {
			return err
		}
		cur.Spec.HolderIdentity = &marker
		now := metav1.NowMicro()
		cur.Spec.RenewTime = &now // for people reading the Lease: when a replica last beat
		_, err = leases.Update(ctx, cur, metav1.UpdateOptions{FieldManager: FieldManager})
		return err
	})
}

// Delete removes the revocation named name; one already gone (another
// replica swept it) is no error.
func (r *Revocations) Delete(ctx context.Context, name string) error {
	err := r.client.CoordinationV1().Leases(r.namespace).Delete(ctx, name, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// Watch tells sink every revocation Lease in the namespace, now and as they
// change, until ctx ends: one watch per replica, and the per-request check
// is a lookup in sink's memory. The returned func reports whether the first
// list has been delivered.
func (r *Revocations) Watch(ctx context.Context, sink RevocationSink) (synced func() bool, err error) {
	f := informers.NewSharedInformerFactoryWithOptions(r.client, 0, informers.WithNamespace(r.namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = RevocationLabel }),
		informers.WithTransform(func(obj any) (any, error) {
			if l, ok := obj.(*coordinationv1.Lease); ok {
				l.ManagedFields = nil // kept per Lease in every replica, read by no one
			}
			return obj, nil
		}))
	inf := f.Coordination().V1().Leases().Informer()
	apply := func(obj any) {
		l, ok := obj.(*coordinationv1.Lease)
		if !ok {
			return
		}
		if l.Name == ClockLeaseName {
			if l.Spec.HolderIdentity != nil {
				sink.Heard(*l.Spec.HolderIdentity)
			}
			return
		}
		if rev, ok := revocationOf(l); ok {
			sink.Apply(rev)
			return
		}
		// Edited so that it no longer reads as a revocation (unknown
		// scope, times removed): to the sink it is gone, as if deleted.
		sink.Forget(l.Name)
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    apply,
		UpdateFunc: func(_, obj any) { apply(obj) },
		// Also called when a Lease loses the label the watch selects on.
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if l, ok := obj.(*coordinationv1.Lease); ok && l.Name != ClockLeaseName {
				sink.Forget(l.Name)
			}
		},
	}); err != nil {
		return nil, err
	}
	f.Start(ctx.Done())
	return inf.HasSynced, nil
}

func revocationOf(obj any) (Revocation, bool) {
	l, ok := obj.(*coordinationv1.Lease)
	if !ok || l.Spec.AcquireTime == nil || l.Spec.LeaseDurationSeconds == nil {
		return Revocation{}, false
	}
	scope := l.Labels[RevocationLabel]
	if scope != RevokeSession && scope != RevokeUser && scope != RevokeAll {
		return Revocation{}, false
	}
	since := l.Spec.AcquireTime.Time
	return Revocation{Name: l.Name, Scope: scope, Since: since,
		Until: since.Add(time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second)}, true
}
