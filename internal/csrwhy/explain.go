package csrwhy

import (
	"context"
	"fmt"
	"strings"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"

	"github.com/clusterdesk/clusterdesk/internal/csr"
	"github.com/clusterdesk/clusterdesk/internal/csrpolicy"
	"github.com/clusterdesk/clusterdesk/internal/durationtext"
)

// Input is one pending request and what the engine needs to say why it is
// pending. The zero value of each part is "nothing known": no Node state, no
// newer request, no rate limit, no approver installed.
type Input struct {
	CSR *certificatesv1.CertificateSigningRequest
	// Request is spec.request decoded (nil: it does not decode).
	Request *csr.Request
	// Policies are the policies the deciding party runs (the console: every
	// policy it serves; the approver: those it selects), compiled.
	Policies []csrpolicy.Entry
	// Verdicts, when Evaluated, are the policies' verdicts on the request as
	// csrpolicy.Compiled.Evaluate gives them (the queue memoizes them per
	// policy generation); otherwise the engine evaluates the policies.
	Verdicts  []csrpolicy.Verdict
	Evaluated bool
	// Node is what is known of the Node a kubelet request names.
	Node NodeState
	// Newer names a newer pending request of the same requester and subject
	// (Duplicates.Newer), "" for none.
	Newer string
	// RateLimit, when set, is the rate limit holding the requester's approvals
	// (the approver's own count). Otherwise Approvals, when set, counts the
	// requester's approvals after since (csrpolicy.RecentApprovals over the
	// caller's index: the console's queue), and the engine works the hold out
	// with the approving policy's rate limit (RateLimit.Holds).
	RateLimit *RateHold
	Approvals ApprovalCounter
	Approver  Approver
	Now       time.Time
	// Detail asks for the message (the clause evaluation costs one CEL
	// evaluation per clause): a filter over thousands of requests needs only
	// the code.
	Detail bool
}

// NodeState is what the caller knows of the request's Node.
type NodeState struct {
	// Known: the caller read the Node (the approver's informer, a request's
	// page as the user); the queue watches no Nodes and knows nothing.
	Known bool
	// Node is the Node as policies see it, nil when it does not exist.
	Node *csrpolicy.Node
}

// ApprovalCounter counts a requester's approvals after a time (an
// interface, not a func: a method value would cost an allocation per row
// of a storm's filter).
type ApprovalCounter interface {
	Since(username string, since time.Time) int
}

// RateHold is a rate limit holding the requester's next approval: Approved
// of Max approvals of the requester's requests within Period already.
type RateHold struct {
	Policy        string
	Approved, Max int
	Period        time.Duration
}

// Approver is what is known of `clusterdesk approver`.
type Approver struct {
	// Installed: its Lease exists.
	Installed bool
	// Lease names it (namespace/name), for the messages.
	Lease string
	// Holder and RenewTime are the Lease's; LeaseDuration its
	// spec.leaseDurationSeconds. A Lease not renewed within LeaseDuration
	// (client-go's leader election's own rule) has no leader.
	Holder        string
	RenewTime     time.Time
	LeaseDuration time.Duration
	DryRun        bool
	// Refused are the signers the API server refused it `approve` on (403).
	Refused map[string]bool
}

// Leads reports whether some replica holds the Lease at now.
func (a Approver) Leads(now time.Time) bool {
	return a.Holder != "" && !a.RenewTime.IsZero() && now.Sub(a.RenewTime) <= a.LeaseDuration
}

// Explain says why the pending request is pending: the first reason that
// holds, in the order of Codes.
func Explain(ctx context.Context, in Input) Reason {
	c := in.CSR
	signer, user := c.Spec.SignerName, c.Spec.Username
	naming := make([]csrpolicy.Entry, 0, len(in.Policies))
	for _, e := range in.Policies {
		if len(e.Policy.Signers) == 0 || e.Policy.AppliesTo(signer) {
			naming = append(naming, e)
		}
	}
	if len(naming) == 0 {
		return in.say(NoPolicy, "", "no policy names the signer %s", signer)
	}
	covering := naming[:0:0]
	for _, e := range naming {
		if e.Err != nil || e.Policy.Covers(user, c.Spec.Groups) {
			covering = append(covering, e)
		}
	}
	if len(covering) == 0 {
		return in.say(NotForRequester, naming[0].Policy.Name, "no policy naming the signer %s covers the requester %s%s (%s: %s)",
			signer, user, groupsWords(c.Spec.Groups), policyNames(naming), naming[0].Policy.Requesters)
	}
	if in.Newer != "" {
		return in.say(Superseded, "", "superseded by the newer request %s of the same requester (%s) and subject", in.Newer, user)
	}
	verdicts := in.Verdicts
	if !in.Evaluated {
		verdicts = evaluate(ctx, covering, in)
	}
	var first *csrpolicy.Verdict
	for i, v := range verdicts {
		if v.Err != nil {
			return in.say(PolicyError, v.Policy, "the policy %s cannot run on it: %s", v.Policy, oneLine(v.Err.Error()))
		}
		if !v.Matched {
			continue
		}
		if first == nil {
			first = &verdicts[i]
		} else if v.Decision != first.Decision {
			return in.say(Conflict, first.Policy, "the policies disagree: %s would %s it, %s would %s it",
				first.Policy, verb(first.Decision), v.Policy, verb(v.Decision))
		}
	}
	if first == nil {
		if name := csrpolicy.NodeName(in.Request); name != "" && in.Node.Known && in.Node.Node == nil {
			return in.say(NodeMissing, "", "its Node %s does not exist", name)
		}
		return in.clauseFalse(ctx, covering)
	}
	a, would := in.Approver, fmt.Sprintf("the policy %s would %s it", first.Policy, verb(first.Decision))
	switch {
	case !a.Installed:
		return in.say(NotInstalled, first.Policy, "%s, and no approver is installed (no Lease %s)", would, a.Lease)
	case !a.Leads(in.Now):
		if a.Holder == "" {
			return in.say(NoLeader, first.Policy, "%s, and no approver leads (the Lease %s has no holder)", would, a.Lease)
		}
		return in.say(NoLeader, first.Policy, "%s, and no approver leads (the Lease %s, held by %s, was last renewed %s ago, beyond its %s)",
			would, a.Lease, a.Holder, in.Now.Sub(a.RenewTime).Round(time.Second), a.LeaseDuration)
	case a.Refused[signer]:
		return in.say(Forbidden, first.Policy, "%s, and the API server refused the approver `approve` on the signer %s (403): grant it in its ClusterRole", would, signer)
	}
	// Only a request the approver would otherwise be deciding pays for the
	// rate limit's count (a lookup in the requester's approvals).
	if r := in.rateHold(first); r != nil {
		return in.say(RateLimited, r.Policy, "held by the rate limit of the policy %s: %d of %d approvals for %s within %s", r.Policy, r.Approved, r.Max, user, durationtext.Short(r.Period))
	}
	if a.DryRun {
		return in.say(DryRun, first.Policy, "%s; the approver runs in dry run and writes nothing", would)
	}
	return in.say(Deciding, first.Policy, "%s; the approver (%s) is deciding it", would, a.Holder)
}

