//go:build integration

package handlers

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/clusterdesk/clusterdesk/internal/apfload"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// Flood bounds: the test stops after this many requests or this long,
// whichever comes first, even if the API server never answers 429.
const (
	floodWorkers  = 32
	floodRequests = 30000
	floodFor      = 60 * time.Second
)

// TestAPFLoadShowsRejectionsOfAFloodedLevel floods a one-share priority level
// (one queue of one request, nothing lent or borrowed) through impersonation
// until the API server answers 429, then checks the shared sampler counts
// those rejections for the test's FlowSchema and level, and that the pages,
// signed in as admin, show them.
func TestAPFLoadShowsRejectionsOfAFloodedLevel(t *testing.T) {
	admin := testcluster.RestConfig(t, testcluster.Admin)
	cs := kubernetes.NewForConfigOrDie(admin)
	ctx := t.Context()
	suffix := fmt.Sprintf("%d", time.Now().UnixNano()%1_000_000)
	name := "apfload-flood-" + suffix
	user := "apfload-flooder-" + suffix

	createFloodTargets(t, cs, name, user)

	// The sampler as main builds it, but quicker, so the test sees two reads.
	fetch, err := kube.APIServerMetrics(admin)
	if err != nil {
		t.Fatal(err)
	}
	sampler := apfload.New(fetch, apfload.Options{Interval: 2 * time.Second})
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	go sampler.Run(sctx)
	if _, err := sampler.Current(ctx); err != nil {
		t.Fatalf("first read of /metrics: %v", err)
	}

	// The flood goes on while the sampler and the pages are checked, so the
	// rate between two reads is the flood's; it ends with the test's checks.
	floodCtx, endFlood := context.WithTimeout(ctx, floodFor)
	defer endFlood()
	f := startFlood(floodCtx, t, admin, user)
	defer f.stop(t)

	// Rates come from consecutive reads: wait for a read that saw 429s.
	var ld apfload.Load
	for {
		ld, err = sampler.Current(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if ld.Schemas[name].RejectedPerSecond > 0 && ld.Levels[name].RejectedPerSecond > 0 {
			break
		}
		if floodCtx.Err() != nil || f.sent.Load() >= floodRequests {
			t.Fatalf("no rejection rate after %d requests (%d answered 429): %+v", f.sent.Load(), f.tooMany.Load(), ld.Schemas[name])
		}
		time.Sleep(300 * time.Millisecond)
	}
	fs, pl := ld.Schemas[name], ld.Levels[name]
	t.Logf("client has seen %d 429s; sampler: FlowSchema %+v, level %+v", f.tooMany.Load(), fs, pl)
	if fs.PriorityLevel != name || !fs.Matched || fs.Rejected[0].Reason != "queue-full" {
		t.Fatalf("FlowSchema load %+v", fs)
	}
	if !pl.HasLimits || pl.NominalSeats < 1 {
		t.Errorf("level seats: %+v", pl)
	}

	// The pages, as admin, through the handlers.
	ls := newLiveServerWith(t, admin, testcluster.Admin, false, func(d *Deps) {
		access, err := kube.NewAccess(admin)
		if err != nil {
			t.Fatal(err)
		}
		d.APFLoad, d.URLAccess = sampler, access
	})
	sess := ls.login(t)
	waitCachedPL(t, ls, name)

	code, doc, took := ls.get(t, sess, "/prioritylevels/"+name)
	load := doc.Find(`[data-testid="apf-load"]`).Text()
	t.Logf("priority level page in %v", took)
	if code != http.StatusOK || !strings.Contains(load, "rejecting") || !strings.Contains(load, "queue-full") || !strings.Contains(load, "per API server instance") {
		t.Errorf("priority level page %d, load section %q", code, strings.Join(strings.Fields(load), " "))
	}
	code, doc, _ = ls.get(t, sess, "/flowschemas/"+name)
	if load := doc.Find(`[data-testid="apf-load"]`).Text(); code != http.StatusOK || !strings.Contains(load, "queue-full") {
		t.Errorf("FlowSchema page %d, load section %q", code, strings.Join(strings.Fields(load), " "))
	}
	code, doc, _ = ls.get(t, sess, "/prioritylevels")
	row := doc.Find("#row-prioritylevels-" + name).Text()
	if code != http.StatusOK || !strings.Contains(row, "rejecting") {
		t.Errorf("priority level list %d, row %q", code, strings.Join(strings.Fields(row), " "))
	}
	code, doc, _ = ls.get(t, sess, "/flowschemas")
	if cell := doc.Find(fmt.Sprintf(`[data-name=%q] [data-testid="fs-load"]`, name)).Text(); code != http.StatusOK || !strings.Contains(cell, "rejected") {
		t.Errorf("FlowSchema list %d, load cell %q", code, strings.Join(strings.Fields(cell), " "))
	}
	code, doc, _ = ls.get(t, sess, "/flowschemas/-/classify?user="+user+"&verb=list&apigroup=apiextensions.k8s.io&resource=customresourcedefinitions")
	if s := doc.Find(`[data-testid="result-load"]`).Text(); code != http.StatusOK || !strings.Contains(s, "lands in "+name+", which is rejecting") {
		t.Errorf("classifier %d, load %q", code, strings.Join(strings.Fields(s), " "))
	}
}

// TestAPFLoadNeedsGetMetrics: a user without get on /metrics sees why no load.
func TestAPFLoadNeedsGetMetrics(t *testing.T) {
	admin := testcluster.RestConfig(t, testcluster.Admin)
	fetch, err := kube.APIServerMetrics(admin)
	if err != nil {
		t.Fatal(err)
	}
	sampler := apfload.New(fetch, apfload.Options{})
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	go sampler.Run(ctx)
	cfg := testcluster.RestConfig(t, testcluster.Auditor)
	ls := newLiveServerWith(t, cfg, testcluster.Auditor, false, func(d *Deps) {
		access, err := kube.NewAccess(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := access.CanURL(t.Context(), "get", "/metrics"); ok || err != nil {
			t.Fatalf("auditor may get /metrics (%v, %v): the test needs an identity that may not", ok, err)
		}
		d.APFLoad, d.URLAccess = sampler, access
	})
	sess := ls.login(t)
	_, doc, _ := ls.get(t, sess, "/flowschemas/global-default")
	if s := doc.Find(`[data-testid="apf-load"]`).Text(); !strings.Contains(s, "Your identity may not read /metrics, so load is not shown") {
		t.Errorf("load section %q", strings.Join(strings.Fields(s), " "))
	}
	if scrapes, _ := sampler.Stats(); scrapes != 0 {
		t.Errorf("%d scrapes for a user who may not see them", scrapes)
	}
}

func waitCachedPL(t *testing.T, ls *liveServer, name string) {
	t.Helper()
	waitFor(t, "priority level "+name+" in the cache", 10*time.Second, func() bool {
		_, err := ls.cache.PriorityLevel(name)
		return err == nil
	})
}

// createFloodTargets makes the one-share level, the FlowSchema sending user's
// requests to it, and RBAC letting user list CRDs (slow: the devcluster has
// ~150 with large schemas); all deleted when the test ends.
func createFloodTargets(t *testing.T, cs kubernetes.Interface, name, user string) {
	ctx := context.Background()
	pl := &flowcontrolv1.PriorityLevelConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: flowcontrolv1.PriorityLevelConfigurationSpec{
			Type: flowcontrolv1.PriorityLevelEnablementLimited,
			Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{
				NominalConcurrencyShares: ptr.To[int32](1),
				LendablePercent:          ptr.To[int32](0),
				BorrowingLimitPercent:    ptr.To[int32](0),
				LimitResponse: flowcontrolv1.LimitResponse{
					Type:    flowcontrolv1.LimitResponseTypeQueue,
					Queuing: &flowcontrolv1.QueuingConfiguration{Queues: 1, HandSize: 1, QueueLengthLimit: 1},
				},
			},
		},
	}
	fs := &flowcontrolv1.FlowSchema{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: flowcontrolv1.FlowSchemaSpec{
			PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: name},
			MatchingPrecedence:         500,
			Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
				Subjects: []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: user}}},
				ResourceRules: []flowcontrolv1.ResourcePolicyRule{{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"},
					ClusterScope: true, Namespaces: []string{"*"}}},
			}},
		},
	}
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name},
		Rules: []rbacv1.PolicyRule{{Verbs: []string{"list"}, APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"}}}}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}}}

	t.Cleanup(func() {
		ctx := context.Background()
		for _, err := range []error{
			cs.FlowcontrolV1().FlowSchemas().Delete(ctx, name, metav1.DeleteOptions{}),
			cs.FlowcontrolV1().PriorityLevelConfigurations().Delete(ctx, name, metav1.DeleteOptions{}),
			cs.RbacV1().ClusterRoleBindings().Delete(ctx, name, metav1.DeleteOptions{}),
			cs.RbacV1().ClusterRoles().Delete(ctx, name, metav1.DeleteOptions{}),
		} {
			if err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("clean up %s: %v", name, err)
			}
		}
	})
	if _, err := cs.FlowcontrolV1().PriorityLevelConfigurations().Create(ctx, pl, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.FlowcontrolV1().FlowSchemas().Create(ctx, fs, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The API server's APF configuration controller picks the objects up
	// asynchronously: wait until a request as user is classified into name.
	imp := rest.CopyConfig(testcluster.RestConfig(t, testcluster.Admin))
	imp.Impersonate = rest.ImpersonationConfig{UserName: user}
	want := mustPLUID(t, cs, name)
	deadline := time.Now().Add(20 * time.Second)
	for {
		if plUIDHeader(imp) == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("requests as %s are not classified into %s after 20 s", user, name)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func mustPLUID(t *testing.T, cs kubernetes.Interface, name string) string {
	pl, err := cs.FlowcontrolV1().PriorityLevelConfigurations().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return string(pl.UID)
}

// plUIDHeader is the priority level the API server put one request as user
// in (X-Kubernetes-PF-PriorityLevel-UID).
func plUIDHeader(cfg *rest.Config) string {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return ""
	}
	req, _ := http.NewRequest(http.MethodGet, strings.TrimRight(cfg.Host, "/")+"/apis/apiextensions.k8s.io/v1/customresourcedefinitions?limit=1", nil)
	resp, err := hc.Do(req)
	if err != nil {
		return ""
	}
	resp.Body.Close()
	return resp.Header.Get("X-Kubernetes-PF-PriorityLevel-UID")
}

// flooder lists CRDs as a user from floodWorkers goroutines until its
// context ends or floodRequests were sent.
type flooder struct {
	sent, tooMany, other atomic.Int64
	wg                   sync.WaitGroup
	cancel               context.CancelFunc
}

func startFlood(ctx context.Context, t *testing.T, admin *rest.Config, user string) *flooder {
	cfg := rest.CopyConfig(admin)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	url := strings.TrimRight(cfg.Host, "/") + "/apis/apiextensions.k8s.io/v1/customresourcedefinitions?limit=500"
	f := &flooder{}
	ctx, f.cancel = context.WithCancel(ctx)
	for range floodWorkers {
		f.wg.Go(func() {
			for ctx.Err() == nil && f.sent.Add(1) <= floodRequests {
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
				resp, err := hc.Do(req)
				if err != nil {
					continue
				}
				resp.Body.Close()
				switch resp.StatusCode {
				case http.StatusTooManyRequests:
					f.tooMany.Add(1)
				case http.StatusOK:
				default:
					f.other.Add(1)
				}
			}
		})
	}
	return f
}

func (f *flooder) stop(t *testing.T) {
	f.cancel()
	f.wg.Wait()
	t.Logf("flood: %d requests sent, %d answered 429, %d other non-200", min(f.sent.Load(), floodRequests), f.tooMany.Load(), f.other.Load())
	if f.tooMany.Load() == 0 {
		t.Errorf("the API server answered no 429")
	}
}
