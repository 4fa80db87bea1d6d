package replay

import (
	"context"
	"errors"
	"time"

	corev1 "k8s.io/api/core/v1"

	engine "github.com/clusterdesk/clusterdesk/internal/replay"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// What the policy's and the webhook configurations' replay pages share:
// the window offered and chosen, today's namespaces read as the user, and
// the words of a replay that did not finish.

// windowOptions are the windows offered, window selected (the default when
// it is none of them).
func windowOptions(window string) []model.Option {
	var opts []model.Option
	found := false
	for _, w := range windows {
		sel := w.value == window
		found = found || sel
		opts = append(opts, model.Option{Value: w.value, Label: w.label, Selected: sel})
	}
	if !found {
		opts[0].Selected = true
	}
	return opts
}

// chosenWindow is the window of the selected option.
func chosenWindow(opts []model.Option) (w struct {
	value, label, words string
	d                   time.Duration
}) {
	w = windows[0]
	for i, o := range opts {
		if o.Selected {
			w = windows[i]
		}
	}
	return w
}

// namespaces are today's namespaces, read as the user; an error when they
// cannot be (the selectors then meet no namespace's labels).
func (h *Handlers) namespaces(ctx context.Context) ([]*corev1.Namespace, error) {
	if h.d.Lookup == nil {
		return nil, errors.New("no direct reads")
	}
	var out []*corev1.Namespace
	err := h.d.Lookup.Namespaces(ctx, func(n *corev1.Namespace) { out = append(out, n) })
	return out, err
}

// withNamespacesNote says on r why namespace selectors met no labels when
// the namespaces could not be read (nsErr).
func withNamespacesNote(r *model.ReplayResult, nsErr error) *model.ReplayResult {
	if nsErr != nil {
		r.Notes = append(r.Notes, "The namespaces could not be read as you ("+nsErr.Error()+"): namespace selectors matched no labels.")
	}
	return r
}

// failure words a replay's error: a draft that cannot run, a replay that
// ran out of its time (limit), or another failure.
func failure(err error, limit time.Duration) string {
	var bad *engine.BadDraftError
	switch {
	case errors.As(err, &bad):
		return bad.Error()
	case errors.Is(err, context.DeadlineExceeded):
		return "The replay took longer than " + limit.String() + " and was stopped; choose a shorter window."
	}
	return "The replay failed: " + err.Error()
}