// rateHold is the rate limit holding the approval v would make: the
// caller's (Input.RateLimit), else the approving policy's rate limit over
// the requester's approvals Input.Approvals counts; nil when none holds.
func (in Input) rateHold(v *csrpolicy.Verdict) *RateHold {
	if in.RateLimit != nil || in.Approvals == nil || v.Decision != csrpolicy.Approve {
		return in.RateLimit
	}
	for _, e := range in.Policies {
		rl := e.Policy.RateLimit
		if e.Policy.Name != v.Policy || rl == nil {
			continue
		}
		if n := in.Approvals.Since(in.CSR.Spec.Username, in.Now.Add(-rl.Period)); rl.Holds(n) {
			return &RateHold{Policy: v.Policy, Approved: n, Max: rl.MaxApprovals, Period: rl.Period}
		}
		return nil
	}
	return nil
}

// evaluate runs the policies on the request, as Compiled.Evaluate does.
func evaluate(ctx context.Context, entries []csrpolicy.Entry, in Input) []csrpolicy.Verdict {
	c := &csrpolicy.Compiled{Gen: 1, Policies: entries}
	return c.Evaluate(ctx, csrpolicy.Input{CSR: in.CSR, Request: in.Request, Node: in.Node.Node})
}

// clauseFalse names the first false clause of the first policy that runs.
func (in Input) clauseFalse(ctx context.Context, covering []csrpolicy.Entry) Reason {
	var pr *csrpolicy.Program
	for _, e := range covering {
		if e.Program != nil {
			pr = e.Program
			break
		}
	}
	if pr == nil {
		return in.say(ClauseFalse, "", "no policy matches it")
	}
	if !in.Detail {
		return Reason{Code: ClauseFalse, Policy: pr.Name}
	}
	others := ""
	if n := len(covering) - 1; n > 0 {
		others = fmt.Sprintf(" (nor do %d other policies)", n)
	}
	fc, ok := pr.Explain(ctx, csrpolicy.Input{CSR: in.CSR, Request: in.Request, Node: in.Node.Node})
	if !ok {
		return in.say(ClauseFalse, pr.Name, "the policy %s does not match it%s", pr.Name, others)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "the policy %s does not match it%s: ", pr.Name, others)
	switch {
	case fc.Op == "":
		b.WriteString("its expression ")
	case fc.Op == "||":
		fmt.Fprintf(&b, "none of its %d alternatives holds, the first ", fc.Of)
	default:
		fmt.Fprintf(&b, "clause %d of %d ", fc.Index, fc.Of)
	}
	fmt.Fprintf(&b, "`%s` ", clip(fc.Text, maxClause))
	if fc.Err != nil {
		fmt.Fprintf(&b, "fails (%s)", clip(oneLine(fc.Err.Error()), 120))
	} else {
		b.WriteString("is false")
	}
	if len(fc.Values) > 0 {
		b.WriteString(" with ")
		for i, v := range fc.Values {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(v.Path + " = " + v.Text)
		}
	}
	return Reason{Code: ClauseFalse, Policy: pr.Name, Message: b.String()}
}

// maxClause bounds the clause quoted in a message.
const maxClause = 160

func (in Input) say(code Code, policy, format string, args ...any) Reason {
	r := Reason{Code: code, Policy: policy}
	if in.Detail {
		r.Message = fmt.Sprintf(format, args...)
	}
	return r
}

func verb(d csrpolicy.Decision) string {
	if d == csrpolicy.Deny {
		return "deny"
	}
	return "approve"
}

func policyNames(entries []csrpolicy.Entry) string {
	names := make([]string, 0, 3)
	for i, e := range entries {
		if i == 3 {
			names = append(names, fmt.Sprintf("%d more", len(entries)-3))
			break
		}
		names = append(names, e.Policy.Name)
	}
	return strings.Join(names, ", ")
}

func groupsWords(groups []string) string {
	if len(groups) == 0 {
		return ""
	}
	shown := groups[:min(len(groups), 3)]
	more := ""
	if len(groups) > 3 {
		more = fmt.Sprintf(", …%d more", len(groups)-3)
	}
	return " (groups " + strings.Join(shown, ", ") + more + ")"
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
