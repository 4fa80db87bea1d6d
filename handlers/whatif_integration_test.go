//go:build integration

package handlers

import (
	"context"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	authorizationv1 "k8s.io/api/authorization/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/ledger"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
	"github.com/clusterdesk/clusterdesk/internal/urls"
)

// whatIfFixture is a FlowSchema sending one user's requests to a priority
// level of the test's own with a few seats (shares 1, nothing lent or
// borrowed), and a ledger whose recorded traffic is that user flooding it
// (written directly: deterministic numbers), beside a quiet user.
type whatIfFixture struct {
	store   *countingTraffic
	name    string // the FlowSchema's and the small level's; the flooder is name+"-flooder"
	flooder string
	admin   kubernetes.Interface
}

// countingTraffic is the test's ledger, counting the reads of the
// recorded traffic: the attack test's witness that none happened.
type countingTraffic struct {
	ledger.Store
	ts           ledger.TrafficStore
	scans, stats atomic.Int64
}

func (c *countingTraffic) AppendTraffic(ctx context.Context, b []ledger.TrafficBucket) error {
	return c.ts.AppendTraffic(ctx, b)
}

func (c *countingTraffic) ScanTraffic(ctx context.Context, q ledger.TrafficQuery, each func(*ledger.TrafficBucket) error) error {
	c.scans.Add(1)
	return c.ts.ScanTraffic(ctx, q, each)
}

func (c *countingTraffic) PackTraffic(ctx context.Context, before time.Time) (int64, error) {
	return c.ts.PackTraffic(ctx, before)
}

func (c *countingTraffic) CoarsenTraffic(ctx context.Context, before time.Time) (int64, error) {
	return c.ts.CoarsenTraffic(ctx, before)
}

func (c *countingTraffic) PruneTraffic(ctx context.Context, before time.Time) (int64, error) {
	return c.ts.PruneTraffic(ctx, before)
}

func (c *countingTraffic) TrafficStats(ctx context.Context) (ledger.TrafficStats, error) {
	c.stats.Add(1)
	return c.ts.TrafficStats(ctx)
}

// TrafficRejections counts as a stats read: the recorded incidents.
func (c *countingTraffic) TrafficRejections(ctx context.Context, since time.Time) ([]ledger.MinuteRejections, error) {
	c.stats.Add(1)
	return c.ts.TrafficRejections(ctx, since)
}

func whatIfLevel(name string, shares int32) *flowcontrolv1.PriorityLevelConfiguration {
	return &flowcontrolv1.PriorityLevelConfiguration{
		TypeMeta:   metav1.TypeMeta{APIVersion: "flowcontrol.apiserver.k8s.io/v1", Kind: "PriorityLevelConfiguration"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementLimited,
			Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{NominalConcurrencyShares: ptr.To(shares),
				LendablePercent: ptr.To[int32](0), BorrowingLimitPercent: ptr.To[int32](0),
				LimitResponse: flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeQueue,
					Queuing: &flowcontrolv1.QueuingConfiguration{Queues: 4, HandSize: 2, QueueLengthLimit: 2}}}}}
}

func whatIfSchema(name, user, level string) *flowcontrolv1.FlowSchema {
	return &flowcontrolv1.FlowSchema{
		TypeMeta:   metav1.TypeMeta{APIVersion: "flowcontrol.apiserver.k8s.io/v1", Kind: "FlowSchema"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: flowcontrolv1.FlowSchemaSpec{
			PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: level},
			MatchingPrecedence:         500,
			DistinguisherMethod:        &flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodByUserType},
			Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
				Subjects: []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: user}}},
				ResourceRules: []flowcontrolv1.ResourcePolicyRule{{Verbs: []string{"*"}, APIGroups: []string{"*"},
					Resources: []string{"*"}, Namespaces: []string{"*"}, ClusterScope: true}},
			}}}}
}

