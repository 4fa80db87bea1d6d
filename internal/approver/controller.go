package approver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	certlisters "k8s.io/client-go/listers/certificates/v1"

	"github.com/clusterdesk/clusterdesk/internal/audit"
	"github.com/clusterdesk/clusterdesk/internal/csr"
	"github.com/clusterdesk/clusterdesk/internal/csrpolicy"
	"github.com/clusterdesk/clusterdesk/internal/csrwhy"
)

// Options are what the decide loop reads and writes through.
type Options struct {
	CSRs certlisters.CertificateSigningRequestLister
	// Node returns what policies see of the Node name, nil when there is none.
	Node     func(name string) *csrpolicy.Node
	Policies *Policies
	Decider  Decider
	// DryRun evaluates, logs, counts and audits what would be decided, once
	// per request, and writes nothing: the Decider sends the decision as the
	// API server's dry run (dryRun=All), which answers as it would for real,
	// a signer not granted included.
	DryRun  bool
	Metrics *Metrics
	Audit   *audit.Recorder // nil records nothing
	User    string          // the approver's identity, in the audit records
	Log     *slog.Logger
	// EvalTimeout bounds the policies' evaluation of one request (default 1 s).
	EvalTimeout time.Duration
	// Requests lists one requester's requests (spec.username), for rate
	// limits and duplicates: an informer index, so a storm costs a lookup per
	// request, not a walk of every request. nil: CSRs filtered.
	Requests func(username string) []*certificatesv1.CertificateSigningRequest
	// Now is the clock of rate limits (default time.Now).
	Now func() time.Time
	// RefusalsChanged is told when the signers the API server refused
	// changed (the leader writes them on its Lease); nil: nobody.
	RefusalsChanged func()
}

// Controller is the decide loop: a queue fair between requesters
// (fairQueue) and the workers that evaluate and decide its requests.
type Controller struct {
	o     Options
	queue *fairQueue

	mu sync.Mutex
	// reported is, per pending request, the last outcome logged and counted
	// without a write (a dry run's verdict, a conflict, an error): requests
	// are evaluated again on every policy change and resync, and would
	// otherwise be counted again each time. Entries go when the request is
	// decided or deleted, so it is bounded by the pending requests.
	reported map[types.UID]string
	// approved is the approvals this process wrote that its cache may not
	// show yet, counted by rate limits until it does (approvals.go).
	approved recentApprovals
	// why is each pending request's reason (why.go).
	why *whyState
}

// errRequeue asks for another try after the queue's backoff.
var errRequeue = errors.New("requeue")

// requeueAfter asks for another try of the request after a delay of its own
// (a rate limit's window, the API server's Retry-After), never a pause of
// the others.
type requeueAfter struct {
	after time.Duration
	why   string
}

func (r *requeueAfter) Error() string { return r.why + ": again in " + r.after.String() }

// NewController builds the loop; Run starts its workers.
func NewController(o Options) *Controller {
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.EvalTimeout <= 0 {
		o.EvalTimeout = time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Requests == nil {
		o.Requests = func(username string) []*certificatesv1.CertificateSigningRequest {
			all, _ := o.CSRs.List(labels.Everything())
			var out []*certificatesv1.CertificateSigningRequest
			for _, c := range all {
				if c.Spec.Username == username {
					out = append(out, c)
				}
			}
			return out
		}
	}
	return &Controller{o: o, queue: newFairQueue(), reported: map[types.UID]string{}, approved: recentApprovals{}, why: newWhyState()}
}

// Enqueue adds a request to the queue, in its requester's turn; names
// already queued are queued once.
func (c *Controller) Enqueue(r *certificatesv1.CertificateSigningRequest) { c.queue.Add(itemOf(r)) }

func itemOf(r *certificatesv1.CertificateSigningRequest) item {
	return item{Name: r.Name, Requester: r.Spec.Username, Created: r.CreationTimestamp.Time}
}

// Forget drops what was remembered of a deleted request.
func (c *Controller) Forget(uid types.UID) {
	c.mu.Lock()
	delete(c.reported, uid)
	c.mu.Unlock()
	c.forgetWhy(uid)
}

// Run works the queue with workers goroutines until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) {
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for c.next(ctx) {
			}
		})
	}
	<-ctx.Done()
	c.queue.ShutDown()
	wg.Wait()
}

func (c *Controller) next(ctx context.Context) bool {
	it, ok := c.queue.Get()
	if !ok {
		return false
	}
	defer c.queue.Done(it)
	var later *requeueAfter
	switch err := c.Sync(ctx, it.Name); {
	case err == nil:
		c.queue.Forget(it.Name)
	case ctx.Err() != nil:
		// Stopping: the next leader evaluates the request again.
	case errors.As(err, &later):
		c.queue.AddAfter(it, later.after)
	default:
		c.queue.Retry(it)
	}
	return true
}

