package live

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/internal/auth"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/live"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/layout"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// SessionEndedEvent tells the page its session is over; it shows the banner it
// carries and stops reconnecting.
const SessionEndedEvent = "session-expired"

// events serves GET /events?kinds=a,b&rows=a&since=cursor: counts and status for
// the kinds, changed rows for the rows kinds, each only if the user may list the
// kind. The session middleware has run; this route has no gzip or timeout
// middleware, and the server no WriteTimeout.
func (h *Handlers) events(c echo.Context) error {
	lv := h.d.Updates
	if lv == nil {
		return echo.NewHTTPError(http.StatusServiceUnavailable, "Live updates are off in this console.")
	}
	r := c.Request()
	if !sameOrigin(r) {
		return echo.NewHTTPError(http.StatusForbidden, "The event stream serves clusterdesk's own pages only.")
	}
	// The idle clock as this request found it, not refreshed: an open tab is not
	// activity, so the session still ends after the idle timeout, and the stream
	// with it (the reconnect then finds the session over).
	sess, err := h.streamSession(r)
	if err != nil {
		return SessionEnded(c, err, h.d.Gate.Mode)
	}
	until := sess.LastSeen.Add(h.d.Sessions.Idle)
	if end := sess.IssuedAt.Add(h.d.Sessions.Absolute); end.Before(until) {
		until = end
	}

	// What the stream holds open (a queue view, an attention section) is
	// released when it ends (Subscription.Done): Serve may return before, an
	// HTTP/1.1 stream being served by a goroutine of its own.
	var releases []func()
	served := false
	defer func() {
		if !served {
			for _, release := range releases {
				release()
			}
		}
	}()
	q := r.URL.Query()
	rowsWanted := kindList(q.Get("rows"))
	var granted []kube.Kind
	for _, id := range kindList(q.Get("kinds")) {
		k, ok := h.d.Cluster.Kind(id)
		if ok && !slices.ContainsFunc(granted, func(g kube.Kind) bool { return g.ID == id }) && h.d.MayList(c, k) {
			granted = append(granted, k)
		}
	}
	// A queue tab names its view: it then receives that view's ops instead of
	// the changed rows of the unfiltered queue (csr_views.go).
	viewTopic, viewCurrent := "", true
	if q.Has("view") {
		cq, sel, ok := csrViewOf(q.Get("view"))
		if !ok {
			return echo.NewHTTPError(http.StatusBadRequest, "The event stream serves the views the queue's page offers only.")
		}
		if !slices.Contains(rowsWanted, kube.CSRs) || !slices.ContainsFunc(granted, func(g kube.Kind) bool { return g.ID == kube.CSRs }) {
			return echo.NewHTTPError(http.StatusForbidden, "A view of the CertificateSigningRequest queue needs the right to list them.")
		}
		// A reconnecting tab (Last-Event-ID) has applied ops since its page
		// was rendered: what the page showed says nothing of it.
		shows := ""
		if r.Header.Get("Last-Event-ID") == "" {
			shows = q.Get("shows")
		}
		if topic, release, current, ok := lv.openCSRView(q.Get("view"), cq, sel, h.mayListPolicies(c), shows); ok {
			releases = append(releases, release)
			viewTopic, viewCurrent = topic, current
		}
	}
	var names []string
	// The rows topics' kinds, for a detail page's question when its stream
	// joins: does the page show what the cache holds (Subscription.Shown)?
	shownTopics := map[string]kube.KindID{}
	metrics := false // the stream carries what the API server's /metrics say (load cells, attention)
	sub := live.Subscription{Topics: []string{StatusTopic}, Until: until}
	// A home tab receives its attention section, rendered for its user's
	// access (attention.go); the stream's checks below hold that access.
	attentionRBAC := false
	if q.Get("attention") == "1" {
		acc := h.liveAttentionAccess(c, granted)
		if topic, release, ok := lv.OpenAttention(acc); ok {
			releases = append(releases, release)
			sub.Topics = append(sub.Topics, topic)
			attentionRBAC = acc.RBAC
			metrics = metrics || acc.Load
		}
	}
	for _, k := range granted {
		names = append(names, string(k.ID))
		sub.Topics = append(sub.Topics, countTopic(k.ID))
		if slices.Contains(rowsWanted, k.ID) {
			// A user who may read /metrics sees load columns in the list
			// (Kinds.Metrics): the rows that replace its rows carry them.
			topic := RowsTopic(k.ID)
			if k.ID == kube.CSRs && viewTopic != "" {
				// Any CSR batch since the page's cursor resyncs it as before.
				sub.Topics = append(sub.Topics, viewTopic)
				sub.Resync = append(sub.Resync, topic)
				continue
			}
			if lv.hasMetricsRows(k.ID) {
				if shown, err := h.d.MetricsShown(r.Context()); shown && err == nil {
					topic, metrics = MetricsRowsTopic(k.ID), true
				}
			}
			sub.Topics = append(sub.Topics, topic)
			sub.Resync = append(sub.Resync, topic)
			shownTopics[topic] = k.ID
		}
	}
	if q.Has("job") {
		topic, err := h.jobTopic(c, q.Get("job"))
		if err != nil {
			return err
		}
		sub.Topics = append(sub.Topics, topic)
	}
	sub.Hello = strings.Join(names, ",")
	if obj, rv := q.Get("object"), q.Get("rv"); obj != "" && rv != "" {
		sub.Shown = func(topic string) bool {
			kind, ok := shownTopics[topic]
			return ok && h.objectShownIsCached(kind, obj, rv)
		}
	}
	sub.Since = r.Header.Get("Last-Event-ID")
	if sub.Since == "" {
		sub.Since = q.Get("since")
	}
	if !viewCurrent {
		// The queue page's rows are not its view's (openCSRView): its
		// cursor cannot say what the tab lacks, so the stream resyncs it.
		sub.Since = ""
	}
	sub.Check = func(ctx context.Context) bool {
		return !h.revoked(sess) && h.stillMayList(ctx, granted) && (!metrics || h.stillMayReadMetrics(ctx)) &&
			(!attentionRBAC || h.stillMayReadRBAC(ctx))
	}
	// Logout ends the session's streams (streamOwner, signout.go). The limit
	// counts the user's streams, not the session's: in proxy mode every
	// request is a session of its own, and in the others a person (or a
	// stolen token) can sign in again and again. One tab over it is told why.
	sub.Owner = streamOwner(sess)
	if id, ok := kube.IdentityFrom(r.Context()); ok {
		sub.User = id.User
	}
	sub.Refusal = tooManyStreamsReply()
	sub.Busy = replicaFullReply()
	sub.Done = func() {
		for _, release := range releases {
			release()
		}
	}
	served = true
	lv.streams.Serve(c.Response(), r, sub)
	return nil
}