func newWhatIfFixture(t *testing.T) *whatIfFixture {
	t.Helper()
	testcluster.Require(t)
	st, err := ledger.Open(context.Background(), "sqlite:"+filepath.Join(t.TempDir(), "ledger.db"), ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	f := &whatIfFixture{store: &countingTraffic{Store: st, ts: st.(ledger.TrafficStore)},
		name:  "whatif-" + strings.ReplaceAll(time.Now().UTC().Format("150405.000000"), ".", ""),
		admin: kubernetes.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin))}
	f.flooder = f.name + "-flooder"
	ctx := context.Background()
	fc := f.admin.FlowcontrolV1()
	if _, err := fc.PriorityLevelConfigurations().Create(ctx, whatIfLevel(f.name, 1), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = fc.PriorityLevelConfigurations().Delete(context.Background(), f.name, metav1.DeleteOptions{})
	})
	if _, err := fc.FlowSchemas().Create(ctx, whatIfSchema(f.name, f.flooder, f.name), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fc.FlowSchemas().Delete(context.Background(), f.name, metav1.DeleteOptions{}) })

	// 20 s, two minutes ago: 300 requests a second of 40 ms each into a
	// level of a few seats, most refused; a quiet reader beside it.
	var bs []ledger.TrafficBucket
	t0 := time.Now().UTC().Truncate(time.Second).Add(-2 * time.Minute)
	for sec := range 20 {
		start := t0.Add(time.Duration(sec) * time.Second)
		bs = append(bs, ledger.TrafficBucket{Start: start, Width: time.Second, Requests: 300, Rejected: 220,
			Series: ledger.TrafficSeries{Instance: "10.0.0.1:6443", User: f.flooder, Groups: []string{"system:authenticated"},
				Verb: "create", Resource: "configmaps", Namespace: "x"},
			LatencySum: 8 * time.Second, ServedLatencySum: 8 * time.Second, ServedLatencyMin: 40 * time.Millisecond},
			ledger.TrafficBucket{Start: start, Width: time.Second, Requests: 5,
				Series: ledger.TrafficSeries{Instance: "10.0.0.1:6443", User: f.name + "-quiet", Groups: []string{"system:authenticated"},
					Verb: "get", Resource: "pods", Namespace: "x"},
				LatencySum: 10 * time.Millisecond, ServedLatencySum: 10 * time.Millisecond, ServedLatencyMin: time.Millisecond})
	}
	if err := f.store.AppendTraffic(ctx, bs); err != nil {
		t.Fatal(err)
	}
	// Packed as the console packs them behind the ingest: the what-if
	// reads packed minutes.
	if n, err := f.store.PackTraffic(ctx, t0.Add(2*time.Minute)); err != nil || n != int64(len(bs)) {
		t.Fatalf("packed %d of %d buckets: %v", n, len(bs), err)
	}
	return f
}

// console is an admin's console on the fixture's ledger, with the editor
// that dry-runs the draft, once its cache shows the fixture's objects.
func (f *whatIfFixture) console(t *testing.T) (*liveServer, *http.Cookie) {
	t.Helper()
	cfg := testcluster.RestConfig(t, testcluster.Admin)
	ed, err := kube.NewEditor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := newLiveServer(t, testcluster.Admin, false, withLedger(f.store), func(d *Deps) { d.Editor = ed })
	waitFor(t, "the cache to show the fixture's FlowSchema and level", 30*time.Second, func() bool {
		_, e1 := ts.cache.FlowSchema(f.name)
		_, e2 := ts.cache.PriorityLevel(f.name)
		return e1 == nil && e2 == nil
	})
	return ts, ts.login(t)
}

// draft moves the flooder's FlowSchema to a level of its own of 100
// shares.
func (f *whatIfFixture) draft(t *testing.T) string {
	t.Helper()
	fs, err := yaml.Marshal(whatIfSchema(f.name, f.flooder, f.name+"-own"))
	if err != nil {
		t.Fatal(err)
	}
	pl, err := yaml.Marshal(whatIfLevel(f.name+"-own", 100))
	if err != nil {
		t.Fatal(err)
	}
	return string(fs) + "---\n" + string(pl)
}

// whatIfOutcome posts the form and, when it started a run, waits (bounded)
// for the run's page to show its outcome.
func whatIfOutcome(t *testing.T, ts *testServer, sess *http.Cookie, path string, form url.Values, hx bool) (*http.Response, *goquery.Document) {
	t.Helper()
	rec, doc := ts.request(t, sess, http.MethodPost, path, form, hx)
	job := rec.Header().Get("Location")
	if hx {
		job, _ = doc.Find("[data-testid=replay-job]").Attr("data-job-url")
	}
	if job == "" {
		return rec.Result(), doc
	}
	waitFor(t, "the what-if to end", 60*time.Second, func() bool {
		rec, doc = ts.request(t, sess, http.MethodGet, job, nil, hx)
		return rec.Code != http.StatusOK || doc.Find("[data-testid=replay-job]").Length() == 0
	})
	return rec.Result(), doc
}