// Sync evaluates one request and decides it when its policies agree. An
// error means: try again after a backoff, on the request as the cache then
// holds it.
func (c *Controller) Sync(ctx context.Context, name string) (err error) {
	obj, err := c.o.CSRs.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if csrpolicy.DecisionOf(obj) != "" {
		// Decided, by a person, another replica or this one: a decision is
		// final, and never made twice.
		c.Forget(obj.UID)
		return nil
	}
	// Whatever leaves the request pending, its reason is worked out, and
	// logged and counted when it changed (why.go).
	var verdicts []csrpolicy.Verdict
	var rateHold *csrwhy.RateHold
	decided := false
	defer func() {
		if !decided && ctx.Err() == nil {
			c.explain(ctx, obj, verdicts, rateHold)
		}
	}()
	// wrote writes one decision; decided notes that obj's own was made.
	wrote := func(d *certificatesv1.CertificateSigningRequest, v csrpolicy.Verdict) error {
		done, err := c.write(ctx, d, v)
		if done && d.UID == obj.UID {
			decided = true
		}
		return err
	}
	programs, broken := c.o.Policies.For(obj.Spec.SignerName)
	if len(broken) > 0 {
		// A policy that cannot run might have denied this request: what the
		// others say is not the policies' answer (Policies).
		if c.firstReport(obj.UID, "broken "+strings.Join(broken, ",")) {
			c.o.Log.Warn("approver: a policy naming this signer cannot run; the request is left to people until it is fixed",
				"csr", name, "signer", obj.Spec.SignerName, "policies", broken)
			c.o.Metrics.undecided.WithLabelValues(UndecidedBroken).Inc()
		}
		return nil
	}
	programs = covering(programs, obj)
	if len(programs) == 0 {
		return nil
	}
	verdicts = c.evaluate(ctx, obj, programs)
	out := Combine(verdicts)
	switch {
	case len(out.Errors) > 0:
		if c.firstReport(obj.UID, "error") {
			for _, v := range out.Errors {
				c.o.Log.Warn("approver: a policy could not run; the request is left to people", "csr", name, "policy", v.Policy, "err", v.Err)
				c.o.Metrics.error(ErrEvaluation)
			}
			c.o.Metrics.undecided.WithLabelValues(UndecidedError).Inc()
		}
		return nil
	case out.Conflict:
		if c.firstReport(obj.UID, "conflict") {
			c.o.Log.Warn("approver: the policies disagree; the request is left to people", "csr", name)
			c.o.Metrics.undecided.WithLabelValues(UndecidedConflict).Inc()
		}
		return nil
	case !out.Decide:
		return nil
	}
	v := out.Verdict
	winner, superseded := obj, []*certificatesv1.CertificateSigningRequest(nil)
	pr := programNamed(programs, v.Policy)
	if v.Decision == csrpolicy.Approve && pr != nil && pr.SupersedeDuplicates {
		var by *certificatesv1.CertificateSigningRequest
		winner, v, superseded, by = c.duplicates(ctx, obj, v, programs)
		if by != nil {
			// A newer duplicate is approved already: this one is superseded.
			return wrote(obj, supersededVerdict(pr, by.Name))
		}
	}
	if v.Decision == csrpolicy.Approve && pr != nil && pr.RateLimit != nil {
		if held, until, approved := c.held(pr, winner); held {
			rateHold = &csrwhy.RateHold{Policy: pr.Name, Approved: approved, Max: pr.RateLimit.MaxApprovals, Period: pr.RateLimit.Period}
			return c.hold(obj, winner, pr, until)
		}
	}
	if err := wrote(winner, v); err != nil {
		return err
	}
	if v.Decision == csrpolicy.Approve && !c.o.DryRun {
		c.approved.add(winner, c.o.Now())
	}
	for _, d := range superseded {
		// Each older duplicate as the cache read it, by resourceVersion: one
		// decided or changed meanwhile is skipped (409) and evaluated again.
		if err := wrote(d, supersededVerdict(pr, winner.Name)); err != nil {
			var later *requeueAfter
			if errors.As(err, &later) {
				c.queue.AddAfter(itemOf(d), later.after)
			}
		}
	}
	return nil
}

