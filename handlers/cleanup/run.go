package cleanup

import (
	"context"
	"io"
	"net/http"
	"slices"
	"sync/atomic"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/internal/cleanup"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/views/model"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

// DefaultProgressAfter is how long a confirmed cleanup may run before
// its page is sent with a progress line instead of waiting for the end.
// Thousands of deletions, one request each at kube.DeleteQPS at most, take
// tens of seconds or more; a page that says nothing for that long looks hung,
// and a proxy that gives up on an upstream silent for 30 or 60 s (nginx's
// proxy_read_timeout, HAProxy's timeout server) shows an error while the
// deletions go on unreported.
const DefaultProgressAfter = 2 * time.Second

// cleanupProgressEvery is how often a running cleanup's page gets a line.
const cleanupProgressEvery = time.Second

func (h *Handlers) cleanupProgressAfter() time.Duration {
	if h.d.ProgressAfter > 0 {
		return h.d.ProgressAfter
	}
	return DefaultProgressAfter
}

// cleanupRun is one confirmed cleanup's deletions, running beside the request.
type cleanupRun struct {
	done     atomic.Int64
	total    int
	result   chan []cleanup.Outcome
	outcomes []cleanup.Outcome
	finished bool
}

// startCleanup deletes items as the user in the background. A confirmed
// cleanup runs to its end even when the browser goes away (a closed tab, a
// proxy's timeout): stopping at the request's cancellation would leave it
// half done and unreported. WithoutCancel keeps the signed-in user in the
// context, so every deletion is still audited under their name.
func (h *Handlers) startCleanup(c echo.Context, t cleanupTarget, items []cleanup.Candidate) *cleanupRun {
	run := &cleanupRun{total: len(items), result: make(chan []cleanup.Outcome, 1)}
	svc := h.cleanupCase(c)
	svc.Done = &run.done
	ctx := context.WithoutCancel(c.Request().Context())
	go func() { run.result <- svc.Delete(ctx, t.target, items) }()
	return run
}

// wait blocks until the deletions end. The handler must not return before:
// the deletions audit through its echo.Context, which echo reuses afterwards.
func (r *cleanupRun) wait() []cleanup.Outcome {
	if !r.finished {
		r.outcomes, r.finished = <-r.result, true
	}
	return r.outcomes
}

// finishCleanup answers a confirmed cleanup: its result page when the
// deletions end within cleanupProgressAfter (with a status that says how it
// went), else a page sent while they run (streamCleanup).
func (h *Handlers) finishCleanup(c echo.Context, t cleanupTarget, f cleanup.Filter, run *cleanupRun) error {
	timer := time.NewTimer(h.cleanupProgressAfter())
	defer timer.Stop()
	select {
	case out := <-run.result:
		run.outcomes, run.finished = out, true
		p := h.cleanupPage(c, t, f, run.total)
		h.addOutcome(&p, t, out)
		return page.Render(c, cleanupStatus(out), pages.Cleanup(p))
	case <-timer.C:
		return h.streamCleanup(c, t, f, run)
	}
}

func (h *Handlers) cleanupPage(c echo.Context, t cleanupTarget, f cleanup.Filter, count int) model.CleanupPage {
	return model.CleanupPage{
		Chrome:    h.d.Chrome(c, "Cleaned up "+t.title, t.nav, append(slices.Clone(t.crumbs), model.Crumb{Label: "Clean up"})...),
		KindTitle: t.title, What: present.CleanupWhat(f), Count: count, CancelURL: t.list,
	}
}

// addOutcome puts the result per object on p, with each distinct warning the
// API server sent once (thousands of deletions repeat the same few).
func (h *Handlers) addOutcome(p *model.CleanupPage, t cleanupTarget, outcomes []cleanup.Outcome) {
	result := present.CleanupResultOf(outcomes, t.href)
	p.Result = &result
	seen := map[string]bool{}
	for _, o := range outcomes {
		for _, w := range o.Warnings {
			if !seen[w] {
				seen[w] = true
				p.Problems = append(p.Problems, model.Banner{Tone: model.ToneWarning, Title: "Warning from the API server", Message: w, TestID: "cleanup-warning"})
			}
		}
	}
}

// streamCleanup sends the page of a cleanup still running: status 200 and
// the page's head at once, a progress line every cleanupProgressEvery, and
// the result per object when the deletions end. A browser that went away
// changes nothing: the deletions run on, and the handler waits for them.
func (h *Handlers) streamCleanup(c echo.Context, t cleanupTarget, f cleanup.Filter, run *cleanupRun) error {
	w := c.Response()
	w.Header().Set(echo.HeaderContentType, echo.MIMETextHTMLCharsetUTF8)
	w.Header().Set("X-Accel-Buffering", "no") // nginx would hold the lines back
	w.WriteHeader(http.StatusOK)

	p := h.cleanupPage(c, t, f, run.total)
	steps := templ.ComponentFunc(func(ctx context.Context, w io.Writer) error {
		// templ hands children its buffer, whose Flush sends what it holds
		// and flushes the response under it.
		flusher, _ := w.(interface{ Flush() error })
		tick := time.NewTicker(cleanupProgressEvery)
		defer tick.Stop()
		for !run.finished {
			if err := pages.CleanupStep(int(run.done.Load()), run.total).Render(ctx, w); err != nil {
				return err // the browser is gone; the handler still waits below
			}
			if flusher != nil {
				if err := flusher.Flush(); err != nil {
					return err
				}
			}
			select {
			case out := <-run.result:
				run.outcomes, run.finished = out, true
			case <-tick.C:
			}
		}
		return pages.CleanupStep(run.total, run.total).Render(ctx, w)
	})
	outcome := templ.ComponentFunc(func(ctx context.Context, w io.Writer) error {
		h.addOutcome(&p, t, run.wait())
		return pages.CleanupOutcome(p).Render(ctx, w)
	})
	err := pages.CleanupRunning(p, steps, outcome).Render(c.Request().Context(), w)
	run.wait()
	if err != nil {
		// Sent as far as the connection allowed; the deletions are done and
		// audited. Nothing more can reach this browser.
		h.d.Log.Info("cleanup page not delivered in full", "kind", t.title, "objects", run.total, "err", err)
	}
	return nil
}
