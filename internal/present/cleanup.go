package present

import (
	"errors"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"fmt"
	"net/url"
	"strings"

	"github.com/clusterdesk/clusterdesk/internal/cleanup"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// CleanupPageSize is how many names one cleanup preview page lists, and so
// how many dry runs one preview view costs; the count is always exact.
const CleanupPageSize = 50

// CleanupWindow is the part [lo, hi) of n selected objects that the preview's
// page (1-based; 0 is the first, as handlers/page.ParsePage reads page=N)
// lists, and its pager; action and v are the preview's URL and query without
// the page.
func CleanupWindow(n, page int, action string, v url.Values) (lo, hi int, p model.Pager) {
	return paginate(page, CleanupPageSize, n, func(n int) string { return withPage(action, v, n) })
}

// CleanupWhat words a filter: "decided, signer example.com/x, older than 7d, labels team=a".
func CleanupWhat(f cleanup.Filter) string {
	var parts []string
	switch {
	case f.Picked != nil:
		parts = append(parts, fmt.Sprintf("the %d ticked rows", len(f.Picked)))
	case f.State == cleanup.Decided:
		parts = append(parts, "decided (approved, issued, denied or failed)")
	case f.State != "":
		parts = append(parts, "state "+f.State)
	}
	if f.Signer != "" {
		parts = append(parts, "signer "+f.Signer)
	}
	if f.OlderThan > 0 {
		parts = append(parts, "older than "+cleanup.FormatAge(f.OlderThan))
	}
	if f.Selector != "" {
		parts = append(parts, "labels "+f.Selector)
	}
	if len(parts) == 0 {
		return "every object"
	}
	return strings.Join(parts, ", ")
}

// CleanupItems words outcomes (or, with nil outcomes, the bare items).
func CleanupItems(items []cleanup.Candidate, outcomes []cleanup.Outcome, href func(cleanup.Candidate) string) []model.CleanupItem {
	out := make([]model.CleanupItem, len(items))
	for i, c := range items {
		it := model.CleanupItem{Namespace: c.Namespace, Name: c.Name, Href: href(c)}
		if i < len(outcomes) {
			o := outcomes[i]
			it.Result, it.Tone = string(o.Result), cleanupTone(o.Result)
			if o.Err != nil {
				it.Message = errorMessage(o.Err)
			}
		}
		out[i] = it
	}
	return out
}

// CleanupResultOf summarizes a cleanup: counts per result, then the objects,
// failures first, at most CleanupPageSize*4 of them listed.
func CleanupResultOf(outcomes []cleanup.Outcome, href func(cleanup.Candidate) string) model.CleanupResult {
	var r model.CleanupResult
	counts := cleanup.Counts(outcomes)
	for _, res := range []cleanup.Result{cleanup.Deleted, cleanup.NotFound, cleanup.Forbidden, cleanup.Conflict, cleanup.Failed} {
		if counts[res] > 0 {
			r.Counts = append(r.Counts, model.CleanupCount{Result: string(res), N: counts[res], Tone: cleanupTone(res)})
		}
	}
	limit := CleanupPageSize * 4
	var failed, done []cleanup.Outcome
	for _, o := range outcomes {
		if o.Result == cleanup.Deleted {
			done = append(done, o)
		} else {
			failed = append(failed, o)
		}
	}
	for _, o := range append(failed, done...) {
		if len(r.Items) == limit {
			r.More++
			continue
		}
		it := CleanupItems([]cleanup.Candidate{o.Item}, []cleanup.Outcome{o}, href)[0]
		if o.Result == cleanup.Deleted || o.Result == cleanup.NotFound {
			it.Href = "" // no page to link to any more
		}
		r.Items = append(r.Items, it)
	}
	return r
}

func cleanupTone(r cleanup.Result) model.Tone {
	switch r {
	case cleanup.Deleted, cleanup.WouldDelete:
		return model.ToneOK
	case cleanup.NotFound:
		return model.ToneNeutral
	case cleanup.Conflict:
		return model.ToneWarning
	}
	return model.ToneError
}

// errorMessage is the API server's own message for an error, or its text.
func errorMessage(err error) string {
	var status apierrors.APIStatus
	if errors.As(err, &status) && status.Status().Message != "" {
		return status.Status().Message
	}
	return err.Error()
}
