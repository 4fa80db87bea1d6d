package ingest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"

	"github.com/clusterdesk/clusterdesk/internal/csrpolicy"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/ledger"
)

// kindOf maps an API group and resource to the console's kind id: the kind
// registry (internal/kube) is the one list of the console's kinds.
var kindOf = func() map[[2]string]kube.KindID {
	m := map[[2]string]kube.KindID{}
	for _, k := range kube.AllKinds() {
		m[[2]string{k.Group, k.Resource}] = k.ID
	}
	return m
}()

// writeVerbs are the verbs the ledger records; the policy records nothing
// else for the console's kinds, but the webhook receives every event the
// policy keeps (other resources' writes at Metadata among them).
var writeVerbs = map[string]bool{"create": true, "update": true, "patch": true, "delete": true, "deletecollection": true}

// Entry maps one audit event, raw as received in its batch, to a ledger
// entry, or reports false when the ledger does not keep it: a stage before
// the response (only ResponseComplete and Panic carry the outcome), a read,
// or a resource that is not one of the console's kinds.
func Entry(ev *auditv1.Event, raw []byte) (ledger.Entry, bool) {
	if ev.Stage != auditv1.StageResponseComplete && ev.Stage != auditv1.StagePanic {
		return ledger.Entry{}, false
	}
	ref := ev.ObjectRef
	if ref == nil || !writeVerbs[ev.Verb] || ev.AuditID == "" {
		return ledger.Entry{}, false
	}
	kind, ok := kindOf[[2]string{ref.APIGroup, ref.Resource}]
	if !ok {
		return ledger.Entry{}, false
	}
	e := ledger.Entry{
		Source:      ledger.SourceAPIServer,
		ID:          eventID(raw),
		AuditID:     string(ev.AuditID),
		Time:        ev.RequestReceivedTimestamp.UTC(),
		User:        ev.User.Username,
		Groups:      ev.User.Groups,
		UserAgent:   ev.UserAgent,
		SourceIPs:   ev.SourceIPs,
		Verb:        ev.Verb,
		APIGroup:    ref.APIGroup,
		APIVersion:  ref.APIVersion,
		Resource:    ref.Resource,
		Subresource: ref.Subresource,
		Kind:        string(kind),
		Name:        ref.Name,
		UID:         string(ref.UID),
		DryRun:      dryRun(ev.RequestURI),
	}
	// The console in proxy mode (and kubectl --as) authenticates as itself
	// and impersonates the person: the person made the change.
	if imp := ev.ImpersonatedUser; imp != nil && imp.Username != "" {
		e.User, e.Groups, e.Impersonator = imp.Username, imp.Groups, ev.User.Username
	}
	e.Code, e.Result, e.Reason = outcome(ev)

	resp := decodeObject(ev.ResponseObject)
	req := decodeObject(ev.RequestObject)
	if e.UID == "" {
		e.UID = first(resp.Metadata.UID, resp.Details.UID, req.Metadata.UID)
	}
	e.Signer = first(resp.Spec.SignerName, req.Spec.SignerName)
	e.Action = action(ev.Verb, kind, ref.Subresource, resp, req)
	// A decision's reason is the decision's own: the issue step's object
	// (and any later write's) still carries the approval's condition, which
	// the issue did not give.
	if d, ok := resp.decision(); ok && e.Result == ledger.ResultOK && (e.Action == ledger.ActionApprove || e.Action == ledger.ActionDeny) {
		e.Reason = d.words()
		e.Policy = policyOf(d.Message, e.DryRun)
	}
	// The object as the write left it; a Status (a delete's or a refusal's
	// answer) is no object.
	if ro := ev.ResponseObject; ro != nil && len(ro.Raw) > 0 && resp.Kind != "Status" {
		if len(ro.Raw) > ledger.MaxObjectBytes {
			e.ObjectDropped = true
		} else {
			e.Object = ro.Raw
		}
		// The version the write left: the watch observes the same one, and
		// an object's history tells it once (ledger.Query.OnePerVersion).
		if e.Result == ledger.ResultOK && !e.DryRun {
			e.RV = resp.Metadata.ResourceVersion
		}
	}
	return e, true
}

