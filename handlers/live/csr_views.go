package live

import (
	"crypto/sha256"
	"encoding/hex"
	"hash/fnv"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/internal/csrqueue"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/live"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/views/model"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

// Open views of the CSR queue. A queue tab names on its stream the view it
// shows (view=, its tab, filters, sort and page); the tabs showing one view
// share it: per batch of CSR changes each open view's page is computed once
// from the queue's index, compared with the page its tabs show, and the ops
// between the two are rendered once and sent to all of them
// (pages.CSRQueueViewUpdate, applied by web/js/live-csr.js). No tab fetches
// its view again because a row came, went or moved.
//
// What a view shows does not depend on who looks, once they may list CSRs
// (the events handler checks that) — but for the approval policies' verdicts,
// shown only to those who may list the policies: a view with verdicts and
// the same view without are two views (csrViewKey). The rows are rendered with every
// selection box and storm action a user could have, and each page keeps only
// those it offered (replaced rows) or its user may use (new rows, by the
// signers the page says its user may decide for).

// maxCSRViews bounds the distinct views computed per batch: each costs a
// view of the index and the wording of its page's rows per batch. A tab
// beyond it gets the changed rows of the unfiltered queue as before (the
// csrs-rows topic) and fetches its view when it cannot place them.
const maxCSRViews = 128

// CSRViewEvent names the events carrying a view's ops.
const CSRViewEvent = "csrs-view"

// csrView is one open view and the page its tabs show, under Updates.mu.
type csrView struct {
	key   string // csrViewKey: the view's canonical query (csrViewOf), with or without verdicts
	query csrqueue.Query
	// verdicts: the rows carry the approval policies' verdicts (its tabs'
	// users may list the policies).
	verdicts bool
	labels   labels.Selector
	topic    string
	tabs     int
	known    bool // rows and counts are what the tabs show
	rows     []csrqueue.PageRow
	counts   model.CSRViewCounts
	// state is page.CSRViewState(rows), worked out at the first join that
	// asks after the rows changed ("" until then): a view that hundreds of
	// tabs open hashes its rows once, not once per tab under l.mu.
	state string
}

// rowsState is what the view's rows show, as a page names it (shows=).
func (v *csrView) rowsState() string {
	if v.state == "" {
		v.state = page.CSRViewState(v.rows)
	}
	return v.state
}

// csrViewOf reads the view a queue tab names (the query of the page's
// data-live-view). It must be exactly what the page writes for a view it
// serves: parameters the queue knows, each once, in their canonical form,
// the page only past the first, a label selector that parses. Anything else
// (a sort or state the page does not offer, a parameter twice) is refused:
// only views a person can open get computed and kept.
func csrViewOf(s string) (csrqueue.Query, labels.Selector, bool) {
	v, err := url.ParseQuery(s)
	if err != nil {
		return csrqueue.Query{}, nil, false
	}
	q := csrqueue.ParseQuery(v)
	canon := q.Values()
	if q.Page > 1 {
		canon.Set("page", strconv.Itoa(q.Page))
	}
	if canon.Encode() != v.Encode() || canon.Encode() != s {
		return csrqueue.Query{}, nil, false
	}
	sel, err := page.ParseSelector(q.Selector)
	if err != nil {
		return csrqueue.Query{}, nil, false
	}
	return q, sel, true
}

// csrViewKey names the view of the canonical query view, shown with the
// policies' verdicts or without: users who may not list the policies never
// share a topic with those who may.
func csrViewKey(view string, verdicts bool) string {
	if verdicts {
		return view + "\n+verdicts"
	}
	return view
}

// csrViewTopic is the topic of a view's ops: named by a hash of the view, so
// a topic says nothing of the filters typed.
func csrViewTopic(key string) string {
	h := sha256.Sum256([]byte(key))
	return RowsTopic(kube.CSRs) + "-view-" + hex.EncodeToString(h[:8])
}

// openCSRView opens (or joins) the view key for one tab: its topic, and the
// release the tab's stream calls when it ends. ok is false when maxCSRViews
// other views are open. shows is what the tab's page shows (its rows'
// page.CSRViewState; "" for unknown); current reports whether the view's
// rows, from which its ops start, are exactly those.
func (l *Updates) openCSRView(view string, q csrqueue.Query, sel labels.Selector, verdicts bool, shows string) (topic string, release func(), current, ok bool) {
	key := csrViewKey(view, verdicts)
	l.mu.Lock()
	defer l.mu.Unlock()
	v := l.csrViews[key]
	if v == nil {
		if len(l.csrViews) >= maxCSRViews {
			return "", nil, false, false
		}
		if l.csrViews == nil {
			l.csrViews = map[string]*csrView{}
		}
		v = &csrView{key: key, query: q, labels: sel, topic: csrViewTopic(key), verdicts: verdicts}
		// The page the tab was rendered with is as of its cursor; a batch
		// published since makes the stream resync the tab (the csrs-rows
		// topic), so this page is the one the tab shows from then on. But
		// it is computed from the cache now, which may hold a change not
		// yet published (the hub's batch waits or is being rendered): the
		// page lacks it, the view's ops start past it, and no cursor tells.
		// Hence current: the events handler resyncs a tab whose page is
		// not the view's.
		l.csrViewUpdate(v, l.now(), false)
		l.csrViews[key] = v
	}
	v.tabs++
	current = shows == "" || (v.known && v.rowsState() == shows)
	return v.topic, func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if v.tabs--; v.tabs == 0 && l.csrViews[key] == v {
			delete(l.csrViews, key)
		}
	}, current, true
}

