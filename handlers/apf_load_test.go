package handlers

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/clusterdesk/clusterdesk/internal/apfload"
	"github.com/clusterdesk/clusterdesk/internal/testwait"
	"github.com/clusterdesk/clusterdesk/views/components"
)

// gatedMetrics is a /metrics source that answers only when its gate opens.
type gatedMetrics struct {
	entered chan struct{} // closed when the first read starts
	gate    chan struct{} // closed to let reads answer
}

func (g *gatedMetrics) fetch(ctx context.Context) (io.ReadCloser, error) {
	select {
	case <-g.entered:
	default:
		close(g.entered)
	}
	select {
	case <-g.gate:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return io.NopCloser(strings.NewReader(`# TYPE apiserver_flowcontrol_nominal_limit_seats gauge
apiserver_flowcontrol_nominal_limit_seats{priority_level="pl-a"} 10
# TYPE apiserver_flowcontrol_current_executing_seats gauge
apiserver_flowcontrol_current_executing_seats{flow_schema="fs-a",priority_level="pl-a"} 3
`)), nil
}

// A page opened while the sampler is idle does not wait for its read of
// /metrics: it answers while the read is held, says sampling started, and
// names the fragment that waits; that fragment then has the load.
func TestColdSamplerDoesNotHoldThePage(t *testing.T) {
	g := &gatedMetrics{entered: make(chan struct{}), gate: make(chan struct{})}
	sampler := apfload.New(g.fetch, apfload.Options{})
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	go sampler.Run(ctx)

	cl := newPLCluster("pl-a")
	ls := &streamServer{console: newConsole(t, Deps{
		Cluster: cl, Access: allowKinds{"prioritylevelconfigurations": true}, User: "tester",
		APFLoad: sampler, URLAccess: allowURL(true),
	})}
	ls.Server = httptest.NewServer(ls.console.e)
	defer ls.Close()
	sess := ls.session(t)

	get := func(header http.Header) (int, *goquery.Document) {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, ls.URL+"/prioritylevels", nil)
		req.AddCookie(sess)
		for k, v := range header {
			req.Header[k] = v
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		d, err := goquery.NewDocumentFromReader(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, d
	}

	// The gate stays shut until the page has answered: a page that waited
	// for the read would never answer.
	code, d := get(nil)
	testwait.Closed(t, g.entered, testwait.Within, "the look to start the sampler")
	if code != http.StatusOK {
		t.Fatalf("status %d", code)
	}
	if b := d.Find(`[data-testid="apf-load-pending"]`).Text(); !strings.Contains(b, "started reading") || !strings.Contains(b, "reload") {
		t.Errorf("pending banner %q", strings.Join(strings.Fields(b), " "))
	}
	follow := d.Find(`#list-table [data-testid="load-follow"]`)
	if href, _ := follow.Attr("hx-get"); href != "/prioritylevels" || follow.AttrOr("hx-trigger", "") != "load" ||
		!strings.Contains(follow.AttrOr("hx-headers", ""), components.LoadWaitHeader) {
		t.Errorf("no load fragment to follow: %s", goquery.NewDocumentFromNode(follow.Nodes[0]).Text())
	}
	if cells := cellTexts(d.Find("#row-prioritylevels-pl-a")); strings.Join(cells[len(cells)-3:], "|") != "…|…|…" {
		t.Errorf("row before the read %q", cells)
	}

	close(g.gate)
	code, d = get(http.Header{"Hx-Request": {"true"}, components.LoadWaitHeader: {"wait"}})
	if code != http.StatusOK {
		t.Fatalf("fragment status %d", code)
	}
	if cells := cellTexts(d.Find("#row-prioritylevels-pl-a")); strings.Join(cells[len(cells)-3:], "|") != "3 / 10|0|…" {
		t.Errorf("row in the fragment %q", cells)
	}
	if d.Find(`[data-testid="load-follow"]`).Length() != 0 || d.Find(`[data-testid="apf-load-pending"]`).Length() != 0 {
		t.Error("the fragment still waits for the load")
	}
}
