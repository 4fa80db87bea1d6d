package handlers

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/a-h/templ"

	"github.com/clusterdesk/clusterdesk/handlers/kinds"
	"github.com/clusterdesk/clusterdesk/internal/apfload"
	"github.com/clusterdesk/clusterdesk/internal/csrqueue"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/live"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/views/components"
	"github.com/clusterdesk/clusterdesk/views/layout"
	"github.com/clusterdesk/clusterdesk/views/model"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

// LiveStreams is the event-stream server behind GET /events (live.Streams).
type LiveStreams interface {
	Serve(w http.ResponseWriter, r *http.Request, sub live.Subscription)
	Cursor() string
	// End closes an owner's streams after sending msgs (live_signout.go).
	End(owner string, msgs ...live.Message) int
}

// Topics and event names of live updates. A kind's count topic carries its nav
// count and list total (sticky: sent on connect); its rows topic the changed rows.
const statusTopic = "status"

func countTopic(k kube.KindID) string { return string(k) }
func rowsTopic(k kube.KindID) string  { return string(k) + "-rows" }

// metricsRowsTopic carries a kind's changed rows with the load cells its list
// shows to users who may read /metrics (kindHooks.listMetrics); they subscribe
// to it instead of rowsTopic. Its messages have rowsTopic's event name, so the
// page handles them the same way.
func metricsRowsTopic(k kube.KindID) string { return rowsTopic(k) + "-metrics" }

// LatestLoad is the shared sampler's latest load, read without counting as a
// look (apfload.Sampler.Latest): a change in the cluster must not keep the
// sampler reading /metrics when nobody looks.
type LatestLoad interface {
	Latest() (apfload.Load, error)
	Interval() time.Duration
}

// maxLiveRows is the most rows one batch renders. A larger batch (the relist
// after a lost watch replays every object) becomes a resync: each page fetches
// its own view once instead of receiving every row.
const maxLiveRows = 200

// LiveUpdates renders what the live hub publishes, once per change for every
// browser, and serves the event stream. Build it with NewLiveUpdates, give its
// Render to live.NewHub, and put it in Deps.Live.
type LiveUpdates struct {
	cluster Cluster
	streams LiveStreams
	// csrQueue is the CSR queue caches, shared with the pages of the
	// handlers built over this renderer (csrQueueOf).
	csrQueue *csrqueue.Queue
	now      func() time.Time
	// load, when set, fills the load cells of metricsRowsTopic's rows.
	load LatestLoad
	// readOnly: the console runs read-only, so rows carry no tick boxes (list_ticks.go).
	readOnly bool

	mu     sync.Mutex
	lostAt map[kube.KindID]time.Time // kinds whose watch is lost, since when
	counts map[kube.KindID]string    // the count last published per kind
	status []byte                    // the status fragment last published
	// csrViews are the open views of the CSR queue, by their query (live_csr_views.go).
	csrViews map[string]*csrView
	// attention is the home page's sources of attention items, shared with
	// the pages (attentionStateOf); attentionViews the open sections by
	// their access's key, ticking whether their ticks run (live_attention.go).
	attention      *attentionState
	attentionViews map[string]*attentionView
	// attentionCSRTabs counts the open home tabs whose user may list CSRs
	// (changed under mu, read without it: Render reads the storm index
	// before taking mu only when some tab shows it).
	attentionCSRTabs atomic.Int64
	ticking          bool
}

// NewLiveUpdates returns the renderer and stream server for live updates.
func NewLiveUpdates(cluster Cluster, streams LiveStreams) *LiveUpdates {
	return &LiveUpdates{
		cluster: cluster, streams: streams, now: time.Now, csrQueue: csrqueue.New(cluster),
		lostAt:    map[kube.KindID]time.Time{},
		counts:    map[kube.KindID]string{},
		attention: newAttentionState(cluster), attentionViews: map[string]*attentionView{},
	}
}

// ReadOnly tells the renderer the console runs read-only: lists then offer
// no cleanup, and live rows, like the pages' rows, carry no tick boxes.
func (l *LiveUpdates) ReadOnly(readOnly bool) *LiveUpdates {
	l.readOnly = readOnly
	return l
}

