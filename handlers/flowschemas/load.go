package flowschemas

import (
	"context"
	"net/http"
	"slices"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/internal/apfload"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/views/components"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// apfLoadWait bounds how long the load fragment of a page waits for the
// sampler's first read of /metrics after a quiet spell. Pages themselves
// never wait: they render without load and fetch it (components.LoadFollow).
const apfLoadWait = 3 * time.Second

// MetricsShown reports whether the signed-in user sees what the API server's
// /metrics say: the console runs a sampler and the user may get /metrics
// (though the console's own identity reads it: one shared sampler). A failed
// access review is returned as err. The live updates ask it too, for the load
// cells of live rows.
func (h *Handlers) MetricsShown(ctx context.Context) (shown bool, err error) {
	if h.d.APFLoad == nil || h.d.URLAccess == nil {
		return false, nil
	}
	return h.d.URLAccess.CanURL(ctx, "get", kube.APIServerMetricsPath)
}

// Load is the live APF load for the signed-in user: shown only to who may
// get /metrics. ok is false when the console runs without a sampler. A page
// takes the latest sample at once; before the first one (the sampler was
// idle, the look starts it) the state says so and names the page's own URL
// to fetch again with components.LoadWaitHeader, which waits for the read.
// Every page with load or webhook health reads it here: the overview and the
// classifier, the lists of priority levels and webhooks, their detail pages.
func (h *Handlers) Load(c echo.Context) (state present.APFLoadState, ok bool) {
	if h.d.APFLoad == nil || h.d.URLAccess == nil {
		return present.APFLoadState{}, false
	}
	ctx := c.Request().Context()
	allowed, err := h.MetricsShown(ctx)
	if err != nil {
		return present.APFLoadState{Err: err}, true
	}
	if !allowed {
		return present.APFLoadState{Forbidden: true}, true
	}
	return h.readLoad(c), true
}

// readLoad is the shared sampler's load for this request, without the
// /metrics check: the caller has checked the user's right to what it shows.
func (h *Handlers) readLoad(c echo.Context) present.APFLoadState {
	var (
		ld  apfload.Load
		err error
	)
	ctx := c.Request().Context()
	waited := c.Request().Header.Get(components.LoadWaitHeader) == "wait"
	if waited {
		ctx, cancel := context.WithTimeout(ctx, apfLoadWait)
		defer cancel()
		ld, err = h.d.APFLoad.Current(ctx)
	} else {
		ld, err = h.d.APFLoad.Look()
	}
	state := present.APFLoadState{Err: err, Interval: h.d.APFLoad.Interval(), Allowed: true}
	if err == nil {
		state.Load = &ld
	}
	if state.Pending() && !waited && c.Request().Method == http.MethodGet {
		state.Follow = c.Request().URL.RequestURI()
	}
	return state
}

// AddDetailLoad puts the live load first among a priority level's or a
// FlowSchema's sections (the kind registry's detail metrics of both kinds).
func (h *Handlers) AddDetailLoad(c echo.Context, id kube.KindID, name string, page *model.DetailPage) {
	st, ok := h.Load(c)
	if !ok {
		return
	}
	banner := st.LoadBanner()
	sec := model.Section{Title: "Live load (one API server instance)", TestID: "apf-load",
		Fields: []model.Field{{Label: banner.Title, Value: banner.Message}}}
	switch {
	case st.Load != nil && id == kube.PriorityLevels:
		sec = present.PriorityLevelLoadSection(name, st.Load)
		sec.Fields = append(sec.Fields, model.Field{Label: "Source", Value: banner.Message})
	case st.Load != nil:
		sec = present.FlowSchemaLoadSection(name, st.Load)
		sec.Fields = append(sec.Fields, model.Field{Label: "Source", Value: banner.Message})
	}
	sec.Follow = st.Follow
	page.Sections = slices.Insert(page.Sections, 0, sec)
	if id == kube.PriorityLevels {
		page.Sections = slices.Insert(page.Sections, 1, h.priorityLevelDump(c, name, st))
	}
}

// priorityLevelDump is the level's row of the API server's debug dump, read
// by the shared sampler with /metrics, shown to who may get the dump's URL
// (checked like /metrics, by access review), whether or not they may get
// /metrics: a dump reader without that right still sees the dump.
func (h *Handlers) priorityLevelDump(c echo.Context, name string, st present.APFLoadState) model.Section {
	may, err := h.d.URLAccess.CanURL(c.Request().Context(), "get", kube.APIServerPriorityLevelDumpPath)
	if err != nil {
		return model.Section{Title: "Queues (API server debug dump, one instance)", TestID: "apf-dump",
			Fields: []model.Field{{Label: "Unavailable", Value: "the access review failed: " + err.Error()}}}
	}
	if may && st.Forbidden {
		st = h.readLoad(c)
	}
	return present.PriorityLevelDumpSection(name, st, may, kube.APIServerPriorityLevelDumpPath)
}
