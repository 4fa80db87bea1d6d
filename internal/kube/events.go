package kube

import (
	"context"
	"fmt"
	"os"

	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// EventController is the reportingController of the audit Events.
const EventController = "clusterdesk.io/console"

// EventWriter creates the audit trail's Kubernetes Events (events.k8s.io/v1)
// with the identity of the rest.Config it was built from: the console's own,
// not the user's, so an Event exists even for a write the user was refused.
type EventWriter struct {
	client   kubernetes.Interface
	instance string
}

// NewEventWriter returns an EventWriter for cfg's identity. It does no network I/O.
func NewEventWriter(cfg *rest.Config) (*EventWriter, error) {
	cs, err := kubernetes.NewForConfig(clientConfig(cfg))
	if err != nil {
		return nil, fmt.Errorf("event client: %w", err)
	}
	host, _ := os.Hostname()
	if host == "" {
		host = "clusterdesk"
	}
	return &EventWriter{client: cs, instance: truncateName(host, 128)}, nil
}

// CreateEvent creates ev (audit.Event.Object builds it) as this process's
// controller and instance. ev is not changed.
func (w *EventWriter) CreateEvent(ctx context.Context, ev *eventsv1.Event) error {
	_, err := w.client.EventsV1().Events(ev.Namespace).Create(ctx, reported(ev, w.instance), metav1.CreateOptions{})
	return err
}

// reported is ev as this process reports it: the console's controller name
// and the instance (host) it runs on.
func reported(ev *eventsv1.Event, instance string) *eventsv1.Event {
	ev = ev.DeepCopy()
	ev.ReportingController = EventController
	ev.ReportingInstance = instance
	return ev
}

func truncateName(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
