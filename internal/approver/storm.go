package approver

import (
	"context"
	"slices"
	"sync"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/clusterdesk/clusterdesk/internal/csr"
	"github.com/clusterdesk/clusterdesk/internal/csrpolicy"
)

// What keeps a storm of requests from hurting: rate limits per requester,
// superseded duplicates, the API server's 429.

// programNamed is the program of the verdict's policy.
func programNamed(programs []*csrpolicy.Program, name string) *csrpolicy.Program {
	for _, pr := range programs {
		if pr.Name == name {
			return pr
		}
	}
	return nil
}

// supersededVerdict denies an older duplicate of the request by approved.
func supersededVerdict(pr *csrpolicy.Program, by string) csrpolicy.Verdict {
	return csrpolicy.Verdict{Policy: pr.Name, Version: pr.Version(), Decision: csrpolicy.Deny, Matched: true, Reason: csrpolicy.ReasonSuperseded,
		Message: "superseded by the newer request " + by + " of the same requester and subject, which the policy approved"}
}

// duplicates applies a SupersedeDuplicates policy's approval of obj (verdict
// v) to obj's duplicates (csrpolicy.DuplicateKey), the requester's other
// requests:
//   - a newer duplicate already approved: obj is superseded (by);
//   - else the newest pending duplicate the same policy approves wins (obj
//     when none newer does): a kubelet waits for its latest request, and the
//     fair queue serves a requester's oldest first;
//   - every pending duplicate older than the winner is superseded.
func (c *Controller) duplicates(ctx context.Context, obj *certificatesv1.CertificateSigningRequest, v csrpolicy.Verdict, programs []*csrpolicy.Program) (
	winner *certificatesv1.CertificateSigningRequest, wv csrpolicy.Verdict, superseded []*certificatesv1.CertificateSigningRequest, by *certificatesv1.CertificateSigningRequest) {
	winner, wv = obj, v
	req, err := csr.Decode(obj.Spec.Request)
	key := ""
	if err == nil {
		key = csrpolicy.DuplicateKey(obj, req)
	}
	if key == "" {
		return winner, wv, nil, nil
	}
	var pending []*certificatesv1.CertificateSigningRequest
	for _, r := range c.o.Requests(obj.Spec.Username) {
		if r.UID == obj.UID {
			continue
		}
		d := csrpolicy.DecisionOf(r)
		// Only what can matter is decoded: pending requests and newer approved ones.
		if d == csrpolicy.Deny || d == csrpolicy.Approve && !csrpolicy.Newer(r, obj) {
			continue
		}
		rr, err := csr.Decode(r.Spec.Request)
		if err != nil || csrpolicy.DuplicateKey(r, rr) != key {
			continue
		}
		if d == csrpolicy.Approve {
			return winner, wv, nil, r
		}
		pending = append(pending, r)
	}
	slices.SortFunc(pending, func(a, b *certificatesv1.CertificateSigningRequest) int {
		if csrpolicy.Newer(a, b) {
			return -1
		}
		return 1
	})
	for _, p := range pending {
		if !csrpolicy.Newer(p, obj) {
			break
		}
		out := Combine(c.evaluate(ctx, p, programs))
		if out.Decide && out.Verdict.Decision == csrpolicy.Approve && out.Verdict.Policy == v.Policy {
			winner, wv = p, out.Verdict
			break
		}
	}
	if winner != obj {
		superseded = append(superseded, obj)
	}
	for _, p := range pending {
		if p != winner && csrpolicy.Newer(winner, p) {
			superseded = append(superseded, p)
		}
	}
	return winner, wv, superseded, nil
}