// eventID is an API server entry's identity: the SHA-256 of the event as
// received. Not its auditID: the API server takes a client's Audit-ID header
// as the audit ID, as is (WithAuditInit in
// k8s.io/apiserver/pkg/endpoints/filters/audit_init.go), so a client that
// reused an earlier event's audit ID would have its write counted a
// duplicate and never stored. The API server sends a retried batch as the
// same bytes (the webhook encodes the same events again, in
// k8s.io/apiserver/plugin/pkg/audit/webhook/webhook.go), which is stored
// once; a different event is different bytes (its own timestamps, in
// microseconds, and request), stored whatever its audit ID.
func eventID(raw []byte) string {
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

// outcome is the response's code, the ledger's result and, for a refusal,
// the API server's message.
func outcome(ev *auditv1.Event) (code int, result, reason string) {
	st := ev.ResponseStatus
	switch {
	case st != nil:
		code = int(st.Code)
	case ev.Stage == auditv1.StagePanic:
		code = 500
	}
	switch {
	case code >= 200 && code < 300:
		return code, ledger.ResultOK, ""
	case code == 401 || code == 403:
		result = ledger.ResultDenied
	default:
		result = ledger.ResultFailed
	}
	if st != nil {
		reason = st.Message
	}
	return code, result, reason
}

// action words the request for an auditor: a CSR's approval update that
// leaves an Approved (Denied) condition is approve (deny), its status update
// that sets the certificate is issue.
func action(verb string, kind kube.KindID, sub string, resp, req object) string {
	switch verb {
	case "create":
		return ledger.ActionCreate
	case "delete", "deletecollection":
		return ledger.ActionDelete
	}
	switch {
	case kind == kube.CSRs && sub == "approval":
		// A refused decision has a Status for an answer: what was asked
		// is in the request.
		d, ok := resp.decision()
		if !ok {
			d, ok = req.decision()
		}
		if ok && d.Type == "Approved" {
			return ledger.ActionApprove
		}
		if ok && d.Type == "Denied" {
			return ledger.ActionDeny
		}
		return ledger.ActionUpdate
	case kind == kube.CSRs && sub == "status" && (resp.Status.Certificate != "" || req.Status.Certificate != ""):
		return ledger.ActionIssue
	case sub == "status":
		return ledger.ActionStatus
	}
	return ledger.ActionUpdate
}

// dryRun tells whether the request asked for a dry run (?dryRun=All): the
// audit event has no field of its own for it.
func dryRun(requestURI string) bool {
	i := strings.IndexByte(requestURI, '?')
	if i < 0 {
		return false
	}
	q, err := url.ParseQuery(requestURI[i+1:])
	return err == nil && len(q["dryRun"]) > 0
}

func first(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// object is what the ledger reads of a request or response object: the
// object's identity, a CSR's signer, decision and certificate, a Status's
// details. Other fields are skipped by the decoder.
type object struct {
	Kind     string `json:"kind"`
	Metadata struct {
		UID             string `json:"uid"`
		ResourceVersion string `json:"resourceVersion"`
	} `json:"metadata"`
	Spec struct {
		SignerName string `json:"signerName"`
	} `json:"spec"`
	Status struct {
		Conditions  []condition `json:"conditions"`
		Certificate string      `json:"certificate"`
	} `json:"status"`
	Details struct {
		UID string `json:"uid"`
	} `json:"details"`
}

type condition struct {
	Type    string `json:"type"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// decodeObject reads what the ledger needs of an event's object; an object
// it cannot read leaves the fields empty (the entry keeps its metadata).
func decodeObject(u *runtime.Unknown) object {
	var o object
	if u != nil && len(u.Raw) > 0 {
		_ = json.Unmarshal(u.Raw, &o)
	}
	return o
}

// decision is the CSR's last Approved or Denied condition: the decision a
// write made (kubectl and the console append it; the API server allows one).
func (o object) decision() (condition, bool) {
	for i := len(o.Status.Conditions) - 1; i >= 0; i-- {
		if c := o.Status.Conditions[i]; c.Type == "Approved" || c.Type == "Denied" {
			return c, true
		}
	}
	return condition{}, false
}

// words is a decision's reason and message as Entry.Reason keeps them.
func (c condition) words() string {
	switch {
	case c.Message == "":
		return c.Reason
	case c.Reason == "":
		return c.Message
	}
	return c.Reason + ": " + c.Message
}

// policyOf is the CSR approval policy version an accepted decision's message
// names (csrpolicy.VersionText: clusterdesk approver's conditions, a
// person's "approve everything policy X approves"), for the policy's page
// (issue 47, item 4); none for a dry run, which decided nothing.
func policyOf(message string, dryRun bool) ledger.PolicyRef {
	v, ok := csrpolicy.ParseVersion(message)
	if !ok || dryRun {
		return ledger.PolicyRef{}
	}
	return ledger.PolicyRef{Name: v.Policy, Generation: v.Generation, Hash: v.Hash}
}