// TestWhatIfShowsTheFlooderMovedAndItsRejectionsDropping: the page renders
// for an admin; a draft giving the flooding user a level of its own shows
// the flow moved, the small level's predicted rejections beside the API
// server's 429s, the own level's none, and a plot of the changed levels.
func TestWhatIfShowsTheFlooderMovedAndItsRejectionsDropping(t *testing.T) {
	f := newWhatIfFixture(t)
	ts, sess := f.console(t)
	code, doc := ts.getDoc(t, sess, urls.WhatIf)
	if code != http.StatusOK || doc.Find("[data-testid=whatif-draft]").Length() != 1 {
		t.Fatalf("form: status %d", code)
	}
	// The flood is a recorded incident the form offers to run over: its
	// button posts the draft with the incident's window.
	incident := doc.Find("[data-testid=whatif-incident]")
	value, _ := incident.Attr("value")
	if incident.Length() != 1 || !strings.Contains(incident.Text(), "4,400 answered 429") || value == "" {
		t.Fatalf("incidents offered: %d, %q (%q)", incident.Length(), incident.Text(), value)
	}
	res, idoc := whatIfOutcome(t, &ts.testServer, sess, urls.WhatIf, url.Values{"draft": {f.draft(t)}, "window": {"1h"}, "incident": {value}}, true)
	if win := idoc.Find("[data-testid=whatif-summary]").Text(); res.StatusCode != http.StatusOK || !strings.Contains(win, "from ") ||
		!strings.Contains(idoc.Find("[data-testid=whatif-requests]").Text(), "6,100") {
		t.Errorf("run over the incident: status %d, summary %q", res.StatusCode, strings.Join(strings.Fields(win), " "))
	}
	for _, hx := range []bool{false, true} {
		res, doc := whatIfOutcome(t, &ts.testServer, sess, urls.WhatIf, url.Values{"draft": {f.draft(t)}, "window": {"1h"}}, hx)
		if res.StatusCode != http.StatusOK || doc.Find("[data-testid=whatif-summary]").Length() != 1 {
			t.Fatalf("hx=%v: status %d: %s", hx, res.StatusCode, doc.Find("[data-testid=whatif-error]").Text())
		}
		if got := doc.Find("[data-testid=whatif-requests]").Text(); !strings.HasPrefix(got, "6,100") {
			t.Errorf("hx=%v: requests read %q, want 6,100", hx, got)
		}
		small := doc.Find(`[data-testid=whatif-level][data-level="` + f.name + `"]`)
		before := strings.TrimSpace(small.Find("[data-testid=whatif-before] [data-testid=whatif-rejected]").Text())
		after := strings.TrimSpace(small.Find("[data-testid=whatif-after] [data-testid=whatif-rejected]").Text())
		if before == "0" || before == "" || after != "0" {
			t.Errorf("hx=%v: the small level's rejections %q before, %q after", hx, before, after)
		}
		if rec := small.Find("[data-testid=whatif-recorded]").Text(); !strings.Contains(rec, "4,400 of 6,000 answered 429") {
			t.Errorf("hx=%v: recorded %q", hx, rec)
		}
		own := doc.Find(`[data-testid=whatif-level][data-level="` + f.name + `-own"]`)
		if r := strings.TrimSpace(own.Find("[data-testid=whatif-after] [data-testid=whatif-rejected]").Text()); r != "0" {
			t.Errorf("hx=%v: the own level's rejections %q", hx, r)
		}
		if small.Find("[data-testid=whatif-plot] svg title").Length() != 1 || small.Find(`polyline[data-series=after-seats]`).Length() != 1 {
			t.Errorf("hx=%v: no plot of the small level", hx)
		}
		moved := doc.Find("[data-testid=whatif-moved] [data-testid=whatif-flow]")
		if moved.Length() != 1 || !strings.Contains(moved.Text(), f.flooder) ||
			strings.TrimSpace(moved.Find("[data-testid=whatif-flow-after]").Text()) != f.name+" → "+f.name+"-own" {
			t.Errorf("hx=%v: moved flows %q", hx, moved.Text())
		}
		if cl := doc.Find("[data-testid=whatif-servercl]").Text(); !strings.Contains(cl, "10.0.0.1:6443: 600 seats, the API server's default") {
			t.Errorf("hx=%v: server limit %q", hx, cl)
		}
	}
	// The draft was a dry run: nothing changed in the cluster.
	if _, err := f.admin.FlowcontrolV1().PriorityLevelConfigurations().Get(context.Background(), f.name+"-own", metav1.GetOptions{}); err == nil {
		t.Error("the draft's level was created")
	}
}

