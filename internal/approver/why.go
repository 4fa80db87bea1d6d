package approver

import (
	"context"
	"sync"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/clusterdesk/clusterdesk/internal/csr"
	"github.com/clusterdesk/clusterdesk/internal/csrpolicy"
	"github.com/clusterdesk/clusterdesk/internal/csrwhy"
)

// Why each request the approver leaves pending is pending (issue 47, item
// 1), asked of internal/csrwhy with what this replica knows: it leads (it
// runs Sync only then), its dry run, the signers the API server refused it,
// its Nodes, and the requester's newer twin. The reason is logged once per
// request and change, and counted by the pending-by-reason gauge.

// whyState is the controller's memory of the reasons.
type whyState struct {
	mu sync.Mutex
	// reasons are the pending requests' last reasons, by UID (dropped with
	// Forget: bounded by the pending requests).
	reasons map[types.UID]csrwhy.Code
	// refused are the signers the API server answered 403 for (cleared by a
	// decision that went through).
	refused map[string]bool
	// dups is the newest pending request of each requester and subject,
	// rebuilt from the cache at most every dupsEvery: O(n) then, a lookup
	// per request (a storm of thousands would otherwise cost a scan each).
	dups    *csrwhy.Duplicates
	dupsAt  time.Time
	dupsMem map[types.UID]*csr.Request
}

// dupsEvery bounds how stale the duplicates grouping may be.
const dupsEvery = 5 * time.Second

func newWhyState() *whyState {
	return &whyState{reasons: map[types.UID]csrwhy.Code{}, refused: map[string]bool{}}
}

// refusedSigner records a 403 (on) or a decision that went through (off).
func (c *Controller) refusedSigner(signer string, on bool) {
	c.why.mu.Lock()
	changed := c.why.refused[signer] != on
	if on {
		c.why.refused[signer] = true
	} else {
		delete(c.why.refused, signer)
	}
	c.why.mu.Unlock()
	if changed && c.o.RefusalsChanged != nil {
		c.o.RefusalsChanged()
	}
}

// newer names a newer pending request of the same requester and subject.
func (c *Controller) newer(obj *certificatesv1.CertificateSigningRequest, req *csr.Request) string {
	c.why.mu.Lock()
	defer c.why.mu.Unlock()
	if now := time.Now(); c.why.dups == nil || now.Sub(c.why.dupsAt) > dupsEvery {
		all, err := c.o.CSRs.List(labels.Everything())
		if err != nil {
			return ""
		}
		d := csrwhy.NewDuplicates(len(all))
		mem := make(map[types.UID]*csr.Request, len(all))
		for _, o := range all {
			if csrpolicy.DecisionOf(o) != "" {
				continue
			}
			r := c.why.dupsMem[o.UID] // decoded by the last build: a request's spec never changes
			if r == nil {
				r, _ = csr.Decode(o.Spec.Request)
			}
			mem[o.UID] = r
			d.Add(o, r)
		}
		c.why.dups, c.why.dupsAt, c.why.dupsMem = d, now, mem
	}
	return c.why.dups.Newer(obj, req)
}

// explain works out why obj stays pending, with the verdicts Sync had (nil:
// not evaluated) and the rate limit that held it (nil: none), and logs and
// counts a change of its reason.
func (c *Controller) explain(ctx context.Context, obj *certificatesv1.CertificateSigningRequest, verdicts []csrpolicy.Verdict, hold *csrwhy.RateHold) {
	in := csrwhy.Input{CSR: obj, Policies: c.o.Policies.Entries(), Now: time.Now(), Detail: true}
	if req, err := csr.Decode(obj.Spec.Request); err == nil {
		in.Request = req
	}
	if verdicts != nil {
		in.Verdicts, in.Evaluated = verdicts, true
	}
	if name := csrpolicy.NodeName(in.Request); name != "" && c.o.Node != nil {
		in.Node = csrwhy.NodeState{Known: true, Node: c.o.Node(name)}
	}
	in.Newer = c.newer(obj, in.Request)
	c.why.mu.Lock()
	in.Approver = csrwhy.Approver{Installed: true, Holder: "this replica", RenewTime: in.Now, LeaseDuration: time.Minute,
		DryRun: c.o.DryRun, Refused: map[string]bool{obj.Spec.SignerName: c.why.refused[obj.Spec.SignerName]}}
	c.why.mu.Unlock()
	in.RateLimit = hold
	r := csrwhy.Explain(ctx, in)
	c.why.mu.Lock()
	was, known := c.why.reasons[obj.UID]
	c.why.reasons[obj.UID] = r.Code
	c.why.mu.Unlock()
	if !known || was != r.Code {
		c.o.Log.Info("approver: pending", "csr", obj.Name, "reason", string(r.Code), "why", r.Message)
	}
}

// forgetWhy drops a decided or deleted request's reason.
func (c *Controller) forgetWhy(uid types.UID) {
	c.why.mu.Lock()
	delete(c.why.reasons, uid)
	c.why.mu.Unlock()
}

// pendingByReason counts the pending requests' last reasons, every code
// present (0 included), for the gauge.
func (c *Controller) pendingByReason() map[csrwhy.Code]int {
	out := make(map[csrwhy.Code]int, len(csrwhy.Codes))
	for _, code := range csrwhy.Codes {
		out[code] = 0
	}
	c.why.mu.Lock()
	defer c.why.mu.Unlock()
	for _, code := range c.why.reasons {
		out[code]++
	}
	return out
}