// streamSession is the session an event stream lives by, its idle clock not
// refreshed. Proxy mode has no session cookie: the proxy vouches for every
// request, so the stream gets one idle period and its reconnect is
// authenticated through the proxy again.
func (h *Handlers) streamSession(r *http.Request) (auth.Session, error) {
	if h.d.Gate.Mode != auth.ModeProxy {
		return h.d.Sessions.CheckQuiet(r)
	}
	id, ok := kube.IdentityFrom(r.Context())
	if !ok {
		return auth.Session{}, auth.ErrUntrusted
	}
	now := time.Now()
	return auth.Session{User: id.User, IssuedAt: now, LastSeen: now}, nil
}

// objectShownIsCached reports whether a detail page (its object and the
// resourceVersion it was rendered with, from Chrome) shows exactly what this
// process's cache holds. Such a page needs no resync, whatever its cursor: a
// cursor of another replica (the page rendered there, or its stream's replica
// died) would otherwise tell every detail page "may be out of date" on most
// loads behind a round-robin balancer. resourceVersions are compared for
// equality only, which the API conventions allow (they are opaque otherwise;
// community/contributors/devel/sig-architecture/api-conventions.md,
// "Concurrency Control and Consistency"). A cache that is behind or ahead
// differs, and the page is told to resync as before.
func (h *Handlers) objectShownIsCached(kind kube.KindID, name, rv string) bool {
	if name == "" || rv == "" {
		return false
	}
	m, err := h.d.Cluster.Meta(kind, name)
	return err == nil && m.GetResourceVersion() == rv
}

