package kube

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/validation"

	"github.com/clusterdesk/clusterdesk/internal/audit"
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
		ev := eventObject(audit.Event{Namespace: "default", Type: "Normal", Reason: "ClusterdeskApprove", Action: "Approve",
			Note: "n", Time: at, Regarding: audit.Ref{APIVersion: "certificates.k8s.io/v1", Kind: "CertificateSigningRequest", Name: tc.object, UID: "u"}}, "host")
		if !strings.HasPrefix(ev.Name, tc.wantName) || len(ev.Name) > 253 {
			t.Errorf("%q: event name %q", tc.object, ev.Name)
		}
		if errs := validation.NameIsDNSSubdomain(ev.Name, false); len(errs) > 0 {
			t.Errorf("%q: event name %q is invalid: %v", tc.object, ev.Name, errs)
		}
		if ev.Regarding.Name != tc.object || ev.ReportingController != EventController || ev.ReportingInstance != "host" ||
			!ev.EventTime.Time.Equal(at) || ev.Namespace != "default" || string(ev.Regarding.UID) != "u" {
			t.Errorf("%q: event %+v", tc.object, ev)
		}
	}
}
