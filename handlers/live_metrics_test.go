package handlers

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/clusterdesk/clusterdesk/handlers/flowschemas"
	"github.com/clusterdesk/clusterdesk/handlers/kinds"
	"github.com/clusterdesk/clusterdesk/internal/apfload"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/live"
	"github.com/clusterdesk/clusterdesk/internal/live/sseclient"
	"github.com/clusterdesk/clusterdesk/internal/present"
)

// plCluster is a cache holding priority levels.
type plCluster struct {
	*liveCluster
	levels map[string]*flowcontrolv1.PriorityLevelConfiguration
}

func newPLCluster(names ...string) *plCluster {
	c := &plCluster{liveCluster: newLiveCluster(), levels: map[string]*flowcontrolv1.PriorityLevelConfiguration{}}
	for _, n := range names {
		c.levels[n] = &flowcontrolv1.PriorityLevelConfiguration{
			ObjectMeta: metav1.ObjectMeta{Name: n, CreationTimestamp: metav1.Now(), ResourceVersion: "3"},
			Spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementLimited,
				Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{NominalConcurrencyShares: ptr.To[int32](10),
					LimitResponse: flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeReject}}},
		}
	}
	return c
}

func (c *plCluster) PriorityLevel(name string) (*flowcontrolv1.PriorityLevelConfiguration, error) {
	if pl, ok := c.levels[name]; ok {
		return pl, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Group: "flowcontrol.apiserver.k8s.io", Resource: "prioritylevelconfigurations"}, name)
}

func (c *plCluster) PriorityLevels() ([]*flowcontrolv1.PriorityLevelConfiguration, error) {
	var out []*flowcontrolv1.PriorityLevelConfiguration
	for _, pl := range c.levels {
		out = append(out, pl)
	}
	return out, nil
}

// fixedLoad is a sampler that has read /metrics twice.
type fixedLoad struct {
	ld  apfload.Load
	err error
}

func (f fixedLoad) Latest() (apfload.Load, error) { return f.ld, f.err }
func (f fixedLoad) Look() (apfload.Load, error)   { return f.ld, f.err }
func (f fixedLoad) Current(context.Context) (apfload.Load, error) {
	return f.ld, f.err
}
func (f fixedLoad) Interval() time.Duration { return 10 * time.Second }

func rejectingLoad(level string) apfload.Load {
	return apfload.Load{At: time.Now(), Window: 10 * time.Second,
		Levels: map[string]apfload.LevelLoad{level: {HasLimits: true, NominalSeats: 10, ExecutingSeats: 3, Waiting: 7,
			RejectedPerSecond: 35, Rejected: []apfload.ReasonRate{{Reason: "queue-full", PerSecond: 35, Total: 350}}}}}
}

func byTopic(msgs []live.Message) map[string]live.Message {
	out := map[string]live.Message{}
	for _, m := range msgs {
		out[m.Topic] = m
	}
	return out
}

func cellTexts(row *goquery.Selection) []string {
	var out []string
	row.Find("th, td").Each(func(_ int, s *goquery.Selection) { out = append(out, strings.Join(strings.Fields(s.Text()), " ")) })
	return out
}

