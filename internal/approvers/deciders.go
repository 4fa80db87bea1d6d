package approvers

import (
	"cmp"
	"slices"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"

	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// Decider is one client (a field manager: kube-controller-manager, kubectl,
// clusterdesk, an approver controller) that decided requests for a signer.
type Decider struct {
	Manager          string
	Approved, Denied int
	// Reasons are the decisions' condition reasons, most frequent first
	// (AutoApproved, KubectlApprove, ...): they say which controller or tool.
	Reasons []string
	Last    time.Time
}

// Deciders reads, from the requests for signer still in the cluster, which
// client wrote each decision: the newest managedFields entry of the approval
// subresource. The API server starts tracking managed fields only once an
// object has been applied (kubernetes#78738): a request created with a plain
// create, as kubelets and most tools create them, has none, so its decider is
// named by the condition's reason where a well-known client writes that
// reason (knownReasons), and "unknown" otherwise.
// The controller-manager deletes decided requests after an hour, so this is
// recent history only.
func Deciders(csrs []*certificatesv1.CertificateSigningRequest, signer string) []Decider {
	by := map[string]*Decider{}
	reasons := map[string]map[string]int{}
	for _, c := range csrs {
		if c.Spec.SignerName != signer {
			continue
		}
		decision, reason, at, ok := decided(c)
		if !ok {
			continue
		}
		manager, when := approvalManager(c)
		if manager == "" {
			manager = knownReasons[reason]
		}
		if manager == "" {
			manager = "unknown"
		}
		if !when.IsZero() {
			at = when
		}
		d := by[manager]
		if d == nil {
			d = &Decider{Manager: manager}
			by[manager] = d
			reasons[manager] = map[string]int{}
		}
		if decision == certificatesv1.CertificateApproved {
			d.Approved++
		} else {
			d.Denied++
		}
		if reason != "" {
			reasons[manager][reason]++
		}
		if at.After(d.Last) {
			d.Last = at
		}
	}
	out := make([]Decider, 0, len(by))
	for m, d := range by {
		for r := range reasons[m] {
			d.Reasons = append(d.Reasons, r)
		}
		slices.SortFunc(d.Reasons, func(a, b string) int {
			return cmp.Or(cmp.Compare(reasons[m][b], reasons[m][a]), cmp.Compare(a, b))
		})
		out = append(out, *d)
	}
	slices.SortFunc(out, func(a, b Decider) int {
		return cmp.Or(b.Last.Compare(a.Last), cmp.Compare(a.Manager, b.Manager))
	})
	return out
}

// knownReasons are the condition reasons well-known clients write, and the
// client: kube-controller-manager's CSR approver (kubernetes
// pkg/controller/certificates/approver/sarapprove.go), kubectl certificate
// approve/deny (staging/src/k8s.io/kubectl/pkg/cmd/certificates/
// certificates.go), this console (internal/kube's writer) and its approver
// (internal/approver, deciding for CSR approval policies).
var knownReasons = map[string]string{
	"AutoApproved":      "kube-controller-manager",
	"KubectlApprove":    "kubectl",
	"KubectlDeny":       "kubectl",
	kube.ReasonApproved: "clusterdesk",
	kube.ReasonDenied:   "clusterdesk",
	kube.ReasonPolicy:   "clusterdesk-approver",
}

// DecidedBy names the client that decided c: its approval managedFields
// entry, else the client a well-known reason names, else "unknown"; "" for a
// pending request.
func DecidedBy(c *certificatesv1.CertificateSigningRequest) string {
	_, reason, _, ok := decided(c)
	if !ok {
		return ""
	}
	if m, _ := approvalManager(c); m != "" {
		return m
	}
	if m := knownReasons[reason]; m != "" {
		return m
	}
	return "unknown"
}

// ByPolicyApprover reports whether `clusterdesk approver` made c's decision
// (its condition's reason, kube.ReasonPolicy): the agreement page compares a
// policy with people's decisions, never with its own.
func ByPolicyApprover(c *certificatesv1.CertificateSigningRequest) bool {
	_, reason, _, ok := decided(c)
	return ok && reason == kube.ReasonPolicy
}

// decided returns the request's decision (Approved or Denied, whichever
// condition is true), its reason and time.
func decided(c *certificatesv1.CertificateSigningRequest) (certificatesv1.RequestConditionType, string, time.Time, bool) {
	for _, cond := range c.Status.Conditions {
		if (cond.Type == certificatesv1.CertificateApproved || cond.Type == certificatesv1.CertificateDenied) &&
			cond.Status != "False" {
			return cond.Type, cond.Reason, cond.LastUpdateTime.Time, true
		}
	}
	return "", "", time.Time{}, false
}

// approvalManager is the newest managedFields entry written through the
// approval subresource: the client that decided.
func approvalManager(c *certificatesv1.CertificateSigningRequest) (string, time.Time) {
	manager, at := "", time.Time{}
	for _, mf := range c.ManagedFields {
		if mf.Subresource != "approval" {
			continue
		}
		var t time.Time
		if mf.Time != nil {
			t = mf.Time.Time
		}
		if manager == "" || t.After(at) {
			manager, at = mf.Manager, t
		}
	}
	return manager, at
}
