package ingest

import (
	"net/http"

	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"

	"github.com/clusterdesk/clusterdesk/internal/ledger"
)

// RecordedWrite maps one audit event to a recorded write (issue 45), or
// reports false when it is not one: a write (create, update, patch, delete)
// of any resource that the policy reports at RequestResponse, at
// ResponseComplete or Panic. deletecollection is left out: its one event
// stands for many objects, which admission saw one by one, and names none
// of them. Secrets are at Metadata in the shipped policy, so neither their
// objects nor their writes are recorded; an event at Metadata carries no
// object even if a policy put another resource there.
//
// id is the event's ledger identity (eventID).
func RecordedWrite(ev *auditv1.Event, id string) (ledger.Write, bool) {
	if ev.Level != auditv1.LevelRequestResponse || (ev.Stage != auditv1.StageResponseComplete && ev.Stage != auditv1.StagePanic) {
		return ledger.Write{}, false
	}
	ref := ev.ObjectRef
	if ref == nil || ev.AuditID == "" || ref.Resource == "" {
		return ledger.Write{}, false
	}
	code, _, message := outcome(ev)
	w := ledger.Write{
		ID: id, AuditID: string(ev.AuditID), Time: ev.RequestReceivedTimestamp.UTC(),
		User: ev.User.Username, UserUID: ev.User.UID, Groups: ev.User.Groups,
		Verb: ev.Verb, APIGroup: ref.APIGroup, APIVersion: ref.APIVersion, Resource: ref.Resource,
		Subresource: ref.Subresource, Namespace: ref.Namespace, Name: ref.Name,
		Code: code, DryRun: dryRun(ev.RequestURI), Annotations: ev.Annotations,
	}
	if code >= 400 {
		// Who refused it (a policy, a webhook, the object's validation):
		// the replay tells a write admission never saw by it.
		w.Refusal = message
	}
	if imp := ev.ImpersonatedUser; imp != nil && imp.Username != "" {
		w.User, w.UserUID, w.Groups = imp.Username, imp.UID, imp.Groups
	}
	resp := decodeObject(ev.ResponseObject)
	switch ev.Verb {
	case "create":
		w.Operation = ledger.OpCreate
	case "update", "patch":
		// An update or an apply patch that made the object was a CREATE to
		// admission; the API server answers it 201.
		w.Operation = ledger.OpUpdate
		if code == http.StatusCreated {
			w.Operation = ledger.OpCreate
		}
	case "delete":
		w.Operation = ledger.OpDelete
	default:
		return ledger.Write{}, false
	}
	switch {
	case w.Operation == ledger.OpDelete:
		// Admission sees no object for a delete, only the one before it.
	case ev.ResponseObject != nil && len(ev.ResponseObject.Raw) > 0 && resp.Kind != "Status":
		// The object as the write left it: what admission saw, with the
		// fields the API server set after it (resourceVersion, managed
		// fields), which no policy is expected to judge.
		w.Object = ev.ResponseObject.Raw
	case ev.Verb != "patch" && ev.RequestObject != nil && len(ev.RequestObject.Raw) > 0:
		// A refused create or update: the object sent is what was judged.
		// A refused patch's request is the patch, not an object: unknown.
		w.Object = ev.RequestObject.Raw
	}
	if len(w.Object) > ledger.MaxObjectBytes {
		w.Object, w.ObjectDropped = nil, true
	}
	return w, true
}
