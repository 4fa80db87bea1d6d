package ingest

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"

	"github.com/clusterdesk/clusterdesk/internal/ledger"
)

// readEvents reads testdata/devcluster-events.json: real events the
// devcluster's kube-apiserver sent to its audit webhook (kubectl create,
// certificate approve as admin, deny as approver, the controller manager's
// issue, kubectl --as, a server dry run, a CRD at Metadata, a forbidden
// delete) and a Lease update, which is not one of the console's kinds.
func readEvents(t testing.TB) *auditv1.EventList {
	t.Helper()
	raw, err := os.ReadFile("testdata/devcluster-events.json")
	if err != nil {
		t.Fatal(err)
	}
	var list auditv1.EventList
	if err := json.Unmarshal(raw, &list); err != nil {
		t.Fatal(err)
	}
	return &list
}

func TestEntryMapsTheDevclusterEvents(t *testing.T) {
	list := readEvents(t)
	type want struct {
		action, kind, name, user, impersonator, signer, result, reasonHas string
		code                                                              int
		dryRun, object                                                    bool
	}
	const client = "kubernetes.io/kube-apiserver-client"
	wants := map[string]want{
		"6d3e2330-10a4-45b5-97ad-0746d559ada0": {ledger.ActionCreate, "csrs", "ledger-approved", "admin", "", client, "ok", "", 201, false, true},
		"67909912-5bdd-48ca-969d-86f406e4a160": {ledger.ActionCreate, "csrs", "ledger-denied", "admin", "", client, "ok", "", 201, false, true},
		"50660f61-79bc-4144-a25b-5f8e9a65a73a": {ledger.ActionApprove, "csrs", "ledger-approved", "admin", "", client, "ok", "KubectlApprove: This CSR was approved by kubectl certificate approve.", 200, false, true},
		"ff586c1b-7b61-48cb-86a3-83d9c02ca82b": {ledger.ActionIssue, "csrs", "ledger-approved", "system:serviceaccount:kube-system:certificate-controller", "", client, "ok", "", 200, false, true},
		"dc9fb6d5-1ab9-48f9-8c8d-8b9b1f95f715": {ledger.ActionDeny, "csrs", "ledger-denied", "approver", "", client, "ok", "KubectlDeny", 200, false, true},
		"e0415670-6aaa-4bd9-9f39-b4ae0a5c09c0": {ledger.ActionCreate, "csidrivers", "ledger.example.com", "bob", "admin", "", "ok", "", 201, false, true},
		"81863854-a775-4878-be9e-73aba68da784": {ledger.ActionDelete, "csidrivers", "ledger.example.com", "admin", "", "", "ok", "", 200, false, true},
		"0bde1d49-354a-4061-b9ab-f55bb846c31b": {ledger.ActionDelete, "csrs", "ledger-denied", "admin", "", "", "ok", "", 200, false, false},
		"29437abb-7d11-4586-b09f-e661d802b2af": {ledger.ActionCreate, "csidrivers", "dry.example.com", "admin", "", "", "ok", "", 201, true, true},
		"d10a6b12-31c1-403d-8c41-34c347c969ea": {ledger.ActionCreate, "crds", "widgets.ledger.example.com", "admin", "", "", "ok", "", 201, false, false},
		"ae76fd1e-f74d-4977-bc5e-5c6cd4a229aa": {ledger.ActionStatus, "crds", "widgets.ledger.example.com", "system:apiserver", "", "", "ok", "", 200, false, false},
		"7d65c200-7998-4527-95a5-fe1c6e76205e": {ledger.ActionDelete, "crds", "widgets.ledger.example.com", "admin", "", "", "ok", "", 200, false, false},
		"9bb1ce69-66f9-4336-8919-73e11ee99b4a": {ledger.ActionDelete, "csrs", "ledger-approved", "auditor", "", "", "denied", "cannot delete resource", 403, false, false},
	}
	seen := 0
	for i := range list.Items {
		ev := &list.Items[i]
		e, ok := Entry(ev, mustJSON(t, ev))
		w, wanted := wants[string(ev.AuditID)]
		if ok != wanted {
			t.Errorf("%s %s/%s: kept %v, want %v", ev.Verb, ev.ObjectRef.Resource, ev.ObjectRef.Name, ok, wanted)
			continue
		}
		if !ok {
			continue
		}
		seen++
		got := want{e.Action, e.Kind, e.Name, e.User, e.Impersonator, e.Signer, e.Result, "", e.Code, e.DryRun, e.Object != nil}
		w2 := w
		w2.reasonHas = ""
		if got != w2 || !strings.Contains(e.Reason, w.reasonHas) {
			t.Errorf("%s: got %+v reason %q, want %+v", ev.AuditID, got, e.Reason, w)
		}
		// Only a decision or a refusal has a reason: the issue step's object
		// still carries the approval's condition, which is not the issue's.
		if w.reasonHas == "" && e.Reason != "" {
			t.Errorf("%s (%s): reason %q, want none", ev.AuditID, e.Action, e.Reason)
		}
		if e.Source != ledger.SourceAPIServer || e.AuditID != string(ev.AuditID) || e.ID != eventID(mustJSON(t, ev)) || e.Time.IsZero() || e.Time.Location().String() != "UTC" {
			t.Errorf("%s: source %q id %q time %v", ev.AuditID, e.Source, e.ID, e.Time)
		}
		if e.Kind == "csrs" && e.Result == ledger.ResultOK && e.UID == "" {
			t.Errorf("%s: no UID", ev.AuditID)
		}
		if e.Object != nil && !json.Valid(e.Object) {
			t.Errorf("%s: object is no JSON", ev.AuditID)
		}
	}
	if seen != len(wants) {
		t.Errorf("mapped %d events, want %d", seen, len(wants))
	}
}

// Only the stages that carry the outcome are kept, and an object larger
// than the ledger keeps is dropped whole, never cut.
func TestEntryStagesAndLargeObjects(t *testing.T) {
	list := readEvents(t)
	var create auditv1.Event
	for _, ev := range list.Items {
		if ev.AuditID == "6d3e2330-10a4-45b5-97ad-0746d559ada0" {
			create = ev
		}
	}
	received := create
	received.Stage = auditv1.StageRequestReceived
	if _, ok := Entry(&received, mustJSON(t, received)); ok {
		t.Error("a RequestReceived event is kept")
	}
	panicked := create
	panicked.Stage, panicked.ResponseStatus, panicked.ResponseObject = auditv1.StagePanic, nil, nil
	if e, ok := Entry(&panicked, mustJSON(t, panicked)); !ok || e.Code != 500 || e.Result != ledger.ResultFailed {
		t.Errorf("a Panic event: kept %v, code %d result %q", ok, e.Code, e.Result)
	}
	big := create
	obj := *create.ResponseObject
	obj.Raw = []byte(`{"kind":"CertificateSigningRequest","metadata":{"annotations":{"a":"` + strings.Repeat("x", ledger.MaxObjectBytes) + `"}}}`)
	big.ResponseObject = &obj
	if e, ok := Entry(&big, mustJSON(t, big)); !ok || e.Object != nil || !e.ObjectDropped {
		t.Errorf("a large object: kept %v, object %d bytes, dropped %v", ok, len(e.Object), e.ObjectDropped)
	}
}
