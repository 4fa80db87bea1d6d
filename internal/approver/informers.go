package approver

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/clusterdesk/clusterdesk/internal/audit"
	"github.com/clusterdesk/clusterdesk/internal/csrpolicy"
	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// Config is one approver process.
type Config struct {
	Rest *rest.Config
	// PolicySelector selects the policies the approver runs (a label
	// selector; empty: every policy). Policies it does not select stay in
	// shadow mode: the console shows their verdicts, nobody acts on them.
	PolicySelector string
	DryRun         bool
	Workers        int // default 2
	// Resync evaluates every pending request again this often (default
	// 10 min): a request refused for a signer not granted is tried again
	// once the grant may have been fixed, never in a loop.
	Resync time.Duration
	Audit  *audit.Recorder
	User   string
	Log    *slog.Logger
}

// Approver is the informers, the metrics and the decide loop of one process.
type Approver struct {
	Metrics *Metrics
	ctrl    *Controller
	cfg     Config
	client  kubernetes.Interface
	dynamic dynamic.Interface
	factory informers.SharedInformerFactory
	dynInf  dynamicinformer.DynamicSharedInformerFactory
	synced  []cache.InformerSynced
}

// New builds the approver's clients and informers; Start starts them.
func New(cfg Config) (*Approver, error) {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 2
	}
	if cfg.Resync <= 0 {
		cfg.Resync = 10 * time.Minute
	}
	sel, err := labels.Parse(cfg.PolicySelector)
	if err != nil {
		return nil, fmt.Errorf("policy selector: %w", err)
	}
	rc := rest.CopyConfig(cfg.Rest)
	rc.UserAgent = FieldManager
	// client-go's default (5 QPS, burst 10) would hold a queue of 5,000
	// requests for over 16 minutes; the API server's flow control, not this
	// client, is what protects it (its 429s are honoured per request:
	// Throttled). A storm of 1,000 nodes with retries is some 1,500 writes
	// (approvals and superseded duplicates): 50 QPS decides it in 30 s.
	rc.QPS, rc.Burst = 50, 100
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	a := &Approver{cfg: cfg, client: client, dynamic: dyn}
	a.factory = informers.NewSharedInformerFactory(client, cfg.Resync)
	a.dynInf = dynamicinformer.NewFilteredDynamicSharedInformerFactory(dyn, 0, metav1.NamespaceAll, func(o *metav1.ListOptions) {
		o.LabelSelector = sel.String()
	})

	csrInf := a.factory.Certificates().V1().CertificateSigningRequests()
	nodeInf := a.factory.Core().V1().Nodes()
	// Policies read a Node's name and addresses only: the cache keeps no
	// more of it (a Node's status lists its images and is large).
	if err := nodeInf.Informer().SetTransform(func(obj any) (any, error) {
		n, ok := obj.(*corev1.Node)
		if !ok {
			return obj, nil
		}
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.Name, ResourceVersion: n.ResourceVersion},
			Status: corev1.NodeStatus{Addresses: n.Status.Addresses}}, nil
	}); err != nil {
		return nil, err
	}
	polInf := a.dynInf.ForResource(kube.CSRApprovalPolicyResource)
	// One requester's requests, for rate limits and duplicates, by lookup.
	if err := csrInf.Informer().AddIndexers(cache.Indexers{requesterIndex: func(obj any) ([]string, error) {
		if c, ok := obj.(*certificatesv1.CertificateSigningRequest); ok {
			return []string{c.Spec.Username}, nil
		}
		return nil, nil
	}}); err != nil {
		return nil, err
	}
	csrIndex := csrInf.Informer().GetIndexer()

	policies := NewPolicies(func() ([]*unstructured.Unstructured, error) {
		objs, err := polInf.Lister().List(labels.Everything())
		out := make([]*unstructured.Unstructured, 0, len(objs))
		for _, o := range objs {
			if u, ok := o.(*unstructured.Unstructured); ok {
				out = append(out, u)
			}
		}
		return out, err
	}, cfg.Log, func(string, error) { a.Metrics.error(ErrPolicy) })
	csrLister := csrInf.Lister()
	a.Metrics = NewMetrics(func() ([]*certificatesv1.CertificateSigningRequest, error) {
		return csrLister.List(labels.Everything())
	}, policies.Signers)
	a.Metrics.brokenPolicies = policies.Broken
	nodeLister := nodeInf.Lister()
	a.ctrl = NewController(Options{
		CSRs: csrLister, Policies: policies, Decider: APIDecider{Client: client, DryRun: cfg.DryRun},
		DryRun: cfg.DryRun, Metrics: a.Metrics, Audit: cfg.Audit, User: cfg.User, Log: cfg.Log,
		Requests: func(username string) []*certificatesv1.CertificateSigningRequest {
			objs, _ := csrIndex.ByIndex(requesterIndex, username)
			out := make([]*certificatesv1.CertificateSigningRequest, 0, len(objs))
			for _, o := range objs {
				if c, ok := o.(*certificatesv1.CertificateSigningRequest); ok {
					out = append(out, c)
				}
			}
			return out
		},
		Node: func(name string) *csrpolicy.Node {
			n, err := nodeLister.Get(name)
			if err != nil {
				return nil
			}
			out := &csrpolicy.Node{Name: n.Name}
			for _, ad := range n.Status.Addresses {
				out.Addresses = append(out.Addresses, ad.Address)
			}
			return out
		},
	})
	a.Metrics.byReason = a.ctrl.pendingByReason

	// Every change of a pending request queues it; decided ones are skipped
	// when worked, so queueing them costs one lookup.
	if _, err := csrInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { a.enqueue(obj) },
		UpdateFunc: func(_, obj any) { a.enqueue(obj) },
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if c, ok := obj.(*certificatesv1.CertificateSigningRequest); ok {
				a.ctrl.Forget(c.UID)
			}
		},
	}); err != nil {
		return nil, err
	}
	// A policy change may decide any pending request: all are evaluated again.
	if _, err := polInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { a.policiesChanged(policies) },
		UpdateFunc: func(any, any) { a.policiesChanged(policies) },
		DeleteFunc: func(any) { a.policiesChanged(policies) },
	}); err != nil {
		return nil, err
	}
	a.synced = []cache.InformerSynced{csrInf.Informer().HasSynced, nodeInf.Informer().HasSynced, polInf.Informer().HasSynced}
	return a, nil
}