// WithLoad makes live rows of kinds whose lists show the API server's load
// carry the load cells too (on metricsRowsTopic). Call it before the hub runs.
func (l *LiveUpdates) WithLoad(load LatestLoad) *LiveUpdates {
	l.load = load
	return l
}

// hasMetricsRows reports whether kind's live rows come in a variant with load cells.
func (l *LiveUpdates) hasMetricsRows(kind kube.KindID) bool {
	return l != nil && l.load != nil && hooksByKind[kind].listMetrics != nil
}

// loadState is the load as live rows show it to users who may read /metrics.
func (l *LiveUpdates) loadState() present.APFLoadState {
	ld, err := l.load.Latest()
	st := present.APFLoadState{Allowed: true, Err: err, Interval: l.load.Interval()}
	if err == nil {
		st.Load = &ld
	}
	return st
}

// Render is the hub's live.Renderer: the messages for one batch of changes of
// one kind. It runs on the hub's goroutine only.
func (l *LiveUpdates) Render(kind kube.KindID, names []string, status bool) []live.Message {
	now := l.now()
	st := l.cluster.Status(kind)
	storms := l.attentionStorms(false) // outside the lock: it may catch up with CSR changes
	l.mu.Lock()
	defer l.mu.Unlock()
	var msgs []live.Message

	recovered := false
	if status {
		_, wasStale := l.lostAt[kind]
		switch stale := watchLost(st); {
		case stale && !wasStale:
			l.lostAt[kind] = now
		case !stale && wasStale:
			delete(l.lostAt, kind)
			recovered = true
		}
		if html := mustRender(layout.LiveStatus(l.staleBanners())); !bytes.Equal(html, l.status) {
			l.status = html
			msgs = append(msgs, live.Message{Topic: statusTopic, Event: statusTopic, Data: html, Sticky: true})
		}
	}

	count := navCount(st)
	if prev, ok := l.counts[kind]; !ok || prev != count {
		l.counts[kind] = count
		var b bytes.Buffer
		b.Write(mustRender(layout.NavCount(string(kind), count)))
		if count != "" {
			b.Write(mustRender(pages.ListTotal(string(kind), st.Count)))
		}
		msgs = append(msgs, live.Message{Topic: countTopic(kind), Event: countTopic(kind), Data: b.Bytes(), Sticky: true})
	}

	switch {
	case recovered || len(names) > maxLiveRows:
		// After a lost watch nothing the page holds can be trusted.
		msgs = append(msgs, live.Message{Topic: rowsTopic(kind), Event: live.ResyncEvent, Data: []byte(rowsTopic(kind))})
		if l.hasMetricsRows(kind) {
			msgs = append(msgs, live.Message{Topic: metricsRowsTopic(kind), Event: live.ResyncEvent, Data: []byte(rowsTopic(kind))})
		}
		if kind == kube.CSRs {
			msgs = append(msgs, l.csrViewMessages(now, true)...)
		}
	case len(names) > 0 && hooksByKind[kind].liveRows != nil:
		if m, ok := hooksByKind[kind].liveRows(l, names, now); ok {
			msgs = append(msgs, m)
		}
		if kind == kube.CSRs {
			msgs = append(msgs, l.csrViewMessages(now, false)...)
		}
	case len(names) > 0:
		plain := model.LiveRows{Kind: string(kind), Total: st.Count}
		withLoad := plain
		var load present.APFLoadState
		if l.hasMetricsRows(kind) {
			load = l.loadState()
		}
		for _, name := range names {
			row, found, err := liveRow(l.cluster, kind, name, now)
			switch {
			case err != nil:
				continue // not synced, or a kind without rows: the status message covers it
			case !found:
				gone := model.LiveRow{ID: rowID(kind, name), Removed: true}
				plain.Rows = append(plain.Rows, gone)
				withLoad.Rows = append(withLoad.Rows, gone)
			default:
				if tickable(l.readOnly, kind) {
					row = withTick(l.cluster, kind, row) // the list's tick column (list_ticks.go)
				}
				plain.Rows = append(plain.Rows, model.LiveRow{ID: row.ID, Row: row})
				if l.hasMetricsRows(kind) {
					row = rowWithMetrics(l.cluster, kind, row, load)
					withLoad.Rows = append(withLoad.Rows, model.LiveRow{ID: row.ID, Row: row})
				}
			}
		}
		if len(plain.Rows) > 0 {
			msgs = append(msgs, live.Message{Topic: rowsTopic(kind), Event: rowsTopic(kind), Data: mustRender(components.LiveRows(plain))})
			if l.hasMetricsRows(kind) {
				msgs = append(msgs, live.Message{Topic: metricsRowsTopic(kind), Event: rowsTopic(kind), Data: mustRender(components.LiveRows(withLoad))})
			}
		}
	}
	if kind == kube.CSRApprovalPolicies {
		// A policy changed (or their CRD came or went): the verdicts of the
		// open queue views that show them change with it.
		msgs = append(msgs, l.csrVerdictViewMessages(now)...)
	}
	// The home pages' attention sections that this batch changed (live_attention.go).
	msgs = append(msgs, l.attentionMessages(now, storms)...)
	return msgs
}

