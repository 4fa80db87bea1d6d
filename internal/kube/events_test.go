package kube

import (
	"testing"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The Event's name, time and subject come from audit.Event.Object
// (internal/audit/object_test.go); the writer adds who reports it.
func TestReportedEvent(t *testing.T) {
	at := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	in := &eventsv1.Event{ObjectMeta: metav1.ObjectMeta{Name: "csr-abc.187a1c5a3c6e0000", Namespace: "default"}, EventTime: metav1.NewMicroTime(at)}
	ev := reported(in, "host")
	if ev.ReportingController != EventController || ev.ReportingInstance != "host" ||
		!ev.EventTime.Time.Equal(at) || ev.Namespace != "default" || ev.Name != in.Name {
		t.Errorf("event %+v", ev)
	}
	if in.ReportingController != "" || in.ReportingInstance != "" {
		t.Errorf("reported changed its argument: %+v", in)
	}
}
