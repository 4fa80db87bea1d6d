package ingest

import (
	"encoding/json"
	"testing"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"

	"github.com/clusterdesk/clusterdesk/internal/audit"
	"github.com/clusterdesk/clusterdesk/internal/csrpolicy"
	"github.com/clusterdesk/clusterdesk/internal/ledger"
)

// approvalEvent is the API server's event of an approval subresource update
// whose object's decision has message msg, with the response code and URI.
func approvalEvent(msg string, code int32, uri string) *auditv1.Event {
	obj := `{"kind":"CertificateSigningRequest","metadata":{"uid":"u-1","resourceVersion":"7"},"spec":{"signerName":"kubernetes.io/kubelet-serving"},` +
		`"status":{"conditions":[{"type":"Approved","reason":"ClusterdeskPolicy","message":` + quote(msg) + `}]}}`
	return &auditv1.Event{
		Stage: auditv1.StageResponseComplete, AuditID: "a-1", Verb: "update", RequestURI: uri,
		User:                     authnUser("system:serviceaccount:clusterdesk:clusterdesk-approver"),
		ObjectRef:                &auditv1.ObjectReference{APIGroup: "certificates.k8s.io", APIVersion: "v1", Resource: "certificatesigningrequests", Subresource: "approval", Name: "csr-1"},
		ResponseStatus:           &metav1.Status{Code: code},
		ResponseObject:           &runtime.Unknown{Raw: []byte(obj)},
		RequestObject:            &runtime.Unknown{Raw: []byte(obj)},
		RequestReceivedTimestamp: metav1.NewMicroTime(t0),
	}
}

// An accepted decision naming a policy's version keeps it; a dry run, a
// refused write and a person's message without one keep none.
func TestEntryKeepsTheDecidingPolicysVersion(t *testing.T) {
	v := csrpolicy.Version{Policy: "kubelet-serving", Generation: 3, Hash: csrpolicy.ExpressionHash("true")}
	want := ledger.PolicyRef{Name: v.Policy, Generation: 3, Hash: v.Hash}
	msg := csrpolicy.DecisionMessage(v, csrpolicy.Approve, "the node's own addresses")
	ev := approvalEvent(msg, 200, "/apis/certificates.k8s.io/v1/certificatesigningrequests/csr-1/approval")
	e, ok := Entry(ev, mustJSON(t, ev))
	if !ok || e.Action != ledger.ActionApprove || e.Policy != want || e.Reason != "ClusterdeskPolicy: "+msg {
		t.Fatalf("entry %v: action %q policy %+v reason %q", ok, e.Action, e.Policy, e.Reason)
	}
	for name, ev := range map[string]*auditv1.Event{
		"dry run": approvalEvent(msg, 200, "/apis/certificates.k8s.io/v1/certificatesigningrequests/csr-1/approval?dryRun=All"),
		"refused": approvalEvent(msg, 403, "/apis/certificates.k8s.io/v1/certificatesigningrequests/csr-1/approval"),
		"person":  approvalEvent("Approved by alice via kubectl", 200, "/apis/certificates.k8s.io/v1/certificatesigningrequests/csr-1/approval"),
	} {
		if e, ok := Entry(ev, mustJSON(t, ev)); !ok || e.Policy != (ledger.PolicyRef{}) {
			t.Errorf("%s: kept %v, policy %+v", name, ok, e.Policy)
		}
	}
	// The console's record of a person following the policy.
	rec := audit.Record{ID: "r-1", Time: t0, User: "alice", Verb: "approve", APIVersion: "certificates.k8s.io/v1", APIGroup: "certificates.k8s.io",
		Resource: "certificatesigningrequests", Name: "csr-1", UID: "u-1", Result: audit.ResultOK,
		Reason: "following " + csrpolicy.VersionText(v) + " (shadow)"}
	if e, ok := ConsoleEntry(rec); !ok || e.Policy != want {
		t.Errorf("console record: %v %+v", ok, e.Policy)
	}
	rec.DryRun = true
	if e, _ := ConsoleEntry(rec); e.Policy != (ledger.PolicyRef{}) {
		t.Errorf("a dry run's record keeps %+v", e.Policy)
	}
}

var t0 = time.Date(2026, 12, 7, 4, 0, 0, 0, time.UTC)

func authnUser(name string) authnv1.UserInfo { return authnv1.UserInfo{Username: name} }

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