// TestWhatIfRefusesBadDraftsBeforeAnyRun: a FlowSchema naming a level that
// does not exist, shares the API server's validation refuses in the dry
// run, and another kind each get a clear error, and no job.
func TestWhatIfRefusesBadDraftsBeforeAnyRun(t *testing.T) {
	f := newWhatIfFixture(t)
	ts, sess := f.console(t)
	missing, _ := yaml.Marshal(whatIfSchema(f.name, f.flooder, f.name+"-nowhere"))
	bad := whatIfLevel(f.name+"-bad", 1)
	bad.Spec.Limited.NominalConcurrencyShares = ptr.To[int32](-5)
	badShares, _ := yaml.Marshal(bad)
	for _, c := range []struct{ name, draft, want string }{
		{"missing level", string(missing), `names priority level "` + f.name + `-nowhere"`},
		{"invalid shares", string(badShares), "the API server refused it in a dry run"},
		{"another kind", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n", `document 1 is a "ConfigMap"`},
	} {
		scans := f.store.scans.Load()
		rec, doc := ts.request(t, sess, http.MethodPost, urls.WhatIf, url.Values{"draft": {c.draft}, "window": {"1h"}}, false)
		msg := doc.Find("[data-testid=whatif-error]").Text()
		if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(msg, c.want) {
			t.Errorf("%s: status %d, error %q, want one about %q", c.name, rec.Code, msg, c.want)
		}
		if doc.Find("[data-testid=replay-job]").Length() != 0 || rec.Header().Get("Location") != "" || f.store.scans.Load() != scans {
			t.Errorf("%s: a run started", c.name)
		}
		if c.name == "invalid shares" && !strings.Contains(msg, "nominalConcurrencyShares") {
			t.Errorf("invalid shares: the API server's words are missing: %q", msg)
		}
	}
}

// TestWhatIfRefusesAUserWhoMayNotListFlowSchemas is the attack: a user who
// may read priority levels but not list FlowSchemas posts the form
// directly, to learn how the recorded traffic classifies. The console must
// refuse before it reads any traffic.
func TestWhatIfRefusesAUserWhoMayNotListFlowSchemas(t *testing.T) {
	f := newWhatIfFixture(t)
	user := f.name + "-viewer"
	grantUser(t, f.admin, user, []rbacv1.PolicyRule{{
		APIGroups: []string{"flowcontrol.apiserver.k8s.io"}, Verbs: []string{"get", "list", "watch"},
		Resources: []string{"prioritylevelconfigurations"},
	}}, authorizationv1.ResourceAttributes{Verb: "list", Group: "flowcontrol.apiserver.k8s.io", Resource: "prioritylevelconfigurations"})
	cfg := testcluster.RestConfig(t, testcluster.Admin)
	cfg.Impersonate.UserName = user
	ts := newLiveServerOn(t, sharedCache(t, testcluster.Admin), cfg, user, true, withLedger(f.store))
	sess := ts.login(t)
	for _, path := range []string{urls.WhatIf, urls.WhatIfBacktest + "?level=" + f.name} {
		rec, doc := ts.request(t, sess, http.MethodPost, path, url.Values{"draft": {""}, "window": {"1h"}}, false)
		if rec.Code != http.StatusForbidden || !strings.Contains(doc.Text(), "may not read") {
			t.Errorf("POST %s: status %d, want 403 saying so", path, rec.Code)
		}
	}
	if code, _ := ts.getDoc(t, sess, urls.WhatIf); code != http.StatusForbidden {
		t.Errorf("GET: status %d, want 403", code)
	}
	// Refused before the handler: no run was started, so nothing can read later.
	if s, st := f.store.scans.Load(), f.store.stats.Load(); s != 0 || st != 0 {
		t.Errorf("the traffic was read for a user who may not list FlowSchemas: %d scans, %d stats", s, st)
	}
	// The priority level's page, which the viewer may see, shows no backtest.
	code, doc := ts.getDoc(t, sess, urls.Object(kube.PriorityLevels, f.name))
	if code != http.StatusOK || doc.Find("[data-testid=whatif-backtest]").Length() != 0 || doc.Find("[data-testid=whatif-link]").Length() != 0 {
		t.Errorf("level page: status %d, backtest shown to a user who may not list FlowSchemas", code)
	}
}

// TestWhatIfRefusesAForgedPost: the run shows the victim's view of the
// traffic to nobody else, but another site must not start work as them.
func TestWhatIfRefusesAForgedPost(t *testing.T) {
	testcluster.Require(t)
	ts := newLiveServer(t, testcluster.Admin, true)
	sess := ts.login(t)
	own := pageCSRFToken(t, ts.e, withCookie(sess))
	for _, path := range []string{urls.WhatIf, urls.WhatIfBacktest + "?level=global-default"} {
		for _, fg := range forgeries(own, "another-sessions-token") {
			rec := ts.do(fg.request(path, url.Values{"draft": {""}, "window": {"1h"}}, withCookie(sess)))
			if !refusedForCSRF(rec) {
				t.Errorf("%s %s: status %d, want the CSRF check's 403", path, fg.name, rec.Code)
			}
		}
	}
}

// TestWhatIfBacktestOnThePriorityLevelPage: the level's page offers the
// backtest over the last day; run, it comes back to the page, which says
// what the model predicted beside the API server's 429s.
func TestWhatIfBacktestOnThePriorityLevelPage(t *testing.T) {
	f := newWhatIfFixture(t)
	ts, sess := f.console(t)
	page := urls.Object(kube.PriorityLevels, f.name)
	_, doc := ts.getDoc(t, sess, page)
	sec := doc.Find("[data-testid=whatif-backtest]")
	if !strings.Contains(sec.Text(), "No backtest was run within the hour") || doc.Find("[data-testid=whatif-link]").Length() != 1 {
		t.Fatalf("before: %q", sec.Text())
	}
	rec, _ := ts.request(t, sess, http.MethodPost, urls.WhatIfBacktest+"?level="+f.name, url.Values{}, false)
	job := rec.Header().Get("Location")
	if rec.Code != http.StatusSeeOther || !strings.HasPrefix(job, urls.WhatIf+"/jobs/") {
		t.Fatalf("backtest: status %d to %q", rec.Code, job)
	}
	waitFor(t, "the backtest to end and return to the level's page", 60*time.Second, func() bool {
		rec, _ := ts.request(t, sess, http.MethodGet, job, nil, false)
		return rec.Code == http.StatusSeeOther && rec.Header().Get("Location") == page
	})
	_, doc = ts.getDoc(t, sess, page)
	got := doc.Find("[data-testid=whatif-backtest]").Text()
	if !strings.Contains(got, "Over the last day this model predicted") || !strings.Contains(got, "the API server answered 4,400 requests 429") ||
		!strings.Contains(got, "per instance: 10.0.0.1:6443 predicted") {
		t.Errorf("after: %q", got)
	}
}

// TestWhatIfFromTheYAMLEditor: a FlowSchema's YAML editor offers
// "Simulate on recorded traffic", which posts the editor's own form (its
// text as yaml) to the what-if; the text runs as the draft.
func TestWhatIfFromTheYAMLEditor(t *testing.T) {
	f := newWhatIfFixture(t)
	ts, sess := f.console(t)
	_, doc := ts.getDoc(t, sess, urls.Edit(kube.FlowSchemas, f.name))
	if action, _ := doc.Find("[data-testid=editor-whatif]").Attr("formaction"); action != urls.WhatIf {
		t.Fatalf("the editor's what-if button posts to %q", action)
	}
	res, doc := whatIfOutcome(t, &ts.testServer, sess, urls.WhatIf, url.Values{"yaml": {f.draft(t)}, "resourceVersion": {"1"}}, false)
	moved := doc.Find("[data-testid=whatif-moved] [data-testid=whatif-flow]")
	if res.StatusCode != http.StatusOK || moved.Length() != 1 || !strings.Contains(moved.Text(), f.flooder) {
		t.Errorf("status %d, moved %q: %s", res.StatusCode, moved.Text(), doc.Find("[data-testid=whatif-error]").Text())
	}
}
