package approver

import (
	"context"
	"fmt"
	"os"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// Leader is the Lease the approver's replicas elect their leader with.
type Leader struct {
	Namespace, Name string
	// Identity names this replica in the Lease (default: hostname_pid).
	Identity string
	// Durations of client-go's leader election (defaults 15 s, 10 s, 2 s, the
	// controller-manager's): a replica that stops renewing is replaced after
	// LeaseDuration at most.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// KeepOnCancel does not release the Lease when ctx ends, as a killed
	// process would not; tests use it to stand for a crash.
	KeepOnCancel bool
}

// DefaultIdentity is hostname_pid: a Deployment's pod name and, within it,
// the process.
func DefaultIdentity() string {
	h, _ := os.Hostname()
	return fmt.Sprintf("%s_%d", h, os.Getpid())
}

// RunLeader starts the informers, then decides while this replica holds the
// Lease. It returns when ctx ends or the Lease is lost: a replica that lost
// it exits and starts again (its pod restarts), rather than assume it knows
// where the queue stood.
func (a *Approver) RunLeader(ctx context.Context, l Leader) error {
	if l.Identity == "" {
		l.Identity = DefaultIdentity()
	}
	if l.LeaseDuration == 0 {
		l.LeaseDuration, l.RenewDeadline, l.RetryPeriod = 15*time.Second, 10*time.Second, 2*time.Second
	}
	if err := a.Start(ctx); err != nil {
		return err
	}
	// The Lease is renewed through a client of its own, so a queue of
	// decisions never delays a renewal.
	rc := rest.CopyConfig(a.cfg.Rest)
	rc.UserAgent = FieldManager + "-leader-election"
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return err
	}
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: l.Namespace, Name: l.Name},
		Client:     client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: l.Identity},
	}
	lost := false
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: lock, Name: l.Name,
		LeaseDuration: l.LeaseDuration, RenewDeadline: l.RenewDeadline, RetryPeriod: l.RetryPeriod,
		ReleaseOnCancel: !l.KeepOnCancel,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) {
				a.Metrics.setLeader(true)
				a.ctrl.o.RefusalsChanged = func() { go a.publishStatus(ctx, l.Namespace, l.Name) }
				a.publishStatus(ctx, l.Namespace, l.Name)
				a.cfg.Log.Info("approver: leading", "identity", l.Identity, "lease", l.Namespace+"/"+l.Name)
				a.Run(ctx)
			},
			OnStoppedLeading: func() {
				a.Metrics.setLeader(false)
				lost = ctx.Err() == nil
				a.cfg.Log.Info("approver: not leading", "identity", l.Identity)
			},
			OnNewLeader: func(id string) {
				if id != l.Identity {
					a.cfg.Log.Info("approver: another replica leads", "leader", id)
				}
			},
		},
	})
	if err != nil {
		return err
	}
	le.Run(ctx)
	if lost {
		return fmt.Errorf("approver: lost the Lease %s/%s", l.Namespace, l.Name)
	}
	return nil
}