// mayListPolicies says whether the user may list the CSR approval policies,
// and so see their verdicts in the queue (as handlers/csrs decides for the
// page).
func (h *Handlers) mayListPolicies(c echo.Context) bool {
	gr := kube.CSRApprovalPolicyResource.GroupResource()
	ok, err := h.d.Access.Can(c.Request().Context(), "list", gr.Group, gr.Resource, "", "")
	return err == nil && ok
}

// stillMayList re-checks, for a connection being served, the user's right to
// list each kind it receives. A failed access review does not end the stream
// (as Deps.MayList does not hide pages): the API server may just be down.
func (h *Handlers) stillMayList(ctx context.Context, kinds []kube.Kind) bool {
	for _, k := range kinds {
		ok, err := h.d.Access.Can(ctx, "list", k.Group, k.Resource, "", "")
		if (err == nil && !ok) || (err != nil && !h.d.ReviewFailureShowsCache()) {
			return false
		}
	}
	return true
}

// stillMayReadMetrics re-checks, for a connection that carries load cells,
// the user's right to get /metrics; a failed review ends it, to reconnect
// with what the user may see.
func (h *Handlers) stillMayReadMetrics(ctx context.Context) bool {
	shown, err := h.d.MetricsShown(ctx)
	return shown && err == nil
}

// kindList splits "csrs,crds" (ignoring blanks); unknown ids are dropped later.
func kindList(s string) []kube.KindID {
	var out []kube.KindID
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, kube.KindID(f))
		}
	}
	return out
}

// sameOrigin refuses event-stream requests from other sites. Browsers send
// Origin on cross-origin EventSource requests (not on same-origin GETs) and
// Sec-Fetch-Site on all of them. (The session cookie is SameSite=Strict as well.)
func sameOrigin(r *http.Request) bool {
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || u.Host != r.Host {
			return false
		}
	}
	switch r.Header.Get("Sec-Fetch-Site") {
	case "", "same-origin", "none":
		return true
	}
	return false
}

// WantsEventStream reports an EventSource request (it asks for text/event-stream):
// the identity middleware answers it with SessionEnded.
func WantsEventStream(r *http.Request) bool {
	return r.URL.Path == urls.Events && strings.Contains(r.Header.Get("Accept"), "text/event-stream")
}

// SessionEnded answers an EventSource request that has no valid session. An error
// status would make EventSource give up without the page knowing why; a short
// stream with a named event lets the page tell the user to sign in again.
func SessionEnded(c echo.Context, err error, mode auth.Mode) error {
	msg := "Live updates have stopped. Open the one-time login URL that clusterdesk printed in its terminal to sign in again."
	switch mode {
	case auth.ModeToken:
		msg = "Live updates have stopped. Reload the page to sign in again with a token."
	case auth.ModeProxy:
		msg = "Live updates have stopped. Reload the page to sign in again through the proxy."
	case auth.ModeOIDC:
		msg = "Live updates have stopped. Reload the page to sign in again."
	}
	title := "Signed out"
	if errors.Is(err, auth.ErrExpired) {
		title = "Your session has expired"
	}
	// A session signed out (its cookie copied, or a tab reconnecting) gets a
	// 401 like every page: its open tabs were told at logout (EndSessionStreams). An
	// expired one gets 200, so that EventSource reads the event and the page
	// says why its updates stopped.
	status := http.StatusOK
	if errors.Is(err, auth.ErrSignedOut) {
		status = http.StatusUnauthorized
	}
	return live.ReplyStatus(c.Response(), status, sessionEndedMessage(title, msg))
}

// sessionEndedMessage is the session-expired event carrying a banner.
func sessionEndedMessage(title, msg string) live.Message {
	banner := model.Banner{Tone: model.ToneWarning, Title: title, Message: msg, TestID: "banner-session-expired"}
	return live.Message{
		Topic: StatusTopic, Event: SessionEndedEvent, Data: mustRender(layout.LiveStatus([]model.Banner{banner})),
	}
}

// TooManyStreamsEvent tells a tab that it gets no live updates: its user
// already has live.DefaultMaxPerUser tabs receiving them from this replica, or
// the replica serves as many streams as it may (--max-streams).
const TooManyStreamsEvent = "too-many-streams"

