package kube

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/clusterdesk/clusterdesk/internal/audit"
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

// WriteEvent creates ev. Its name is the object's and the time in hex, as
// client-go's recorder names them.
func (w *EventWriter) WriteEvent(ctx context.Context, ev audit.Event) error {
	_, err := w.client.EventsV1().Events(ev.Namespace).Create(ctx, eventObject(ev, w.instance), metav1.CreateOptions{})
	return err
}

func eventObject(ev audit.Event, instance string) *eventsv1.Event {
	t := ev.Time
	if t.IsZero() {
		t = time.Now()
	}
	suffix := "." + strconv.FormatInt(t.UnixNano(), 16)
	return &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{
			Name:      truncateName(subdomain(ev.Regarding.Name), 253-len(suffix)) + suffix,
			Namespace: ev.Namespace,
		},
		EventTime:           metav1.NewMicroTime(t),
		ReportingController: EventController,
		ReportingInstance:   instance,
		Action:              truncateName(ev.Action, 128),
		Reason:              truncateName(ev.Reason, 128),
		Type:                ev.Type,
		Note:                ev.Note,
		Regarding: corev1.ObjectReference{
			APIVersion: ev.Regarding.APIVersion,
			Kind:       ev.Regarding.Kind,
			Name:       ev.Regarding.Name,
			UID:        types.UID(ev.Regarding.UID),
		},
	}
}

func truncateName(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// subdomain makes name a valid DNS subdomain for the Event's name (a CSR's
// name need not be one): lower case, other characters as '-'.
func subdomain(name string) string {
	b := []byte(strings.ToLower(name))
	for i, c := range b {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' && c != '.' {
			b[i] = '-'
		}
	}
	s := strings.Trim(string(b), "-.")
	if s == "" {
		return "object"
	}
	return s
}