// write sends one decision and answers its outcome: nil when decided (or,
// in a dry run, reported), an error to try again; done when the request is
// decided for real or gone (nothing pending to explain).
func (c *Controller) write(ctx context.Context, obj *certificatesv1.CertificateSigningRequest, v csrpolicy.Verdict) (done bool, err error) {
	name := obj.Name
	// A dry run leaves the request pending, to be evaluated again at each
	// policy change and resync: its would-be decision is sent and reported
	// once.
	if c.o.DryRun && !c.firstReport(obj.UID, "dry-run "+string(v.Decision)+" "+v.Policy+" "+v.Reason) {
		return false, nil
	}
	stored, werr := c.o.Decider.Decide(ctx, obj, v)
	err = werr
	if ctx.Err() != nil && err != nil {
		return false, err // stopped mid-write: no verdict on what happened, nothing recorded
	}
	c.audit(obj, stored, v, err)
	superseded := v.Reason == csrpolicy.ReasonSuperseded
	switch {
	case err == nil && c.o.DryRun:
		c.refusedSigner(obj.Spec.SignerName, false)
		c.o.Metrics.decided(v.Policy, v.Decision, true)
		c.o.Log.Info("approver (dry run): would decide", "csr", name, "decision", v.Decision, "policy", v.Policy, "superseded", superseded)
		return false, nil
	case err == nil:
		c.refusedSigner(obj.Spec.SignerName, false)
		c.Forget(obj.UID)
		c.o.Metrics.decided(v.Policy, v.Decision, false)
		if superseded {
			c.o.Metrics.superseded.Inc()
		}
		c.o.Log.Info("approver: decided", "csr", name, "decision", v.Decision, "policy", v.Policy, "superseded", superseded)
		return true, nil
	case apierrors.IsConflict(err):
		// The request changed since the cache read it (decided meanwhile, or
		// relabelled): evaluate again once the cache holds the change.
		c.o.Metrics.error(ErrConflict)
		c.Forget(obj.UID) // a dry run reports it again then
		return false, errRequeue
	case apierrors.IsNotFound(err):
		return true, nil // deleted: nothing pending to explain
	case apierrors.IsForbidden(err):
		// Not granted `approve` on this signer: trying again at once would be
		// refused the same way. The next resync, policy change or change of
		// the request tries again.
		c.refusedSigner(obj.Spec.SignerName, true)
		c.o.Metrics.error(ErrForbidden)
		c.o.Log.Error("approver: the API server refused the decision; grant the approver `approve` on this signer (its ClusterRole's signers resourceNames)",
			"csr", name, "signer", obj.Spec.SignerName, "policy", v.Policy, "err", err)
		return false, nil
	}
	c.Forget(obj.UID)
	if after, ok := Throttled(err); ok {
		// The API server's flow control refused the write (429): this request
		// waits for its Retry-After; the others go on.
		c.o.Metrics.error(ErrThrottled)
		c.o.Log.Warn("approver: the API server is throttling the approver; the request is tried again after its Retry-After",
			"csr", name, "retry-after", after)
		return false, &requeueAfter{after: after, why: "throttled"}
	}
	c.o.Metrics.error(ErrWrite)
	c.o.Log.Error("approver: decision failed", "csr", name, "policy", v.Policy, "err", err)
	return false, fmt.Errorf("deciding %s: %w", name, err)
}

// evaluate runs every policy on the request, the request decoded once and
// its Node read once.
func (c *Controller) evaluate(ctx context.Context, obj *certificatesv1.CertificateSigningRequest, programs []*csrpolicy.Program) []csrpolicy.Verdict {
	in := csrpolicy.Input{CSR: obj}
	if req, err := csr.Decode(obj.Spec.Request); err == nil {
		in.Request = req
	}
	if node := csrpolicy.NodeName(in.Request); node != "" && c.o.Node != nil {
		in.Node = c.o.Node(node)
	}
	ctx, cancel := context.WithTimeout(ctx, c.o.EvalTimeout)
	defer cancel()
	verdicts := make([]csrpolicy.Verdict, len(programs))
	for i, pr := range programs {
		verdicts[i] = pr.Evaluate(ctx, in)
	}
	return verdicts
}

// firstReport reports whether outcome is new for the request.
func (c *Controller) firstReport(uid types.UID, outcome string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.reported[uid] == outcome {
		return false
	}
	c.reported[uid] = outcome
	return true
}

// audit records one decision (or, in a dry run, the decision it would be)
// in the console's audit format.
func (c *Controller) audit(before, after *certificatesv1.CertificateSigningRequest, v csrpolicy.Verdict, err error) {
	rec := audit.Record{
		User: c.o.User, Verb: "approve", APIVersion: certificatesv1.SchemeGroupVersion.String(),
		Kind: "CertificateSigningRequest", APIGroup: certificatesv1.GroupName, Resource: "certificatesigningrequests",
		Name: before.Name, UID: string(before.UID), Signer: before.Spec.SignerName,
		Reason: Condition(v).Message, RVBefore: before.ResourceVersion, DryRun: c.o.DryRun,
	}
	if v.Decision == csrpolicy.Deny {
		rec.Verb = "deny"
	}
	if after != nil {
		rec.RVAfter = after.ResourceVersion
	}
	rec.Finish(err)
	c.o.Audit.Record(rec)
}

// covering keeps the programs whose spec.requesters cover the request's
// requester (issue 47, item 2): a policy applies to whom it names.
func covering(programs []*csrpolicy.Program, obj *certificatesv1.CertificateSigningRequest) []*csrpolicy.Program {
	out := programs[:0:0]
	for _, pr := range programs {
		if pr.Covers(obj.Spec.Username, obj.Spec.Groups) {
			out = append(out, pr)
		}
	}
	return out
}
