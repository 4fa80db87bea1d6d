package activity

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/handlers/kinds"
	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/internal/activity"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

// activityLimit bounds the rows of the page; the exports hold every match.
const activityLimit = 500

// activityKinds returns the kinds whose changes the user may see (those they
// may list, as the list pages check) and the titles of the others.
func (h *Handlers) activityKinds(c echo.Context) (map[string]kube.Kind, []string) {
	allowed := map[string]kube.Kind{}
	var hidden []string
	for _, st := range h.d.Cluster.Statuses() {
		if h.d.MayList(c, st.Kind) {
			allowed[string(st.Kind.ID)] = st.Kind
		} else {
			hidden = append(hidden, st.Kind.Title)
		}
	}
	return allowed, hidden
}

// activityEntries is everything the console knows of changes to the allowed
// kinds: the observed watch events and the cached objects' managedFields. It
// also returns which objects the cache holds now, by kind and name.
func (h *Handlers) activityEntries(allowed map[string]kube.Kind, source string) ([]activity.Entry, map[string]map[string]bool) {
	var out []activity.Entry
	if h.d.Store != nil && source != activity.SourceManagedFields {
		out = h.d.Store.Entries()
	}
	cached := map[string]map[string]bool{}
	for id := range allowed {
		names := map[string]bool{}
		for _, o := range h.cachedObjects(kube.KindID(id)) {
			names[o.GetName()] = true
			if source != activity.SourceWatch {
				out = append(out, activity.FromManagedFields(id, o.GetName(), o.GetResourceVersion(), o.GetManagedFields())...)
			}
		}
		cached[id] = names
	}
	return out, cached
}

// cachedObjects lists a kind's objects in the shared cache (none while it is
// not synced or forbidden to the console).
func (h *Handlers) cachedObjects(id kube.KindID) []metav1.Object {
	objs, err := kinds.Objects(h.d.Cluster, id)
	if err != nil {
		return nil
	}
	return objs
}

// activityFormat is the export asked for: the path's extension or ?format=.
func activityFormat(c echo.Context, ext string) string {
	if ext != "" {
		return ext
	}
	switch f := c.QueryParam("format"); f {
	case "csv", "json":
		return f
	}
	return ""
}

func (h *Handlers) activityPage(c echo.Context) error { return h.activity(c, "") }
func (h *Handlers) activityCSV(c echo.Context) error  { return h.activity(c, "csv") }
func (h *Handlers) activityJSON(c echo.Context) error { return h.activity(c, "json") }

// activity serves the activity page, or its CSV or JSON export, filtered by
// the query (kind, who, source, since, until) and by the kinds the user may list.
func (h *Handlers) activity(c echo.Context, ext string) error {
	now := time.Now()
	q, problems := activity.ParseQuery(c.QueryParams(), now)
	allowed, hidden := h.activityKinds(c)
	all, cached := h.activityEntries(allowed, q.Source)
	entries := activity.Filter(all, q, func(kind string) bool {
		_, ok := allowed[kind]
		return ok
	})
	if format := activityFormat(c, ext); format != "" {
		return h.export(c, format, "clusterdesk-activity", entries)
	}

	p := model.ActivityPage{Action: urls.Activity, Who: q.Who, Since: q.SinceText, Until: q.UntilText, Source: q.Source,
		Problems: problems, Total: len(entries), Limit: activityLimit, Hidden: hidden}
	p.Chrome = h.d.Chrome(c, "Activity", "", model.Crumb{Label: "Activity"})
	for _, st := range h.d.Cluster.Statuses() {
		if _, ok := allowed[string(st.Kind.ID)]; ok {
			p.Kinds = append(p.Kinds, model.Option{Value: string(st.Kind.ID), Label: st.Kind.Title, Selected: slices.Contains(q.Kinds, string(st.Kind.ID))})
		}
	}
	p.Sources = []model.Option{
		{Value: "", Label: "Observed and managedFields", Selected: q.Source == ""},
		{Value: activity.SourceWatch, Label: "Observed since start", Selected: q.Source == activity.SourceWatch},
		{Value: activity.SourceManagedFields, Label: "managedFields", Selected: q.Source == activity.SourceManagedFields},
	}
	for i, e := range entries {
		if i == activityLimit {
			break
		}
		p.Rows = append(p.Rows, activityRow(e, allowed, cached[e.Kind][e.Name]))
	}
	p.About = h.activityAbout()
	exports := q.Values()
	p.CSVURL = urls.ActivityCSV + encodeQuery(exports)
	p.JSONURL = urls.ActivityJSON + encodeQuery(exports)
	return page.Render(c, http.StatusOK, pages.Activity(p))
}

