package live

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

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/handlers/ports"
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

// Streams is the event-stream server behind GET /events (live.Streams).
type Streams interface {
	Serve(w http.ResponseWriter, r *http.Request, sub live.Subscription)
	Cursor() string
	// End closes an owner's streams after sending msgs (signout.go).
	End(owner string, msgs ...live.Message) int
	// Publish and Forget serve the background jobs' topics (jobs.go).
	Publish(msgs ...live.Message)
	Forget(topic string)
}

// Topics and event names of live updates. A kind's count topic carries its nav
// count and list total (sticky: sent on connect); its rows topic the changed rows.
const StatusTopic = "status"

func countTopic(k kube.KindID) string { return string(k) }
func RowsTopic(k kube.KindID) string  { return string(k) + "-rows" }

// MetricsRowsTopic carries a kind's changed rows with the load cells its list
// shows to users who may read /metrics (Kinds.Metrics); they subscribe
// to it instead of RowsTopic. Its messages have RowsTopic's event name, so the
// page handles them the same way.
func MetricsRowsTopic(k kube.KindID) string { return RowsTopic(k) + "-metrics" }

// LatestLoad is the shared sampler's latest load, read without counting as a
// look (apfload.Sampler.Latest): a change in the cluster must not keep the
// sampler reading /metrics when nobody looks.
type LatestLoad interface {
	Latest() (apfload.Load, error)
	Interval() time.Duration
}

// MaxRows is the most rows one batch renders. A larger batch (the relist
// after a lost watch replays every object) becomes a resync: each page fetches
// its own view once instead of receiving every row.
const MaxRows = 200

// Updates renders what the live hub publishes, once per change for every
// browser, and serves the event stream. Build it with NewUpdates, give its
// Render to live.NewHub, and put it in Deps.Updates (handlers.Deps.Live).
type Updates struct {
	cluster ports.Cluster
	streams Streams
	// kinds is the kind registry's rows (Kinds).
	kinds Kinds
	// csrQueue is the CSR queue caches, shared with the pages of the
	// handlers built over this renderer (Queue).
	csrQueue *csrqueue.Queue
	now      func() time.Time
	// load, when set, fills the load cells of MetricsRowsTopic's rows.
	load LatestLoad
	// readOnly: the console runs read-only, so rows carry no tick boxes
	// (handlers' list_ticks.go).
	readOnly bool

	mu     sync.Mutex
	lostAt map[kube.KindID]time.Time // kinds whose watch is lost, since when
	counts map[kube.KindID]string    // the count last published per kind
	status []byte                    // the status fragment last published
	// csrViews are the open views of the CSR queue, by their query (csr_views.go).
	csrViews map[string]*csrView
	// attention is the home page's sources of attention items, shared with
	// the pages (Attention); attentionViews the open sections by
	// their access's key, ticking whether their ticks run (attention.go).
	attention      *page.AttentionState
	attentionViews map[string]*attentionView
	// attentionCSRTabs counts the open home tabs whose user may list CSRs
	// (changed under mu, read without it: Render reads the storm index
	// before taking mu only when some tab shows it).
	attentionCSRTabs atomic.Int64
	ticking          bool
}

// NewUpdates returns the renderer and stream server for live updates, its
// rows those of the kind registry kinds.
func NewUpdates(cluster ports.Cluster, streams Streams, kinds Kinds) *Updates {
	return &Updates{
		cluster: cluster, streams: streams, kinds: kinds, now: time.Now, csrQueue: csrqueue.New(cluster),
		lostAt:    map[kube.KindID]time.Time{},
		counts:    map[kube.KindID]string{},
		attention: page.NewAttentionState(cluster), attentionViews: map[string]*attentionView{},
	}
}

// Queue is the CSR queue caches the renderer keeps its rows and views by,
// for the pages of the handlers built over it: pages and live rows share one
// index as they share the informer cache (handlers' csr_queue.go).
func (l *Updates) Queue() *csrqueue.Queue { return l.csrQueue }

// Attention is the home page's sources of attention items, which the home
// page shares with its live sections (handlers' attention.go).
func (l *Updates) Attention() *page.AttentionState { return l.attention }

