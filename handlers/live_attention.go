package handlers

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/internal/attention"
	"github.com/clusterdesk/clusterdesk/internal/csrqueue"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/live"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

// Open attention sections of home pages. A home tab names on its stream
// that it shows the section (attention=1); the events handler works out its
// user's access (attentionAccess), and the tabs of one access share a view:
// per batch of changes the items are computed once for all views, kept to
// each view's access, rendered once and sent to the view's tabs when the
// section changed (as the CSR queue's open views, live_csr_views.go). The
// section is replaced whole by its id (web/js/live.js, replaceById, on the
// "status" event).

// maxAttentionViews bounds the distinct accesses rendered per batch; a tab
// beyond it gets no live attention (its counts still update).
const maxAttentionViews = 64

// attentionView is one access's open section, under LiveUpdates.mu.
type attentionView struct {
	access attentionAccess
	topic  string
	tabs   int
	shown  []byte // the section its tabs show
}

func attentionTopic(key string) string {
	h := sha256.Sum256([]byte(key))
	return "attention-" + hex.EncodeToString(h[:8])
}

// openAttention opens (or joins) the view of access for one tab: its topic
// and the release its stream calls when it ends; ok is false past
// maxAttentionViews.
func (l *LiveUpdates) openAttention(access attentionAccess) (topic string, release func(), ok bool) {
	key := access.key()
	storms := l.attentionStorms(access.may(kube.CSRs))
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
	if v.access.may(kube.CSRs) {
		l.attentionCSRTabs.Add(1)
	}
	return v.topic, func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if v.access.may(kube.CSRs) {
			l.attentionCSRTabs.Add(-1)
		}
		if v.tabs--; v.tabs == 0 && l.attentionViews[key] == v {
			delete(l.attentionViews, key)
		}
	}, true
}

// attentionStorms is the CSR queue's storm index when some open attention
// view (or the one opening, csrs) may list CSRs, read before the hub's lock
// is taken: reading it catches the queue's index up with the CSR changes
// (O(log n) each), which need not hold up the other live views.
func (l *LiveUpdates) attentionStorms(csrs bool) *csrqueue.Storms {
	if !csrs && l.attentionCSRTabs.Load() == 0 {
		return nil
	}
	return l.csrQueue.Storms()
}

// attentionItems computes every item once for all views (l.mu held): the
// load as the sampler last read it, without counting as a look, and who
// approves from the last walk a page read. storms is the storm index read
// before the lock (nil: none was read).
func (l *LiveUpdates) attentionItems(now time.Time, storms *csrqueue.Storms) (items []attention.Item, loadRead bool) {
	// Read what some open view's user may list, nothing else.
	read := func(k kube.KindID) bool {
		for _, v := range l.attentionViews {
			if v.access.may(k) {
				return true
			}
		}
		return false
	}
	f := attention.Facts{Statuses: l.cluster.Statuses(), Now: now, Gap: l.attention.walk.gapFunc(), Read: read}
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
	return l.attention.sources.Items(f), f.Load != nil
}

// attentionSection renders one view's section from every item.
func (l *LiveUpdates) attentionSection(v *attentionView, items []attention.Item, rated bool) []byte {
	seen := loadUnknown
	switch {
	case l.load == nil: // no sampler: nothing measured to say
	case !v.access.load:
		seen = loadForbidden
	case !rated:
		seen = loadPending
	default:
		seen = loadRead
	}
	return mustRender(pages.AttentionSection(attentionSectionOf(v.access, items, seen)))
}

func dropLoadItems(items []attention.Item) []attention.Item {
	return dropConcern(dropConcern(items, attention.WebhooksFailing), attention.LevelsRejecting)
}

func dropConcern(items []attention.Item, c attention.Concern) []attention.Item {
	out := items[:0:0]
	for _, it := range items {
		if it.Concern != c {
			out = append(out, it)
		}
	}
	return out
}

// attentionMessages are the sections that changed, one message per view
// (l.mu held; storms from attentionStorms before it).
func (l *LiveUpdates) attentionMessages(now time.Time, storms *csrqueue.Storms) []live.Message {
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
		msgs = append(msgs, live.Message{Topic: v.topic, Event: statusTopic, Data: html})
	}
	return msgs
}

// publisher is the part of live.Streams that sends messages outside the
// hub's batches (the ticks below).
type publisher interface{ Publish(msgs ...live.Message) }

// startAttentionTicks renders the sections once per sampler interval while
// any is open (l.mu held): the load changes without any object changing.
// Without a sampler, or a stream server that publishes, the batches alone
// update them.
func (l *LiveUpdates) startAttentionTicks() {
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
func (h *Handlers) liveAttentionAccess(c echo.Context, granted []kube.Kind) attentionAccess {
	statuses := make([]kube.KindStatus, 0, len(granted))
	for _, k := range granted {
		statuses = append(statuses, kube.KindStatus{Kind: k, State: kube.StateSynced})
	}
	load, err := h.metricsShown(c.Request().Context())
	return accessOf(statuses, load && err == nil, h.mayReadRBAC(c))
}

// stillMayReadRBAC re-checks, for a stream carrying signers nothing
// approves, the user's right to read who approves.
func (h *Handlers) stillMayReadRBAC(ctx context.Context) bool {
	for _, r := range []string{"clusterroles", "clusterrolebindings"} {
		ok, err := h.deps.Access.Can(ctx, "list", "rbac.authorization.k8s.io", r, "", "")
		if err != nil || !ok {
			return false
		}
	}
	return true
}
