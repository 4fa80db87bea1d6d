package ingest

import (
	"net/http"
	"testing"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
	"k8s.io/apiserver/pkg/authentication/user"

	"github.com/clusterdesk/clusterdesk/internal/ledger"
)

// capturedEvent is the devcluster's event of that audit ID (testdata).
func capturedEvent(t *testing.T, auditID string) auditv1.Event {
	t.Helper()
	for _, ev := range readEvents(t).Items {
		if string(ev.AuditID) == auditID {
			return ev
		}
	}
	t.Fatalf("no event %s in testdata", auditID)
	return auditv1.Event{}
}

func eventList(t *testing.T, events ...auditv1.Event) []byte {
	t.Helper()
	return mustJSON(t, auditv1.EventList{TypeMeta: metav1.TypeMeta{Kind: "EventList", APIVersion: "audit.k8s.io/v1"}, Items: events})
}

// A client chooses its request's audit ID (the Audit-ID header): a write
// sent with an earlier event's audit ID is another entry, stored beside it,
// both with that audit ID to show; the same event sent again (a retried
// batch) is still stored once.
func TestReceiverKeepsAWriteThatReusesAnAuditID(t *testing.T) {
	store := newMemStore()
	rc := newTestReceiver(t, store, 0, 0)
	const approvalID = "50660f61-79bc-4144-a25b-5f8e9a65a73a"
	approval := capturedEvent(t, approvalID)
	forged := approval
	forged.User.Username = "mallory"
	forged.RequestReceivedTimestamp = metav1.NewMicroTime(approval.RequestReceivedTimestamp.Add(time.Minute))
	for i, body := range [][]byte{eventList(t, approval), eventList(t, forged), eventList(t, approval, forged)} {
		if w := post(rc, testToken, body); w.Code != http.StatusOK {
			t.Fatalf("post %d: %d", i, w.Code)
		}
	}
	got := store.all()
	if len(got) != 2 || got[0].User != "admin" || got[1].User != "mallory" || got[0].AuditID != approvalID || got[1].AuditID != approvalID || got[0].ID == got[1].ID {
		var who []string
		for _, e := range got {
			who = append(who, e.User+"@"+e.AuditID)
		}
		t.Errorf("stored %v; want the approval and mallory's write, both with audit ID %s", who, approvalID)
	}
	if c := rc.Counts(); c.Stored != 2 || c.Duplicate != 2 {
		t.Errorf("counts %+v, want 2 stored, 2 duplicates", c)
	}
}

// The refused writes of clients that did not authenticate are counted, not
// stored; an authenticated user's refusal, and an anonymous write the API
// server allowed, are stored.
func TestReceiverCountsAnonymousRefusals(t *testing.T) {
	store := newMemStore()
	rc := newTestReceiver(t, store, 0, 0)
	refused := capturedEvent(t, "9bb1ce69-66f9-4336-8919-73e11ee99b4a") // auditor's forbidden delete
	anonymous := refused
	anonymous.AuditID, anonymous.User = "anonymous", authnInfo(user.Anonymous, user.AllUnauthenticated)
	unauthenticatedGroup := refused
	unauthenticatedGroup.AuditID, unauthenticatedGroup.User = "group", authnInfo("someone", user.AllUnauthenticated)
	failedAuthn := refused // a failed authentication's event has no user
	failedAuthn.AuditID, failedAuthn.User = "no-user", authnInfo("")
	failedAuthn.ResponseStatus = &metav1.Status{Code: 401, Message: "Authentication failed"}
	allowed := capturedEvent(t, "6d3e2330-10a4-45b5-97ad-0746d559ada0")
	allowed.User = authnInfo(user.Anonymous, user.AllUnauthenticated)
	if w := post(rc, testToken, eventList(t, refused, anonymous, unauthenticatedGroup, failedAuthn, allowed)); w.Code != http.StatusOK {
		t.Fatalf("post: %d", w.Code)
	}
	var users []string
	for _, e := range store.all() {
		users = append(users, e.User+"/"+e.Result)
	}
	if len(users) != 2 || users[0] != "auditor/"+ledger.ResultDenied || users[1] != user.Anonymous+"/"+ledger.ResultOK {
		t.Errorf("stored %v, want the auditor's refusal and the allowed anonymous write", users)
	}
	if c := rc.Counts(); c.AnonymousRefused != 3 || c.Stored != 2 || c.Ignored != 0 || rc.AnonymousRefused() != 3 {
		t.Errorf("counts %+v, want 3 anonymous refusals counted", c)
	}
}

func authnInfo(name string, groups ...string) authnv1.UserInfo {
	return authnv1.UserInfo{Username: name, Groups: groups}
}
