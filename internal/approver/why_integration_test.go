//go:build integration

package approver

import (
	"strings"
	"testing"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/csrwhy"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// TestApproverSaysWhyPending: on the devcluster, requests the approver
// leaves pending for each reason it can meet there (a false clause, two
// policies disagreeing, a signer the API server refuses it) are counted by
// clusterdesk_approver_pending_by_reason and logged once each, with the
// reason and its line, however often they are evaluated again.
func TestApproverSaysWhyPending(t *testing.T) {
	s := stamp()
	label := "why-" + s
	const notGranted = "approver-test.clusterdesk.io/not-granted"
	signer := "approver-test.clusterdesk.io/why-" + s
	policy(t, label, "why-approve-"+s, signer, "Approve", `request.subject.commonName.startsWith('why-ok-') && request.keyBits > 0`)
	policy(t, label, "why-deny-"+s, signer, "Deny", `request.subject.commonName == 'why-ok-both-`+s+`'`)
	policy(t, label, "why-refused-"+s, notGranted, "Approve", `request.subject.commonName == 'why-refused-`+s+`'`)
	clause := testcluster.CreateCSR(t, testcluster.CSR{Signer: signer, CommonName: "why-nope-" + s})
	conflict := testcluster.CreateCSR(t, testcluster.CSR{Signer: signer, CommonName: "why-ok-both-" + s})
	refused := testcluster.CreateCSR(t, testcluster.CSR{Signer: notGranted, CommonName: "why-refused-" + s})

	r := start(t, Config{Rest: approverConfig(t, "approver-w-"+s), PolicySelector: "approver-test=" + label}, nil)
	line := func(name string, code csrwhy.Code) string {
		for _, l := range strings.Split(r.log.String(), "\n") {
			if strings.Contains(l, "csr="+name) && strings.Contains(l, "reason="+string(code)) {
				return l
			}
		}
		return ""
	}
	eventually(t, 30*time.Second, "the three reasons are logged", func() bool {
		return line(clause, csrwhy.ClauseFalse) != "" && line(conflict, csrwhy.Conflict) != "" && line(refused, csrwhy.Forbidden) != ""
	})
	for _, code := range []csrwhy.Code{csrwhy.ClauseFalse, csrwhy.Conflict, csrwhy.Forbidden} {
		if n := r.metric(t, "clusterdesk_approver_pending_by_reason", "reason="+string(code)); n < 1 {
			t.Errorf("pending_by_reason{reason=%s} = %v, want at least 1", code, n)
		}
	}
	if l := line(clause, csrwhy.ClauseFalse); !strings.Contains(l, "clause 1 of 2") || !strings.Contains(l, "why-nope-"+s) {
		t.Errorf("the ClauseFalse line does not name the clause and the value: %s", l)
	}
	if l := line(refused, csrwhy.Forbidden); !strings.Contains(l, notGranted) {
		t.Errorf("the Forbidden line does not name the signer: %s", l)
	}
	// Evaluated again (a policy change): logged once per request and change.
	policy(t, label, "why-unrelated-"+s, "approver-test.clusterdesk.io/unrelated-"+s, "Approve", "false")
	time.Sleep(3 * time.Second)
	if n := strings.Count(r.log.String(), "csr="+clause+" reason="); n != 1 {
		t.Errorf("the request's reason was logged %d times, want once:\n%s", n, r.log.String())
	}
}