func (h *Handlers) activityAbout() model.ActivityAbout {
	if h.d.Store == nil {
		a := present.ActivityAbout(time.Time{}, 0, 0)
		a.ObservingSince = "not observing: only managedFields are shown"
		return a
	}
	s := h.d.Store
	return present.ActivityAbout(s.Started(), s.Capacity(), s.Dropped())
}

// activityRow presents an entry, linking the object while the cache holds it.
func activityRow(e activity.Entry, allowed map[string]kube.Kind, exists bool) model.ActivityRow {
	k := allowed[e.Kind]
	href := ""
	if exists {
		href = urls.Object(k.ID, e.Name)
	}
	return present.ActivityRow(e, k.Singular, href)
}

// history shows one object's observed versions with the diffs between them
// and its current managedFields (/:kind/:name/history, or ?format=csv|json).
func (h *Handlers) history(c echo.Context) error {
	k, err := h.d.Kind(c)
	if err != nil {
		return err
	}
	name := c.Param("name")
	var entries []activity.Entry
	if h.d.Store != nil {
		entries = h.d.Store.History(string(k.ID), name)
	}
	var managed []activity.Entry
	m, objErr := h.d.Cluster.Meta(k.ID, name)
	if objErr == nil {
		managed = activity.Filter(activity.FromManagedFields(string(k.ID), name, m.GetResourceVersion(), m.GetManagedFields()),
			activity.Query{}, func(string) bool { return true })
	}
	if format := activityFormat(c, ""); format != "" {
		return h.export(c, format, "clusterdesk-history-"+string(k.ID)+"-"+name, append(entries, managed...))
	}
	allowed := map[string]kube.Kind{string(k.ID): k}
	p := model.HistoryPage{KindID: string(k.ID), Kind: k.Singular, Name: name, Gone: objErr != nil, About: h.activityAbout()}
	if objErr == nil {
		p.ObjectHref = urls.Object(k.ID, name)
	}
	crumbs := []model.Crumb{{Label: k.Title, Href: urls.List(k.ID)}}
	if p.ObjectHref != "" {
		crumbs = append(crumbs, model.Crumb{Label: name, Href: p.ObjectHref})
	} else {
		crumbs = append(crumbs, model.Crumb{Label: name})
	}
	p.Chrome = h.d.Chrome(c, "History of "+name, k.ID, append(crumbs, model.Crumb{Label: "History"})...)
	for _, e := range entries {
		p.Entries = append(p.Entries, model.HistoryEntry{Row: activityRow(e, allowed, objErr == nil), Diff: present.HistoryDiff(e)})
	}
	for _, e := range managed {
		p.Managed = append(p.Managed, activityRow(e, allowed, true))
	}
	base := urls.History(k.ID, name)
	p.CSVURL, p.JSONURL = base+"?format=csv", base+"?format=json"
	return page.Render(c, http.StatusOK, pages.History(p))
}

// export answers with entries as a CSV or JSON download.
func (h *Handlers) export(c echo.Context, format, basename string, entries []activity.Entry) error {
	stamp := time.Now().UTC().Format("20060102T150405Z")
	res := c.Response()
	var started time.Time
	if h.d.Store != nil {
		started = h.d.Store.Started()
	}
	switch format {
	case "csv":
		res.Header().Set(echo.HeaderContentType, "text/csv; charset=utf-8")
		res.Header().Set(echo.HeaderContentDisposition, fmt.Sprintf(`attachment; filename="%s-%s.csv"`, page.SafeFilename(basename), stamp))
		res.WriteHeader(http.StatusOK)
		return activity.WriteCSV(res, entries)
	default:
		res.Header().Set(echo.HeaderContentType, echo.MIMEApplicationJSONCharsetUTF8)
		res.Header().Set(echo.HeaderContentDisposition, fmt.Sprintf(`attachment; filename="%s-%s.json"`, page.SafeFilename(basename), stamp))
		res.WriteHeader(http.StatusOK)
		return activity.WriteJSON(res, started, entries)
	}
}

func encodeQuery(v url.Values) string {
	if len(v) == 0 {
		return ""
	}
	return "?" + v.Encode()
}
