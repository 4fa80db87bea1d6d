package csrpolicy

import (
	"context"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
)

func TestCompareWithPastDecisions(t *testing.T) {
	pr := compile(t, Policy{Name: "p", Signers: []string{certificatesv1.KubeletServingSignerName}, Expression: kubeletServing, Decision: Approve, Reason: "R"})
	past := func(change func(*input), decision Decision) Past {
		i := good()
		if change != nil {
			change(&i)
		}
		return Past{Input: i.build(), Decision: decision}
	}
	client := past(nil, Deny)
	client.CSR.Spec.SignerName = certificatesv1.KubeAPIServerClientSignerName // another signer: not compared
	undecodable := past(nil, Approve)
	undecodable.Request = nil
	a := pr.Compare(context.Background(), []Past{
		past(nil, Approve), past(nil, Approve), // agreed
		past(nil, Deny), // a person denied what the policy approves
		past(func(i *input) { i.node = nil }, Deny), // the policy leaves it
		client, undecodable,
	})
	if a.Checked != 5 || a.Agreed != 2 || len(a.Disagreed) != 1 || a.Undecided != 1 || a.Errors != 1 {
		t.Errorf("%+v", a)
	}
	c := good().build().CSR
	if DecisionOf(c) != "" {
		t.Error("pending has a decision")
	}
	c.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue}}
	if DecisionOf(c) != Approve {
		t.Error("approved")
	}
	c.Status.Conditions = append(c.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{Type: certificatesv1.CertificateDenied, Status: corev1.ConditionTrue})
	if DecisionOf(c) != Deny {
		t.Error("both conditions: Denied wins, as in the queue")
	}
}
