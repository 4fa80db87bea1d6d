package live

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/internal/attention"
	"github.com/clusterdesk/clusterdesk/internal/csrqueue"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/live"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

// Open attention sections of home pages. A home tab names on its stream
// that it shows the section (attention=1); the events handler works out its
// user's access (page.AttentionAccess), and the tabs of one access share a view:
// per batch of changes the items are computed once for all views, kept to
// each view's access, rendered once and sent to the view's tabs when the
// section changed (as the CSR queue's open views, csr_views.go). The
// section is replaced whole by its id (web/js/live.js, replaceById, on the
// "status" event).

// maxAttentionViews bounds the distinct accesses rendered per batch; a tab
// beyond it gets no live attention (its counts still update).
const maxAttentionViews = 64

// attentionView is one access's open section, under Updates.mu.
type attentionView struct {
	access page.AttentionAccess
	topic  string
	tabs   int
	shown  []byte // the section its tabs show
}

func attentionTopic(key string) string {
	h := sha256.Sum256([]byte(key))
	return "attention-" + hex.EncodeToString(h[:8])
}

// OpenAttention opens (or joins) the view of access for one tab (the events
// handler's, for a home tab): its topic and the release its stream calls
// when it ends; ok is false past maxAttentionViews.
func (l *Updates) OpenAttention(access page.AttentionAccess) (topic string, release func(), ok bool) {
	key := access.Key()
	storms := l.attentionStorms(access.May(kube.CSRs))
	l.mu.Lock()
	defer l.mu.Unlock()
	v := l.attentionViews[key]
	if v == nil {
		if len(l.attentionViews) >= maxAttentionViews {
			return "", nil, false
		}
		v = &attentionView{access: access, topic: attentionTopic(key)}
		l.attentionViews[key] = v // first: the items read what its user may list
		// The section as of now: its tabs were rendered just before (a
		// change since reaches them with the next batch that differs).
		items, loadRead := l.attentionItems(l.now(), storms)
		v.shown = l.attentionSection(v, items, loadRead)
		if len(l.attentionViews) == 1 {
			l.startAttentionTicks()
		}
	}
	v.tabs++
	if v.access.May(kube.CSRs) {
		l.attentionCSRTabs.Add(1)
	}
	return v.topic, func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if v.access.May(kube.CSRs) {
			l.attentionCSRTabs.Add(-1)
		}
		if v.tabs--; v.tabs == 0 && l.attentionViews[key] == v {
			delete(l.attentionViews, key)
		}
	}, true
}

// AttentionShown is the section the open view of access holds as what its
// tabs show (nil when none is open): a home page rendered for that access
// shows the same bytes (the console's tests hold the page to it).
func (l *Updates) AttentionShown(access page.AttentionAccess) []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	if v := l.attentionViews[access.Key()]; v != nil {
		return v.shown
	}
	return nil
}

// attentionStorms is the CSR queue's storm index when some open attention
// view (or the one opening, csrs) may list CSRs, read before the hub's lock
// is taken: reading it catches the queue's index up with the CSR changes
// (O(log n) each), which need not hold up the other live views.
func (l *Updates) attentionStorms(csrs bool) *csrqueue.Storms {
	if !csrs && l.attentionCSRTabs.Load() == 0 {
		return nil
	}
	return l.csrQueue.Storms()
}

// attentionItems computes every item once for all views (l.mu held): the
// load as the sampler last read it, without counting as a look, and who
// approves from the last walk a page read. storms is the storm index read
// before the lock (nil: none was read).
func (l *Updates) attentionItems(now time.Time, storms *csrqueue.Storms) (items []attention.Item, loadRead bool) {
	// Read what some open view's user may list, nothing else.
	read := func(k kube.KindID) bool {
		for _, v := range l.attentionViews {
			if v.access.May(k) {
				return true
			}
		}
		return false
	}
	f := attention.Facts{Statuses: l.cluster.Statuses(), Now: now, Gap: l.attention.Walk.GapFunc(), Read: read}
	if read(kube.CSRs) {
		if storms == nil { // a CSR reader's tab opened since: read it here, once
			storms = l.csrQueue.Storms()
		}
		f.Storms = storms
	}
	if l.load != nil {
		if ld, err := l.load.Latest(); err == nil && ld.HasRates() {
			f.Load = &ld
			f.Rejecting = attention.RejectingOf(ld)
		}
	}
	return l.attention.Sources.Items(f), f.Load != nil
}