// A priority level's live row, for a user who may read /metrics, carries the
// load cells of the full list's row; the plain topic's row carries none.
func TestLiveRowsOfPriorityLevelsCarryLoadCells(t *testing.T) {
	cl := newPLCluster("pl-a")
	ld := rejectingLoad("pl-a")
	lv := NewLiveUpdates(cl, nil).WithLoad(fixedLoad{ld: ld})
	msgs := byTopic(lv.Render(kube.PriorityLevels, []string{"pl-a"}, false))

	withLoad, ok := msgs[metricsRowsTopic(kube.PriorityLevels)]
	if !ok || withLoad.Event != rowsTopic(kube.PriorityLevels) {
		t.Fatalf("no load rows message with the rows event: %+v", msgs)
	}
	liveCells := cellTexts(doc(t, withLoad.Data).Find("tr#row-prioritylevels-pl-a"))

	// The full list as the page renders it for the same user and load.
	pl, _ := kinds.Of(kube.PriorityLevels)
	full, err := pl.List(cl, present.ListQuery{}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	flowschemas.PriorityLevelListLoad(cl, kube.PriorityLevels, &full, present.APFLoadState{Allowed: true, Load: &ld, Interval: 10 * time.Second})
	// The list's rows sit behind a tick-box column (list_ticks.go), not one of Columns.
	const tickColumn = 1
	if len(liveCells) != len(full.Columns)+tickColumn {
		t.Fatalf("live row has %d cells %q, the list %d columns", len(liveCells), liveCells, len(full.Columns))
	}
	if got := strings.Join(liveCells[len(liveCells)-3:], "|"); got != "3 / 10|7|rejecting 35/s" {
		t.Errorf("live load cells %q", got)
	}

	plain := cellTexts(doc(t, msgs[rowsTopic(kube.PriorityLevels)].Data).Find("tr#row-prioritylevels-pl-a"))
	if len(plain) != len(full.Columns)+tickColumn-3 || strings.Contains(strings.Join(plain, "|"), "rejecting") {
		t.Errorf("the plain row (for users who may not read /metrics) has load cells: %q", plain)
	}
}

// Before the first read the live row still has the load columns, saying so.
func TestLiveRowsWithoutASampleKeepTheLoadColumns(t *testing.T) {
	cl := newPLCluster("pl-a")
	lv := NewLiveUpdates(cl, nil).WithLoad(fixedLoad{err: apfload.ErrNoSample})
	msgs := byTopic(lv.Render(kube.PriorityLevels, []string{"pl-a", "pl-gone"}, false))
	d := doc(t, msgs[metricsRowsTopic(kube.PriorityLevels)].Data)
	cells := cellTexts(d.Find("tr#row-prioritylevels-pl-a"))
	if got := strings.Join(cells[len(cells)-3:], "|"); got != "…|…|…" {
		t.Errorf("cells without a sample %q", cells)
	}
	if d.Find("tr#row-prioritylevels-pl-gone[data-live-removed]").Length() != 1 {
		t.Errorf("removal missing from the load rows: %s", msgs[metricsRowsTopic(kube.PriorityLevels)].Data)
	}
	// A resync reaches both topics.
	names := make([]string, maxLiveRows+1)
	for i := range names {
		names[i] = "pl-a"
	}
	for _, m := range lv.Render(kube.PriorityLevels, names, false) {
		if m.Event == live.ResyncEvent && m.Topic == metricsRowsTopic(kube.PriorityLevels) {
			return
		}
	}
	t.Error("no resync on the load rows topic")
}

// Without a sampler there is one rows topic, as before.
func TestLiveRowsWithoutSamplerHaveOneTopic(t *testing.T) {
	lv := NewLiveUpdates(newPLCluster("pl-a"), nil)
	if _, ok := byTopic(lv.Render(kube.PriorityLevels, []string{"pl-a"}, false))[metricsRowsTopic(kube.PriorityLevels)]; ok {
		t.Error("load rows without a sampler")
	}
}

// allowURL answers access reviews of non-resource URLs.
type allowURL bool

func (a allowURL) CanURL(context.Context, string, string) (bool, error) { return bool(a), nil }

// The stream carries load cells only to users who may get /metrics: a user
// who may not, asking for the same rows, gets the plain topic.
func TestEventsCarryLoadRowsOnlyToWhoMayReadMetrics(t *testing.T) {
	for _, may := range []bool{true, false} {
		cl := newPLCluster("pl-a")
		ls := &streamServer{streams: live.NewStreams(live.Options{Log: discardLog()})}
		lv := NewLiveUpdates(cl, ls.streams).WithLoad(fixedLoad{ld: rejectingLoad("pl-a")})
		ls.console = newConsole(t, Deps{
			Cluster: cl, Access: allowKinds{"prioritylevelconfigurations": true}, User: "tester", Live: lv,
			APFLoad: fixedLoad{ld: rejectingLoad("pl-a")}, URLAccess: allowURL(may),
		})
		ls.Server = httptest.NewServer(ls.console.e)
		resp := ls.get(t, "/events?kinds=prioritylevels&rows=prioritylevels&since="+ls.streams.Cursor(), nil, ls.session(t))
		r := sseclient.NewReader(resp.Body)
		if hello, err := r.Next(); err != nil || hello.Data != "prioritylevels" {
			t.Fatalf("hello %+v %v", hello, err)
		}
		ls.streams.Publish(lv.Render(kube.PriorityLevels, []string{"pl-a"}, false)...)
		for {
			ev, err := r.Next()
			if err != nil {
				t.Fatal(err)
			}
			if ev.Event != rowsTopic(kube.PriorityLevels) {
				continue
			}
			if got := strings.Contains(ev.Data, "rejecting 35/s"); got != may {
				t.Errorf("may get /metrics %v: row with load cells %v: %s", may, got, ev.Data)
			}
			break
		}
		ls.streams.Close()
		ls.Close()
	}
}