// requesterIndex indexes the requests by spec.username.
const requesterIndex = "requester"

func (a *Approver) enqueue(obj any) {
	if c, ok := obj.(*certificatesv1.CertificateSigningRequest); ok && csrpolicy.DecisionOf(c) == "" {
		a.ctrl.Enqueue(c)
	}
}

func (a *Approver) policiesChanged(p *Policies) {
	p.Invalidate()
	csrs, err := a.ctrl.o.CSRs.List(labels.Everything())
	if err != nil {
		return
	}
	for _, c := range csrs {
		a.enqueue(c)
	}
}

// Start starts the informers and waits until their caches are filled.
func (a *Approver) Start(ctx context.Context) error {
	// An informer whose LIST fails retries for ever, saying so only in
	// client-go's log: a missing CRD or a missing grant is an error here.
	_, err := a.dynamic.Resource(kube.CSRApprovalPolicyResource).List(ctx, metav1.ListOptions{Limit: 1})
	switch {
	case apierrors.IsNotFound(err):
		return fmt.Errorf("approver: the CSRApprovalPolicy CRD is not installed (deploy/base/csrapprovalpolicies.yaml): %w", err)
	case err != nil:
		return fmt.Errorf("approver: listing the CSRApprovalPolicies: %w", err)
	}
	a.factory.Start(ctx.Done())
	a.dynInf.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), a.synced...) {
		return fmt.Errorf("approver: the caches did not fill: %w", context.Cause(ctx))
	}
	return nil
}

// Run decides until ctx ends. Call it on the leader only, after Start.
func (a *Approver) Run(ctx context.Context) {
	a.cfg.Log.Info("approver: deciding", "dry-run", a.cfg.DryRun, "workers", a.cfg.Workers)
	a.ctrl.Run(ctx, a.cfg.Workers)
}