// attentionSection renders one view's section from every item.
func (l *Updates) attentionSection(v *attentionView, items []attention.Item, rated bool) []byte {
	seen := page.LoadUnknown
	switch {
	case l.load == nil: // no sampler: nothing measured to say
	case !v.access.Load:
		seen = page.LoadForbidden
	case !rated:
		seen = page.LoadPending
	default:
		seen = page.LoadRead
	}
	return mustRender(pages.AttentionSection(page.AttentionSection(v.access, items, seen)))
}

// attentionMessages are the sections that changed, one message per view
// (l.mu held; storms from attentionStorms before it).
func (l *Updates) attentionMessages(now time.Time, storms *csrqueue.Storms) []live.Message {
	if len(l.attentionViews) == 0 {
		return nil
	}
	items, loadRead := l.attentionItems(now, storms)
	var msgs []live.Message
	for _, v := range l.attentionViews {
		html := l.attentionSection(v, items, loadRead)
		if bytes.Equal(html, v.shown) {
			continue
		}
		v.shown = html
		msgs = append(msgs, live.Message{Topic: v.topic, Event: StatusTopic, Data: html})
	}
	return msgs
}

// AttentionChanges are the open sections that changed since their tabs were
// last sent one, rendered now: what the next batch of changes sends them
// (Render's attention part; the console's tests hold the home page to it).
func (l *Updates) AttentionChanges() []live.Message {
	storms := l.attentionStorms(false)
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.attentionMessages(l.now(), storms)
}

// publisher is the part of live.Streams that sends messages outside the
// hub's batches (the ticks below).
type publisher interface{ Publish(msgs ...live.Message) }

// startAttentionTicks renders the sections once per sampler interval while
// any is open (l.mu held): the load changes without any object changing.
// Without a sampler, or a stream server that publishes, the batches alone
// update them.
func (l *Updates) startAttentionTicks() {
	p, ok := l.streams.(publisher)
	if l.load == nil || !ok || l.ticking {
		return
	}
	l.ticking = true
	go func() {
		t := time.NewTicker(l.load.Interval())
		defer t.Stop()
		for range t.C {
			storms := l.attentionStorms(false)
			l.mu.Lock()
			if len(l.attentionViews) == 0 {
				l.ticking = false
				l.mu.Unlock()
				return
			}
			msgs := l.attentionMessages(l.now(), storms)
			l.mu.Unlock()
			if len(msgs) > 0 {
				p.Publish(msgs...)
			}
		}
	}()
}

// liveAttentionAccess is the access of a home tab's user: the kinds granted
// to the stream (each checked as the pages check it), /metrics, RBAC.
func (h *Handlers) liveAttentionAccess(c echo.Context, granted []kube.Kind) page.AttentionAccess {
	statuses := make([]kube.KindStatus, 0, len(granted))
	for _, k := range granted {
		statuses = append(statuses, kube.KindStatus{Kind: k, State: kube.StateSynced})
	}
	load, err := h.d.MetricsShown(c.Request().Context())
	return page.AccessOf(statuses, load && err == nil, h.d.MayReadRBAC(c))
}

// stillMayReadRBAC re-checks, for a stream carrying signers nothing
// approves, the user's right to read who approves.
func (h *Handlers) stillMayReadRBAC(ctx context.Context) bool {
	for _, r := range []string{"clusterroles", "clusterrolebindings"} {
		ok, err := h.d.Access.Can(ctx, "list", "rbac.authorization.k8s.io", r, "", "")
		if err != nil || !ok {
			return false
		}
	}
	return true
}