// CSRViews is how many views of the CSR queue are open (the console's tests
// check that a refused view is not kept).
func (l *Updates) CSRViews() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.csrViews)
}

// csrViewMessages are the ops of every open view for one batch of CSR
// changes; resync (after a lost watch, or a batch too large to send as rows)
// tells every view's tabs to fetch their view instead.
func (l *Updates) csrViewMessages(now time.Time, resync bool) []live.Message {
	keys := make([]string, 0, len(l.csrViews))
	for k := range l.csrViews {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var msgs []live.Message
	for _, k := range keys {
		v := l.csrViews[k]
		if resync {
			l.csrViewUpdate(v, now, false)
			msgs = append(msgs, live.Message{Topic: v.topic, Event: live.ResyncEvent, Data: []byte(RowsTopic(kube.CSRs))})
			continue
		}
		if m, ok := l.csrViewUpdate(v, now, true); ok {
			msgs = append(msgs, m)
		}
	}
	return msgs
}

// csrVerdictViewMessages are the ops of every open view that shows the
// policies' verdicts after a change of the policies: each view is computed
// once, whatever its number of tabs, and its rows whose verdicts changed are
// sent as replaced rows (page.CSRRowStamp covers the verdicts). Views without
// verdicts do not change.
func (l *Updates) csrVerdictViewMessages(now time.Time) []live.Message {
	keys := make([]string, 0, len(l.csrViews))
	for k, v := range l.csrViews {
		if v.verdicts {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var msgs []live.Message
	for _, k := range keys {
		if m, ok := l.csrViewUpdate(l.csrViews[k], now, true); ok {
			msgs = append(msgs, m)
		}
	}
	return msgs
}

// csrViewUpdate computes v's page now and, when send is set and something
// its tabs show changed, the message that tells them what. v then holds the
// page now.
func (l *Updates) csrViewUpdate(v *csrView, now time.Time, send bool) (live.Message, bool) {
	env := present.CSRQueueEnv{Now: now}
	if pol := l.csrQueue.Policies(); v.verdicts && pol != nil && pol.Err == nil {
		// Shared by every tab of the view, whose users may all list the
		// policies (csrViewKey).
		env.Policies = pol
	}
	if !l.readOnly {
		// Every box and action a user could have: each page keeps its own.
		env.MayDecide = func(string) bool { return true }
		env.MayDelete = true
	}
	res, err := l.csrQueue.Run(v.query, csrqueue.Env{Now: now, Words: present.CSRQueueWords{}, MayDecide: env.MayDecide,
		Labels: v.labels, Policies: env.Policies})
	if err != nil {
		v.known = false // not synced or not readable: the tabs fetch it once it is
		return live.Message{}, false
	}
	p := present.CSRQueueOf(res, v.query, env)
	after := page.CSRPageRows(res.Items, p.Rows)
	signers := make(map[string]string, len(p.Rows))
	for i, r := range p.Rows {
		signers[r.ID] = res.Items[i].CSR.Spec.SignerName
	}
	counts := model.CSRViewCounts{Tabs: p.Tabs, Matched: p.Matched, Total: p.Total, Pager: p.Pager}
	u := model.CSRViewUpdate{Columns: p.Columns, Hash: CSRPageHash(after)}
	switch {
	case !send:
	case !v.known || (len(v.rows) == 0) != (len(after) == 0):
		// The server renders an empty view's state, and the queue was not
		// readable before: the tabs fetch the view.
		u.Refetch = true
	default:
		ops := csrqueue.DiffPage(v.rows, after)
		changed := !reflect.DeepEqual(counts, v.counts)
		u.PagerChanged = !reflect.DeepEqual(counts.Pager, v.counts.Pager)
		if len(ops) == 0 && !changed {
			send = false
			break
		}
		at := make(map[string]int, len(p.Rows))
		for i, r := range p.Rows {
			at[r.ID] = i
		}
		for _, op := range ops {
			o := model.CSRViewOp{Op: string(op.Kind), Key: op.Key, After: op.After}
			if op.Content {
				u.Rows = append(u.Rows, p.Rows[at[op.Key]])
				o.Signer = signers[op.Key]
			}
			u.Ops = append(u.Ops, o)
		}
		if changed {
			u.Counts = &counts
		}
	}
	v.known, v.rows, v.counts, v.state = true, after, counts, ""
	if !send {
		return live.Message{}, false
	}
	// Deflated once for every tab of the view (page.DeflateCSRView).
	return live.Message{Topic: v.topic, Event: CSRViewEvent, Data: page.DeflateCSRView(mustRender(pages.CSRQueueViewUpdate(u)))}, true
}

// CSRPageHash names a page's row keys in order, as live-csr.js computes it
// over its table: FNV-1a (32 bits) of each key followed by a line feed, over
// the keys' UTF-8 bytes (row ids are ASCII: names and storm IDs).
func CSRPageHash(rows []csrqueue.PageRow) string {
	h := fnv.New32a()
	for _, r := range rows {
		h.Write([]byte(r.Key))
		h.Write([]byte{'\n'})
	}
	return strconv.FormatUint(uint64(h.Sum32()), 16)
}
