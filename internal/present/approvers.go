package present

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/clusterdesk/clusterdesk/internal/approvers"
	"github.com/clusterdesk/clusterdesk/internal/csrqueue"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// ApproversPage presents who may approve signer's requests. answer is nil
// when the RBAC walk could not be made (unreadable says why); csrs are the
// cache's requests, read for the deciders and the pending count.
func ApproversPage(signer string, answer *approvers.Answer, unreadable string, csrs []*certificatesv1.CertificateSigningRequest, now time.Time) model.ApproversPage {
	p := model.ApproversPage{Signer: signer, Unreadable: unreadable}
	if answer != nil {
		p.Nobody = answer.Nobody()
		p.OnlyAdmins = !p.Nobody && !answer.Specific()
		for _, h := range answer.Approvers {
			p.Approvers = append(p.Approvers, approverRow(h))
		}
		for _, h := range answer.Partial {
			p.Partial = append(p.Partial, approverRow(h))
		}
		p.Guard = approvers.GuardPolicy
		for _, w := range answer.PolicyWriters {
			p.PolicyWriters = append(p.PolicyWriters, model.PolicyWriterRow{Kind: w.Subject.Kind, Name: approvers.Name(w.Subject),
				Verbs: strings.Join(w.Verbs, ", "), Via: strings.Join(w.Via, ", "), Guarded: w.Guarded, Superusers: w.Superusers})
		}
	}
	for _, d := range approvers.Deciders(csrs, signer) {
		reasons := strings.Join(d.Reasons, ", ")
		last, _, _ := age(metav1.NewTime(d.Last), now)
		p.Deciders = append(p.Deciders, model.DeciderRow{Manager: d.Manager, Approved: d.Approved, Denied: d.Denied, Reasons: reasons, Last: last + " ago"})
	}
	for _, c := range csrs {
		if c.Spec.SignerName == signer && csrqueue.State(c) == csrqueue.Pending {
			p.Pending++
		}
	}
	p.PendingHref = csrqueue.Query{State: csrqueue.Pending, Signer: signer}.Href(urls.CSRs)
	return p
}

func approverRow(h approvers.Holder) model.ApproverRow {
	r := model.ApproverRow{Kind: h.Subject.Kind, Name: approvers.Name(h.Subject),
		Superusers: h.Superusers(), Broad: h.Broad}
	via := append(append([]string{}, h.Approve...), h.Update...)
	r.Via = strings.Join(uniq(via), ", ")
	switch {
	case h.Can():
	case len(h.Approve) > 0:
		r.Holds = fmt.Sprintf("approve on the signer (%s), not update on certificatesigningrequests/approval", strings.Join(h.Approve, ", "))
	default:
		r.Holds = fmt.Sprintf("update on certificatesigningrequests/approval (%s), not approve on the signer", strings.Join(h.Update, ", "))
	}
	return r
}

func uniq(in []string) []string {
	seen := map[string]bool{}
	out := in[:0]
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// ApproversOverview presents every signer the cluster's requests name, most
// pending first, with who may approve each. who is nil when the RBAC walk
// could not be made (unreadable says why).
func ApproversOverview(csrs []*certificatesv1.CertificateSigningRequest, who func(signer string) approvers.Answer, unreadable string) model.ApproversOverview {
	p := model.ApproversOverview{Unreadable: unreadable}
	pending := map[string]int{}
	for _, c := range csrs {
		n := pending[c.Spec.SignerName]
		if csrqueue.State(c) == csrqueue.Pending {
			n++
		}
		pending[c.Spec.SignerName] = n
	}
	for signer, n := range pending {
		row := model.SignerApprovers{Signer: signer, Href: urls.CSRApprovers(signer), Pending: n}
		if who != nil {
			a := who(signer)
			row.Nobody = a.Nobody()
			for _, h := range a.Approvers {
				switch {
				case !h.Broad:
					row.Approvers++
				case !h.Superusers():
					row.Admins++
				}
			}
		}
		p.Signers = append(p.Signers, row)
	}
	slices.SortFunc(p.Signers, func(a, b model.SignerApprovers) int {
		return cmp.Or(cmp.Compare(b.Pending, a.Pending), cmp.Compare(a.Signer, b.Signer))
	})
	return p
}
