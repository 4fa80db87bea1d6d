//go:build integration

package handlers

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/clusterdesk/clusterdesk/internal/apfload"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// dumpSampler is the sampler as main builds it: /metrics and the debug dump,
// as admin (the console's identity).
func dumpSampler(t *testing.T) *apfload.Sampler {
	t.Helper()
	admin := testcluster.RestConfig(t, testcluster.Admin)
	metrics, err := kube.APIServerMetrics(admin)
	if err != nil {
		t.Fatal(err)
	}
	dump, err := kube.APIServerPriorityLevelDump(admin)
	if err != nil {
		t.Fatal(err)
	}
	s := apfload.New(metrics, apfload.Options{Dump: dump})
	ctx, stop := context.WithCancel(context.Background())
	t.Cleanup(stop)
	go s.Run(ctx)
	return s
}

// TestAPFDumpOnThePriorityLevelPage: the admin, who may get
// dump_priority_levels, sees the level's queues from the API server's own
// dump; the sampler's parse agrees with the dump's rows.
func TestAPFDumpOnThePriorityLevelPage(t *testing.T) {
	admin := testcluster.RestConfig(t, testcluster.Admin)
	sampler := dumpSampler(t)
	ld, err := sampler.Current(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if ld.DumpErr != nil || len(ld.Dump) == 0 {
		t.Fatalf("dump: %v (%d levels)", ld.DumpErr, len(ld.Dump))
	}
	// Every priority level the API server has is a row; exempt never queues.
	fetch, _ := kube.APIServerPriorityLevelDump(admin)
	body, err := fetch(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(body)
	body.Close()
	t.Logf("dump_priority_levels:\n%s", raw)
	for _, name := range []string{"exempt", "catch-all", "global-default", "workload-low"} {
		if _, ok := ld.Dump[name]; !ok || !strings.Contains(string(raw), "\n"+name+",") {
			t.Errorf("level %s missing from the dump (parsed %v)", name, ok)
		}
	}
	if d := ld.Dump["exempt"]; d.Waiting != 0 || d.ActiveQueues != 0 {
		t.Errorf("exempt %+v", d)
	}

	ls := newLiveServerWith(t, admin, testcluster.Admin, false, func(d *Deps) {
		access, err := kube.NewAccess(admin)
		if err != nil {
			t.Fatal(err)
		}
		d.APFLoad, d.URLAccess = sampler, access
	})
	sess := ls.login(t)
	// The admin (system:masters) is exempt: that level has dispatched requests.
	code, doc, took := ls.get(t, sess, "/prioritylevels/exempt")
	sec := strings.Join(strings.Fields(doc.Find(`[data-testid="apf-dump"]`).Text()), " ")
	t.Logf("priority level page in %v; dump section %q", took, sec)
	if code != http.StatusOK {
		t.Fatalf("status %d", code)
	}
	for _, want := range []string{"Active queues", "State", "Waiting", "Executing", "Timed out", "Cancelled"} {
		if !strings.Contains(sec, want) {
			t.Errorf("dump section lacks %q", want)
		}
	}
	// The page shows the sampler's read (or a later one): counters only grow.
	m := regexp.MustCompile(`Dispatched ?(\d+)`).FindStringSubmatch(sec)
	if m == nil {
		t.Fatalf("no dispatched count in %q", sec)
	}
	if n, _ := strconv.Atoi(m[1]); n == 0 || n < ld.Dump["exempt"].Dispatched {
		t.Errorf("dispatched %d on the page, %d in the sampler's first read", n, ld.Dump["exempt"].Dispatched)
	}
}

// TestAPFDumpNeedsGetOnItsURL: a user who may not get dump_priority_levels
// sees why the queues are not shown, though the console reads them.
func TestAPFDumpNeedsGetOnItsURL(t *testing.T) {
	sampler := dumpSampler(t)
	if _, err := sampler.Current(t.Context()); err != nil {
		t.Fatal(err)
	}
	cfg := testcluster.RestConfig(t, testcluster.Auditor)
	ls := newLiveServerWith(t, cfg, testcluster.Auditor, false, func(d *Deps) {
		access, err := kube.NewAccess(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := access.CanURL(t.Context(), "get", kube.APIServerPriorityLevelDumpPath); ok || err != nil {
			t.Fatalf("auditor may get the dump (%v, %v): the test needs an identity that may not", ok, err)
		}
		d.APFLoad, d.URLAccess = sampler, access
	})
	sess := ls.login(t)
	_, doc, _ := ls.get(t, sess, "/prioritylevels/global-default")
	sec := strings.Join(strings.Fields(doc.Find(`[data-testid="apf-dump"]`).Text()), " ")
	if !strings.Contains(sec, "Your identity may not read /debug/api_priority_and_fairness/dump_priority_levels") || strings.Contains(sec, "Active queues") {
		t.Errorf("dump section %q", sec)
	}
}

// TestAPFDumpReaderWithoutMetricsSeesTheDump: an identity that may get the
// dump's URL (and read priority levels) but not /metrics sees the queues,
// while the load section says it may not read /metrics.
func TestAPFDumpReaderWithoutMetricsSeesTheDump(t *testing.T) {
	sampler := dumpSampler(t)
	if _, err := sampler.Current(t.Context()); err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin))
	name := "it-dumpreader-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: []rbacv1.PolicyRule{
		{Verbs: []string{"get", "list", "watch"}, APIGroups: []string{"flowcontrol.apiserver.k8s.io"}, Resources: []string{"prioritylevelconfigurations", "flowschemas"}},
		{Verbs: []string{"get"}, NonResourceURLs: []string{kube.APIServerPriorityLevelDumpPath}},
	}}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: name}}}
	if _, err := cs.RbacV1().ClusterRoles().Create(t.Context(), role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.RbacV1().ClusterRoles().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(t.Context(), binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.RbacV1().ClusterRoleBindings().Delete(context.Background(), name, metav1.DeleteOptions{})
	})

	cfg := rest.CopyConfig(testcluster.RestConfig(t, testcluster.Admin))
	cfg.Impersonate = rest.ImpersonationConfig{UserName: name}
	// Each try asks with a new Access: one keeps an answer 30 s, so a "no"
	// asked before the API server's authorizer saw the binding (seen on a
	// loaded machine) would be all the 10 s could get.
	var access *kube.Access
	waitFor(t, "the role to take effect", 10*time.Second, func() bool {
		var err error
		if access, err = kube.NewAccess(cfg); err != nil {
			t.Fatal(err)
		}
		ok, err := access.CanURL(t.Context(), "get", kube.APIServerPriorityLevelDumpPath)
		return ok && err == nil
	})
	if ok, err := access.CanURL(t.Context(), "get", kube.APIServerMetricsPath); ok || err != nil {
		t.Fatalf("the dump reader may get /metrics (%v, %v): the test needs one that may not", ok, err)
	}
	ls := newLiveServerWith(t, cfg, name, false, func(d *Deps) { d.APFLoad, d.URLAccess = sampler, access })
	sess := ls.login(t)
	code, doc, _ := ls.get(t, sess, "/prioritylevels/global-default")
	dump := strings.Join(strings.Fields(doc.Find(`[data-testid="apf-dump"]`).Text()), " ")
	load := strings.Join(strings.Fields(doc.Find(`[data-testid="apf-load"]`).Text()), " ")
	if code != http.StatusOK || !strings.Contains(dump, "Active queues") || strings.Contains(dump, "may not read") {
		t.Errorf("status %d, dump section %q", code, dump)
	}
	if !strings.Contains(load, "may not read /metrics") {
		t.Errorf("load section %q", load)
	}
}