// ReadOnly tells the renderer the console runs read-only: lists then offer
// no cleanup, and live rows, like the pages' rows, carry no tick boxes.
func (l *Updates) ReadOnly(readOnly bool) *Updates {
	l.readOnly = readOnly
	return l
}

// WithLoad makes live rows of kinds whose lists show the API server's load
// carry the load cells too (on MetricsRowsTopic). Call it before the hub runs.
func (l *Updates) WithLoad(load LatestLoad) *Updates {
	l.load = load
	return l
}

// hasMetricsRows reports whether kind's live rows come in a variant with load cells.
func (l *Updates) hasMetricsRows(kind kube.KindID) bool {
	return l != nil && l.load != nil && l.kinds.Metrics(kind) != nil
}

// loadState is the load as live rows show it to users who may read /metrics.
func (l *Updates) loadState() present.APFLoadState {
	ld, err := l.load.Latest()
	st := present.APFLoadState{Allowed: true, Err: err, Interval: l.load.Interval()}
	if err == nil {
		st.Load = &ld
	}
	return st
}

// Render is the hub's live.Renderer: the messages for one batch of changes of
// one kind. It runs on the hub's goroutine only.
func (l *Updates) Render(kind kube.KindID, names []string, status bool) []live.Message {
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
			msgs = append(msgs, live.Message{Topic: StatusTopic, Event: StatusTopic, Data: html, Sticky: true})
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
	case recovered || len(names) > MaxRows:
		// After a lost watch nothing the page holds can be trusted.
		msgs = append(msgs, live.Message{Topic: RowsTopic(kind), Event: live.ResyncEvent, Data: []byte(RowsTopic(kind))})
		if l.hasMetricsRows(kind) {
			msgs = append(msgs, live.Message{Topic: MetricsRowsTopic(kind), Event: live.ResyncEvent, Data: []byte(RowsTopic(kind))})
		}
		if kind == kube.CSRs {
			msgs = append(msgs, l.csrViewMessages(now, true)...)
		}
	case len(names) > 0 && l.kinds.OwnRows(kind):
		if m, ok := l.csrQueueRows(names, now); ok {
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
			row, found, err := l.kinds.Row(kind, name, now)
			switch {
			case err != nil:
				continue // not synced, or a kind without rows: the status message covers it
			case !found:
				gone := model.LiveRow{ID: RowID(kind, name), Removed: true}
				plain.Rows = append(plain.Rows, gone)
				withLoad.Rows = append(withLoad.Rows, gone)
			default:
				if !l.readOnly && l.kinds.Tickable(kind) {
					row = page.WithTick(l.cluster, kind, row) // the list's tick column (handlers' list_ticks.go)
				}
				plain.Rows = append(plain.Rows, model.LiveRow{ID: row.ID, Row: row})
				if l.hasMetricsRows(kind) {
					row = l.kinds.Metrics(kind)(row, load)
					withLoad.Rows = append(withLoad.Rows, model.LiveRow{ID: row.ID, Row: row})
				}
			}
		}
		if len(plain.Rows) > 0 {
			msgs = append(msgs, live.Message{Topic: RowsTopic(kind), Event: RowsTopic(kind), Data: mustRender(components.LiveRows(plain))})
			if l.hasMetricsRows(kind) {
				msgs = append(msgs, live.Message{Topic: MetricsRowsTopic(kind), Event: RowsTopic(kind), Data: mustRender(components.LiveRows(withLoad))})
			}
		}
	}
	if kind == kube.CSRApprovalPolicies {
		// A policy changed (or their CRD came or went): the verdicts of the
		// open queue views that show them change with it.
		msgs = append(msgs, l.csrVerdictViewMessages(now)...)
	}
	// The home pages' attention sections that this batch changed (attention.go).
	msgs = append(msgs, l.attentionMessages(now, storms)...)
	return msgs
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
func (l *Updates) StaleBanners() []model.Banner {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.staleBanners()
}

func (l *Updates) staleBanners() []model.Banner {
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

// RowID is a list row's DOM id, as present builds it (model.Row.ID), for an
// object that is gone and has no row to take it from.
func RowID(kind kube.KindID, name string) string { return "row-" + string(kind) + "-" + name }

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