// tooManyStreamsReply and replicaFullReply are rendered once: every stream
// holds its refusals for as long as it lasts (Subscription), and a rendering
// per stream was some 2 KiB of each one's memory. Reply only reads them.
var (
	tooManyStreamsReply = sync.OnceValue(func() []live.Message { return []live.Message{tooManyStreams()} })
	replicaFullReply    = sync.OnceValue(func() []live.Message { return []live.Message{replicaFull()} })
)

func tooManyStreams() live.Message {
	return tooManyStreamsMessage("Too many open tabs", fmt.Sprintf(
		"Live updates are off in this tab: %d other clusterdesk tabs signed in as you (in this browser or others) receive them already. "+
			"Close the tabs you no longer need, then reload this one. The page itself is current as of its loading.", live.DefaultMaxPerUser))
}

// replicaFull is the refusal of a stream over the replica's limit, which
// closing one's own tabs may not help: reloading later, or reaching another
// replica, does.
func replicaFull() live.Message {
	return tooManyStreamsMessage("Live updates are busy",
		"Live updates are off in this tab: this clusterdesk server holds as many live connections as it may. "+
			"Reload the page in a while to try again. The page itself is current as of its loading.")
}

func tooManyStreamsMessage(title, msg string) live.Message {
	banner := model.Banner{Tone: model.ToneWarning, Title: title, Message: msg, TestID: "banner-too-many-streams"}
	return live.Message{Topic: StatusTopic, Event: TooManyStreamsEvent, Data: mustRender(layout.LiveStatus([]model.Banner{banner}))}
}

// Chrome is the layout's live-update settings for a page about kind active
// (and, on a detail page, the object named in the path).
//
// It is read once per request: a detail page calls the chrome before it reads
// its object (MarkLive), so the cursor and the version it records are from
// before what the page shows. Read after (as they were), a change that
// reached the cache while the page was built left the page showing the old
// object under the new version: the stream then saw "the page shows what
// the cache holds", sent no resync, and the change, published before the
// stream connected, never reached the page (an approved CSR's page stayed
// "Pending" after the approve form's redirect when the watch event came in
// those milliseconds). Read before, such a change makes the versions differ,
// and the page resyncs.
func (h *Handlers) Chrome(c echo.Context, active kube.KindID) model.Live {
	lv := h.d.Updates
	if lv == nil {
		return model.Live{}
	}
	if l, ok := c.Get(liveChromeKey).(model.Live); ok && l.Rows == string(active) {
		return l
	}
	l := h.readLiveChrome(c, active)
	c.Set(liveChromeKey, l)
	return l
}

// liveChromeKey keeps a request's live settings (Chrome) in its context.
const liveChromeKey = "clusterdesk.liveChrome"

// MarkLive reads the live settings of a page about kind active now, before
// the page reads the cache: the chrome built later gets these (Chrome).
func (h *Handlers) MarkLive(c echo.Context, active kube.KindID) { h.Chrome(c, active) }

func (h *Handlers) readLiveChrome(c echo.Context, active kube.KindID) model.Live {
	lv := h.d.Updates
	// The cursor is read before the page reads the cache: a change after it
	// reaches the page as an event, or as a resync on connect.
	l := model.Live{Rows: string(active), Status: lv.StaleBanners()}
	for _, st := range h.d.Cluster.Statuses() {
		l.Kinds = append(l.Kinds, string(st.Kind.ID))
	}
	v := url.Values{"kinds": {strings.Join(l.Kinds, ",")}, "since": {lv.streams.Cursor()}}
	if active != "" {
		v.Set("rows", string(active))
		if name := c.Param("name"); name != "" && c.Request().Method == http.MethodGet {
			l.Object = RowID(active, name)
			l.Reload = c.Request().URL.RequestURI()
			// The version shown, read after the cursor like the page's own read:
			// a stream on another replica resyncs the page only if its cache
			// holds another version (objectShownIsCached).
			if m, err := h.d.Cluster.Meta(active, name); err == nil && m.GetResourceVersion() != "" {
				v.Set("object", name)
				v.Set("rv", m.GetResourceVersion())
			}
		}
	}
	l.URL = urls.WithQuery(urls.Events, v)
	return l
}