// rowWithMetrics is row as the list shows it to a user who may read /metrics:
// decorated by the kind's listMetrics like the full list.
func rowWithMetrics(c Cluster, kind kube.KindID, row model.Row, st present.APFLoadState) model.Row {
	page := model.ListPage{Rows: []model.Row{row}}
	hooksByKind[kind].listMetrics(c, kind, &page, st)
	return page.Rows[0]
}

// watchLost reports a kind whose cache synced once and has lost its watch: the
// listers still serve what they hold, which may be stale.
func watchLost(st kube.KindStatus) bool {
	return st.State == kube.StateError && !st.SyncedAt.IsZero()
}

// navCount is the count the navigation shows for a kind ("" when not known),
// as chrome computes it.
func navCount(st kube.KindStatus) string {
	if st.State != kube.StateSynced {
		return ""
	}
	return strconv.Itoa(st.Count)
}

// StaleBanners returns the "stale data" notice for the kinds whose watch is
// lost, for pages rendered meanwhile.
func (l *LiveUpdates) StaleBanners() []model.Banner {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.staleBanners()
}

func (l *LiveUpdates) staleBanners() []model.Banner {
	if len(l.lostAt) == 0 {
		return nil
	}
	var kinds []kube.KindID
	var since time.Time
	for k, at := range l.lostAt {
		kinds = append(kinds, k)
		if since.IsZero() || at.Before(since) {
			since = at
		}
	}
	slices.Sort(kinds)
	var titles []string
	var reason string
	for _, k := range kinds {
		st := l.cluster.Status(k)
		titles = append(titles, st.Kind.Title)
		if reason == "" && st.Err != nil {
			reason = st.Err.Error()
		}
	}
	msg := fmt.Sprintf("clusterdesk lost its watch on the API server for %s: the data shown is as of %s and may be out of date. It reconnects by itself.",
		strings.Join(titles, ", "), since.Format("15:04:05 MST"))
	if reason != "" {
		msg += " The last error: " + reason
	}
	return []model.Banner{{Tone: model.ToneWarning, Title: "Data as of " + since.Format("15:04:05"), Message: msg, TestID: "banner-stale"}}
}

// liveRow renders the generic list row of a kind (its registry entry's row).
// A page with rows of its own (the CSR queue) does not take these: web/js/live.js
// fetches its fragment again instead, until the page registers its own row
// renderer and marks its table with data-live-rows.
func liveRow(c Cluster, kind kube.KindID, name string, now time.Time) (model.Row, bool, error) {
	kp, ok := kinds.Of(kind)
	if !ok {
		return model.Row{}, false, fmt.Errorf("live: no rows for %s", kind)
	}
	return kp.Row(c, name, now)
}

// rowID is a list row's DOM id, as present builds it (model.Row.ID), for an
// object that is gone and has no row to take it from.
func rowID(kind kube.KindID, name string) string { return "row-" + string(kind) + "-" + name }

// mustRender renders a live fragment. The components take plain view models
// and write to memory: an error is a programming error, and the hub recovers
// from the panic and logs it.
func mustRender(c templ.Component) []byte {
	var b bytes.Buffer
	if err := c.Render(context.Background(), &b); err != nil {
		panic(fmt.Sprintf("live: render: %v", err))
	}
	return b.Bytes()
}