// held reports whether pr's rate limit holds the approval of r, counting
// the requester's approvals in the cache and those this process wrote that
// the cache does not show yet.
func (c *Controller) held(pr *csrpolicy.Program, r *certificatesv1.CertificateSigningRequest) (held bool, until time.Time, approved int) {
	reqs := c.o.Requests(r.Spec.Username)
	reqs = append(reqs, c.approved.unseen(r.Spec.Username, reqs, c.o.Now())...)
	now := c.o.Now()
	held, until, err := csrpolicy.HeldByRateLimit(pr.RateLimit, r, reqs, now)
	if err != nil {
		c.o.Log.Debug("approver: rate limit", "csr", r.Name, "err", err)
	}
	approved, _ = csrpolicy.RecentApprovals(reqs, r.Spec.Username, pr.RateLimit.Period, now)
	return held, until, approved
}

// hold leaves obj pending (winner is the request the policy would approve,
// obj or a newer duplicate), reports it once, and tries again when the
// window frees.
func (c *Controller) hold(obj, winner *certificatesv1.CertificateSigningRequest, pr *csrpolicy.Program, until time.Time) error {
	if c.firstReport(obj.UID, "held "+pr.Name) {
		c.o.Metrics.undecided.WithLabelValues(UndecidedHeld).Inc()
		c.o.Log.Info("approver: held by the policy's rate limit; the request stays pending", "csr", obj.Name,
			"requester", obj.Spec.Username, "policy", pr.Name, "max", pr.RateLimit.MaxApprovals, "period", pr.RateLimit.Period,
			"until", until, "approving", winner.Name)
	}
	if until.IsZero() {
		return nil // no requester: nothing frees; a change of the request tries again
	}
	return &requeueAfter{after: until.Sub(c.o.Now()) + time.Second, why: "held by the rate limit of " + pr.Name}
}

// recentApprovals are the approvals this process wrote, until its cache
// shows them (or for 10 minutes at most): a rate limit counts them, so
// that the next request of the requester, worked before the informer's
// event arrives, is not approved past the limit.
type recentApprovals struct {
	mu sync.Mutex
	m  map[types.UID]localApproval
}

type localApproval struct {
	username, name string
	at             time.Time
}

func (a *recentApprovals) add(r *certificatesv1.CertificateSigningRequest, at time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.m == nil {
		a.m = map[types.UID]localApproval{}
	}
	a.m[r.UID] = localApproval{username: r.Spec.Username, name: r.Name, at: at}
}

// unseen are username's approvals not yet approved in cached, as requests
// approved at the time they were written. now is the controller's clock,
// the one add was given: the real clock here dropped every approval of a
// test whose clock was set 10 minutes before the real one.
func (a *recentApprovals) unseen(username string, cached []*certificatesv1.CertificateSigningRequest, now time.Time) []*certificatesv1.CertificateSigningRequest {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []*certificatesv1.CertificateSigningRequest
	for uid, l := range a.m {
		if now.Sub(l.at) > 10*time.Minute {
			delete(a.m, uid)
			continue
		}
		if l.username != username {
			continue
		}
		seen := slices.ContainsFunc(cached, func(c *certificatesv1.CertificateSigningRequest) bool {
			return c.UID == uid && csrpolicy.DecisionOf(c) == csrpolicy.Approve
		})
		if seen {
			delete(a.m, uid)
			continue
		}
		out = append(out, &certificatesv1.CertificateSigningRequest{
			ObjectMeta: metav1.ObjectMeta{Name: l.name, UID: uid},
			Spec:       certificatesv1.CertificateSigningRequestSpec{Username: l.username},
			Status: certificatesv1.CertificateSigningRequestStatus{Conditions: []certificatesv1.CertificateSigningRequestCondition{{
				Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, LastUpdateTime: metav1.NewTime(l.at)}}},
		})
	}
	return out
}

// Throttled reports whether err is the API server's 429 Too Many Requests
// (its flow control), and how long to wait: its Retry-After, 1 s when it
// names none.
func Throttled(err error) (time.Duration, bool) {
	if !apierrors.IsTooManyRequests(err) {
		return 0, false
	}
	if secs, ok := apierrors.SuggestsClientDelay(err); ok && secs > 0 {
		return time.Duration(secs) * time.Second, true
	}
	return time.Second, true
}
