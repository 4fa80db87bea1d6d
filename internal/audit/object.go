package audit

import (
	"context"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// EventCreator creates an events.k8s.io/v1 Event with the console's own
// identity, setting its reporting controller and instance (kube.EventWriter).
type EventCreator interface {
	CreateEvent(ctx context.Context, ev *eventsv1.Event) error
}

// KubeEvents is the EventWriter that creates each Event as the object
// Event.Object describes, through c. The interface is declared here so that
// audit does not import kube (kube is the bottom of the import graph).
func KubeEvents(c EventCreator) EventWriter { return kubeEvents{c} }

type kubeEvents struct{ c EventCreator }

func (k kubeEvents) WriteEvent(ctx context.Context, ev Event) error {
	return k.c.CreateEvent(ctx, ev.Object())
}

// Object is ev as an events.k8s.io/v1 Event, without the reporting
// controller and instance. Its name is the object's and the time in hex, as
// client-go's recorder names them.
func (ev Event) Object() *eventsv1.Event {
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
		EventTime: metav1.NewMicroTime(t),
		Action:    truncateName(ev.Action, 128),
		Reason:    truncateName(ev.Reason, 128),
		Type:      ev.Type,
		Note:      ev.Note,
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
