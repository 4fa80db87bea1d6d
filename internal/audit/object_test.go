package audit

import (
	"context"
	"strings"
	"testing"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/validation"
)

func TestEventObject(t *testing.T) {
	at := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		object   string
		wantName string
	}{
		{"csr-abc", "csr-abc."},
		{"node-csr-Upper:Case", "node-csr-upper-case."},
		{strings.Repeat("a", 253), strings.Repeat("a", 253-len(".")-len("187a1c5a3c6e0000"))},
	} {
		ev := Event{Namespace: "default", Type: "Normal", Reason: "ClusterdeskApprove", Action: "Approve",
			Note: "n", Time: at, Regarding: Ref{APIVersion: "certificates.k8s.io/v1", Kind: "CertificateSigningRequest", Name: tc.object, UID: "u"}}.Object()
		if !strings.HasPrefix(ev.Name, tc.wantName) || len(ev.Name) > 253 {
			t.Errorf("%q: event name %q", tc.object, ev.Name)
		}
		if errs := validation.NameIsDNSSubdomain(ev.Name, false); len(errs) > 0 {
			t.Errorf("%q: event name %q is invalid: %v", tc.object, ev.Name, errs)
		}
		if ev.Regarding.Name != tc.object || !ev.EventTime.Time.Equal(at) || ev.Namespace != "default" || string(ev.Regarding.UID) != "u" {
			t.Errorf("%q: event %+v", tc.object, ev)
		}
	}
}

type createdEvents struct{ got []*eventsv1.Event }

func (c *createdEvents) CreateEvent(_ context.Context, ev *eventsv1.Event) error {
	c.got = append(c.got, ev)
	return nil
}

func TestKubeEventsCreatesTheObject(t *testing.T) {
	c := &createdEvents{}
	ev := Event{Namespace: "default", Type: "Warning", Reason: "ClusterdeskApproveDenied", Note: "n", Regarding: Ref{Kind: "CertificateSigningRequest", Name: "csr-a"}}
	if err := KubeEvents(c).WriteEvent(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	if len(c.got) != 1 || c.got[0].Type != "Warning" || c.got[0].Reason != ev.Reason || c.got[0].Regarding.Name != "csr-a" || c.got[0].Namespace != "default" {
		t.Errorf("created %+v", c.got)
	}
}
