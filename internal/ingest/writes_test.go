package ingest

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"

	"github.com/clusterdesk/clusterdesk/internal/ledger"
)

// auditEvent is a ResponseComplete event of a write as the API server
// sends it; req and resp are the request and response objects (JSON, ""
// for none).
func auditEvent(id, level, verb, resource, name string, code int32, req, resp string) auditv1.Event {
	ev := auditv1.Event{
		Level: auditv1.Level(level), AuditID: types.UID("audit-" + id), Stage: auditv1.StageResponseComplete, Verb: verb,
		RequestURI: "/api/v1/namespaces/team/" + resource, User: authnv1.UserInfo{Username: "alice", Groups: []string{"dev"}},
		ObjectRef:                &auditv1.ObjectReference{Resource: resource, Namespace: "team", Name: name, APIVersion: "v1"},
		ResponseStatus:           &metav1.Status{Code: code},
		RequestReceivedTimestamp: metav1.NewMicroTime(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)),
		Annotations:              map[string]string{"validation.policy.admission.k8s.io/validation_failure": "[]"},
	}
	if req != "" {
		ev.RequestObject = &runtime.Unknown{Raw: []byte(req)}
	}
	if resp != "" {
		ev.ResponseObject = &runtime.Unknown{Raw: []byte(resp)}
	}
	return ev
}

func TestRecordedWriteOfEachKindOfEvent(t *testing.T) {
	cm := `{"kind":"ConfigMap","metadata":{"name":"cm"},"data":{"k":"after"}}`
	sent := `{"kind":"ConfigMap","metadata":{"name":"cm"},"data":{"k":"sent"}}`
	status := `{"kind":"Status","code":403}`
	for _, tc := range []struct {
		name, level, verb string
		code              int32
		req, resp         string
		ok                bool
		op, object        string
	}{
		{"create", "RequestResponse", "create", 201, sent, cm, true, ledger.OpCreate, cm},
		{"patch: the response, never the patch", "RequestResponse", "patch", 200, `{"data":{"k":"after"}}`, cm, true, ledger.OpUpdate, cm},
		{"apply that created", "RequestResponse", "patch", 201, `{"data":{}}`, cm, true, ledger.OpCreate, cm},
		{"refused update: the object sent", "RequestResponse", "update", 403, sent, status, true, ledger.OpUpdate, sent},
		{"refused patch: unknown", "RequestResponse", "patch", 422, `{"data":{}}`, status, true, ledger.OpUpdate, ""},
		{"delete: none", "RequestResponse", "delete", 200, `{"kind":"DeleteOptions"}`, cm, true, ledger.OpDelete, ""},
		{"Metadata level (a Secret): not a recorded write", "Metadata", "create", 201, "", "", false, "", ""},
		{"deletecollection", "RequestResponse", "deletecollection", 200, "", "", false, "", ""},
		{"a read", "RequestResponse", "get", 200, "", cm, false, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := auditEvent("1", tc.level, tc.verb, "configmaps", "cm", tc.code, tc.req, tc.resp)
			ev.ResponseStatus.Message = "the API server's answer"
			w, ok := RecordedWrite(&ev, "id-1")
			if ok != tc.ok {
				t.Fatalf("recorded %v, want %v", ok, tc.ok)
			}
			if !ok {
				return
			}
			if w.Operation != tc.op || string(w.Object) != tc.object || w.ID != "id-1" || w.User != "alice" || w.Namespace != "team" ||
				w.Code != int(tc.code) || w.Annotations["validation.policy.admission.k8s.io/validation_failure"] != "[]" {
				t.Errorf("got %+v (object %s)", w, w.Object)
			}
			// A refusal keeps who refused; an accepted write has none.
			if (w.Refusal == "the API server's answer") != (tc.code >= 400) {
				t.Errorf("code %d: refusal %q", tc.code, w.Refusal)
			}
		})
	}
}

// TestReceiverRecordsWritesOnce: a batch's RequestResponse writes of any
// resource are recorded (the ConfigMap, not one of the console's kinds), a
// Secret's Metadata event is not, and a retried batch is recorded once.
func TestReceiverRecordsWritesOnce(t *testing.T) {
	st, err := ledger.Open(context.Background(), "sqlite:"+filepath.Join(t.TempDir(), "l.db"), ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ws := st.(ledger.WriteStore)
	rc, err := NewReceiver(Options{Store: st, Writes: ws, Senders: Senders{Token: testToken}})
	if err != nil {
		t.Fatal(err)
	}
	cm := `{"kind":"ConfigMap","metadata":{"name":"cm"},"data":{"k":"v1"}}`
	cm2 := `{"kind":"ConfigMap","metadata":{"name":"cm"},"data":{"k":"v2"}}`
	list := auditv1.EventList{Items: []auditv1.Event{
		auditEvent("1", "RequestResponse", "create", "configmaps", "cm", 201, cm, cm),
		auditEvent("2", "RequestResponse", "patch", "configmaps", "cm", 200, `{"data":{"k":"v2"}}`, cm2),
		auditEvent("3", "Metadata", "create", "secrets", "s", 201, "", ""),
	}}
	body, err := json.Marshal(list)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if w := post(rc, testToken, body); w.Code != http.StatusOK {
			t.Fatalf("post %d: %d %s", i, w.Code, w.Body)
		}
	}
	var got []ledger.Write
	if err := ws.ScanWrites(context.Background(), ledger.WriteQuery{}, func(w *ledger.Write) error {
		got = append(got, *w)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || rc.Counts().Writes != 2 {
		t.Fatalf("%d writes recorded (counted %d), want the ConfigMap's 2", len(got), rc.Counts().Writes)
	}
	if !strings.Contains(string(got[1].Object), `"v2"`) || !strings.Contains(string(got[1].OldObject), `"v1"`) {
		t.Errorf("the patch: object %s, before %s", got[1].Object, got[1].OldObject)
	}
}
