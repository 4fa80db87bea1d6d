//go:build integration

package apf_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/clusterdesk/clusterdesk/internal/apf"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
	"github.com/clusterdesk/clusterdesk/internal/testfixtures"
)

// liveCase is one real request, sent as the admin impersonating who, and the
// request as the apiserver's RequestInfo sees it.
type liveCase struct {
	name   string
	who    rest.ImpersonationConfig
	method string
	path   string // with query
	req    apf.Request
	wantFS string // the FlowSchema the case was written to reach: a check on the case itself
}

// TestClassifierAgreesWithAPIServer sends real requests with impersonated
// identities and checks that Classify picks the FlowSchema and priority level
// whose UIDs the apiserver returns in X-Kubernetes-PF-FlowSchema-UID and
// X-Kubernetes-PF-PriorityLevel-UID. The APF filter runs after
// impersonation and before authorization, so a 403 or 404 answer is
// classified (and carries the headers) like any other.
func TestClassifierAgreesWithAPIServer(t *testing.T) {
	cfg := testcluster.RestConfig(t, testcluster.Admin)
	// v1, or v1beta3 on Kubernetes 1.28 (make test runs this test on both).
	cs := testcluster.NewFlowcontrol(t, cfg)
	t.Logf("Kubernetes %s, flowcontrol %s", testcluster.Require(t).Version, cs.Version)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	p := "apftest-" + randomSuffix(t)
	nsStar, nsKCM, nsSA, nsSA2, nsA, nsB := p+"-star", p+"-kcm", p+"-sa", p+"-sa2", p+"-a", p+"-b"
	pl := p + "-pl"
	tieUser, ghostUser, scopeGroup := p+"-tie", p+"-ghost", p+"-scope"

	createObjects(ctx, t, cs, pl, []*flowcontrolv1.FlowSchema{
		// Precedence 2 ties with probes (and the openshift *-sar fixtures) and
		// wins by name; 1 is reserved for exempt by validation.
		fs(p+"-star-url", 2, pl, byUser, rule(subjects(group("*")), nil, nonRes([]string{"get"}, "/"+p+"/*"))),
		fs(p+"-star-ns", 2, pl, byNamespace, rule(subjects(user("*")), res([]string{"*"}, []string{"*"}, []string{"*"}, []string{nsStar}, false))),
		fs(p+"-ghost", 200, p+"-missing", byUser, rule(subjects(user(ghostUser)), res([]string{"*"}, []string{"*"}, []string{"*"}, []string{"*"}, true))),
		fs(p+"-sa", 250, pl, byNamespace, rule(subjects(sa(nsSA, "builder"), sa(nsSA2, "*")), res([]string{"*"}, []string{"*"}, []string{"*"}, []string{"*"}, true))),
		fs(p+"-scope", 260, pl, byUser, rule(subjects(group(scopeGroup)), []flowcontrolv1.ResourcePolicyRule{
			resRule([]string{"list", "watch"}, []string{""}, []string{"nodes"}, nil, true),
			resRule([]string{"*"}, []string{""}, []string{"pods"}, []string{nsA}, false),
			resRule([]string{"get"}, []string{""}, []string{"pods/status"}, []string{"*"}, false),
			resRule([]string{"get"}, []string{""}, []string{"namespaces"}, []string{nsA}, false),
		})),
		fs(p+"-urls", 270, pl, nil, rule(subjects(group(scopeGroup)), nil, nonRes([]string{"get"}, "/version", "/apis/*"))),
		// Two schemas with equal precedence: the lower name wins.
		fs(p+"-tie-b", 300, "workload-low", byUser, rule(subjects(user(tieUser)), res([]string{"*"}, []string{"*"}, []string{"*"}, []string{"*"}, true))),
		fs(p+"-tie-a", 300, pl, byUser, rule(subjects(user(tieUser)), res([]string{"*"}, []string{"*"}, []string{"*"}, []string{"*"}, true))),
		// Ties with the default kube-controller-manager (800) and wins by name.
		fs(p+"-kcm", 800, pl, byNamespace, rule(subjects(user("system:kube-controller-manager")), res([]string{"*"}, []string{""}, []string{"configmaps"}, []string{nsKCM}, false))),
	})

	masters := imp("apf-admin", apf.GroupMasters)
	bob := imp("apf-bob")
	anon := imp(apf.UserAnonymous)
	kcm := imp("system:kube-controller-manager")
	sched := imp("system:kube-scheduler")
	node := imp("system:node:apf-node", "system:nodes")
	saKS := imp("system:serviceaccount:kube-system:apf-robot")
	saDefault := imp("system:serviceaccount:default:apf-robot")
	saDefaultDevs := imp("system:serviceaccount:default:apf-robot", "devs") // groups given: no service account groups
	saBuilder, saOther, saAny := imp("system:serviceaccount:"+nsSA+":builder"), imp("system:serviceaccount:"+nsSA+":other"), imp("system:serviceaccount:"+nsSA2+":anyone")
	tie, ghost, scope := imp(tieUser), imp(ghostUser), imp("apf-carol", scopeGroup)

	get := http.MethodGet
	cases := []liveCase{
		{"masters list pods", masters, get, "/api/v1/namespaces/default/pods", res1("list", "", "pods", "", "default"), "exempt"},
		{"masters list nodes", masters, get, "/api/v1/nodes", res1("list", "", "nodes", "", ""), "exempt"},
		{"masters version", masters, get, "/version", url1("get", "/version"), "exempt"},
		{"masters healthz: exempt precedes probes", masters, get, "/healthz", url1("get", "/healthz"), "exempt"},
		{"masters in the star namespace", masters, get, "/api/v1/namespaces/" + nsStar + "/pods", res1("list", "", "pods", "", nsStar), "exempt"},
		{"masters on the star URL: exempt comes first", masters, get, "/" + p + "/x", url1("get", "/"+p+"/x"), "exempt"},
		{"user on the star URL", bob, get, "/" + p + "/x/y", url1("get", "/"+p+"/x/y"), p + "-star-url"},
		{"anonymous on the star URL", anon, get, "/" + p + "/x", url1("get", "/"+p+"/x"), p + "-star-url"},
		{"star URL prefix itself does not match", bob, get, "/" + p, url1("get", "/"+p), "global-default"},
		{"star URL with another verb", bob, http.MethodPost, "/" + p + "/x", url1("post", "/"+p+"/x"), "global-default"},
		{"probe healthz", bob, get, "/healthz", url1("get", "/healthz"), "probes"},
		{"probe readyz", bob, get, "/readyz", url1("get", "/readyz"), "probes"},
		{"probe livez", bob, get, "/livez", url1("get", "/livez"), "probes"},
		{"probe sub-path", bob, get, "/healthz/etcd", url1("get", "/healthz/etcd"), "probes"},
		{"anonymous probe", anon, get, "/livez", url1("get", "/livez"), "probes"},
		{"user version", bob, get, "/version", url1("get", "/version"), "global-default"},
		{"user metrics (403)", bob, get, "/metrics", url1("get", "/metrics"), "global-default"},
		{"anonymous version", anon, get, "/version", url1("get", "/version"), "global-default"},
		{"user lists configmaps", bob, get, "/api/v1/namespaces/default/configmaps", res1("list", "", "configmaps", "", "default"), "global-default"},
		{"user watches configmaps", bob, get, "/api/v1/namespaces/default/configmaps?watch=1", res1("watch", "", "configmaps", "", "default"), "global-default"},
		{"user gets a deployment", bob, get, "/apis/apps/v1/namespaces/default/deployments/x", res1("get", "apps", "deployments", "", "default"), "global-default"},
		{"user creates a configmap (dry run)", bob, http.MethodPost, "/api/v1/namespaces/default/configmaps?dryRun=All", res1("create", "", "configmaps", "", "default"), "global-default"},
		{"any user in the star namespace", bob, get, "/api/v1/namespaces/" + nsStar + "/secrets", res1("list", "", "secrets", "", nsStar), p + "-star-ns"},
		{"star namespace rule is not cluster scope", bob, get, "/api/v1/secrets", res1("list", "", "secrets", "", ""), "global-default"},
		{"controller-manager updates its lease (dry run)", kcm, http.MethodPut, "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-controller-manager?dryRun=All", res1("update", "coordination.k8s.io", "leases", "", "kube-system"), "system-leader-election"},
		{"controller-manager gets its lease", kcm, get, "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-controller-manager", res1("get", "coordination.k8s.io", "leases", "", "kube-system"), "system-leader-election"},
		{"controller-manager lists leases", kcm, get, "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases", res1("list", "coordination.k8s.io", "leases", "", "kube-system"), "kube-controller-manager"},
		{"controller-manager lists pods", kcm, get, "/api/v1/pods", res1("list", "", "pods", "", ""), "kube-controller-manager"},
		{"controller-manager configmaps: tie at 800", kcm, get, "/api/v1/namespaces/" + nsKCM + "/configmaps", res1("list", "", "configmaps", "", nsKCM), p + "-kcm"},
		{"controller-manager secrets beside it", kcm, get, "/api/v1/namespaces/" + nsKCM + "/secrets", res1("list", "", "secrets", "", nsKCM), "kube-controller-manager"},
		{"scheduler lists nodes", sched, get, "/api/v1/nodes", res1("list", "", "nodes", "", ""), "kube-scheduler"},
		{"scheduler gets a lease", sched, get, "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-scheduler", res1("get", "coordination.k8s.io", "leases", "", "kube-system"), "system-leader-election"},
		{"node status", node, get, "/api/v1/nodes/apf-node/status", res1("get", "", "nodes", "status", ""), "system-node-high"},
		{"node lease", node, get, "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/apf-node", res1("get", "coordination.k8s.io", "leases", "", "kube-node-lease"), "system-node-high"},
		{"node lists pods", node, get, "/api/v1/pods", res1("list", "", "pods", "", ""), "system-nodes"},
		{"node version", node, get, "/version", url1("get", "/version"), "system-nodes"},
		{"kube-system service account", saKS, get, "/api/v1/namespaces/kube-system/configmaps", res1("list", "", "configmaps", "", "kube-system"), "kube-system-service-accounts"},
		{"kube-system service account lists leases", saKS, get, "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases", res1("list", "coordination.k8s.io", "leases", "", "kube-system"), "kube-system-service-accounts"},
		{"kube-system service account gets a lease", saKS, get, "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/x", res1("get", "coordination.k8s.io", "leases", "", "kube-system"), "system-leader-election"},
		{"service account", saDefault, get, "/api/v1/namespaces/default/pods", res1("list", "", "pods", "", "default"), "service-accounts"},
		{"service account version", saDefault, get, "/version", url1("get", "/version"), "service-accounts"},
		{"service account impersonated with groups", saDefaultDevs, get, "/api/v1/namespaces/default/pods", res1("list", "", "pods", "", "default"), "global-default"},
		{"named service account subject", saBuilder, get, "/api/v1/namespaces/default/pods", res1("list", "", "pods", "", "default"), p + "-sa"},
		{"other service account in that namespace", saOther, get, "/api/v1/namespaces/default/pods", res1("list", "", "pods", "", "default"), "service-accounts"},
		{"service account * subject", saAny, get, "/api/v1/nodes", res1("list", "", "nodes", "", ""), p + "-sa"},
		{"tie: lower name wins", tie, get, "/api/v1/namespaces/default/pods", res1("list", "", "pods", "", "default"), p + "-tie-a"},
		{"tie: cluster scope", tie, get, "/api/v1/nodes", res1("list", "", "nodes", "", ""), p + "-tie-a"},
		{"tie: deletecollection", tie, http.MethodDelete, "/api/v1/namespaces/default/configmaps?dryRun=All", res1("deletecollection", "", "configmaps", "", "default"), p + "-tie-a"},
		{"dangling schema is skipped", ghost, get, "/api/v1/namespaces/default/pods", res1("list", "", "pods", "", "default"), "global-default"},
		{"cluster-scoped rule", scope, get, "/api/v1/nodes", res1("list", "", "nodes", "", ""), p + "-scope"},
		{"cluster-scoped rule, get verb not listed", scope, get, "/api/v1/nodes/x", res1("get", "", "nodes", "", ""), "global-default"},
		{"namespaced rule", scope, get, "/api/v1/namespaces/" + nsA + "/pods", res1("list", "", "pods", "", nsA), p + "-scope"},
		{"namespaced rule, watch", scope, get, "/api/v1/namespaces/" + nsA + "/pods?watch=true", res1("watch", "", "pods", "", nsA), p + "-scope"},
		{"namespaced rule, other namespace", scope, get, "/api/v1/namespaces/" + nsB + "/pods", res1("list", "", "pods", "", nsB), "global-default"},
		{"namespaced rule is not cluster scope", scope, get, "/api/v1/pods", res1("list", "", "pods", "", ""), "global-default"},
		{"subresource rule", scope, get, "/api/v1/namespaces/" + nsB + "/pods/p/status", res1("get", "", "pods", "status", nsB), p + "-scope"},
		{"pod itself is not its status", scope, get, "/api/v1/namespaces/" + nsB + "/pods/p", res1("get", "", "pods", "", nsB), "global-default"},
		{"a namespace is in its own namespace", scope, get, "/api/v1/namespaces/" + nsA, res1("get", "", "namespaces", "", nsA), p + "-scope"},
		{"listing namespaces is cluster-scoped", scope, get, "/api/v1/namespaces", res1("list", "", "namespaces", "", ""), "global-default"},
		{"non-resource rule", scope, get, "/version", url1("get", "/version"), p + "-urls"},
		{"non-resource prefix rule", scope, get, "/apis/apps", url1("get", "/apis/apps"), p + "-urls"},
		{"non-resource prefix rule excludes its root", scope, get, "/apis", url1("get", "/apis"), "global-default"},
	}

	schemas, levels := current(ctx, t, cs)
	byUID := map[string]string{}
	for _, s := range schemas {
		byUID[string(s.UID)] = "FlowSchema " + s.Name
	}
	for _, l := range levels {
		byUID[string(l.UID)] = "priority level " + l.Name
	}
	// The same objects as the console reads them (its informers, and on a
	// v1beta3-only server its conversion to v1): the classifier must agree
	// with the apiserver on those too.
	consoleSchemas, consoleLevels := consoleView(ctx, t, cfg, schemas, levels)
	agreed := 0
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.req.User, c.req.Groups = identity(c.who)
			got := apf.Classify(schemas, apf.LevelsOf(levels), c.req)
			if got.FlowSchema.Name != c.wantFS {
				t.Errorf("the case meant to reach %s, the classifier says %s", c.wantFS, got.FlowSchema.Name)
			}
			status, fsUID, plUID := send(ctx, t, cfg, c)
			if fsUID == "" || plUID == "" {
				t.Fatalf("HTTP %d without APF headers", status)
			}
			if string(got.FlowSchema.UID) != fsUID || got.PriorityLevel == nil || string(got.PriorityLevel.UID) != plUID {
				t.Fatalf("apiserver (HTTP %d) chose %s and %s; classifier chose FlowSchema %s and priority level %s\ntrace:\n%s",
					status, orUID(byUID, fsUID), orUID(byUID, plUID), got.FlowSchema.Name, got.PriorityLevelName, trace(got))
			}
			viaConsole := apf.Classify(consoleSchemas, apf.LevelsOf(consoleLevels), c.req)
			if string(viaConsole.FlowSchema.UID) != fsUID || viaConsole.PriorityLevel == nil || string(viaConsole.PriorityLevel.UID) != plUID {
				t.Fatalf("apiserver chose %s and %s; on the console's cached objects the classifier chose FlowSchema %s and priority level %s\ntrace:\n%s",
					orUID(byUID, fsUID), orUID(byUID, plUID), viaConsole.FlowSchema.Name, viaConsole.PriorityLevelName, trace(viaConsole))
			}
			agreed++
		})
	}
	t.Logf("classifier agreed with the apiserver on %d of %d requests", agreed, len(cases))
}

func randomSuffix(t *testing.T) string {
	b := make([]byte, 3)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// createObjects creates the priority level and FlowSchemas, removes them when
// the test ends, and waits until the apiserver's APF controller has digested
// them all: it writes each FlowSchema's Dangling condition after putting the
// schema into the set it classifies with.
func createObjects(ctx context.Context, t *testing.T, fc *testcluster.Flowcontrol, pl string, schemas []*flowcontrolv1.FlowSchema) {
	t.Helper()
	level := &flowcontrolv1.PriorityLevelConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: pl},
		Spec: flowcontrolv1.PriorityLevelConfigurationSpec{
			Type: flowcontrolv1.PriorityLevelEnablementLimited,
			Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{
				NominalConcurrencyShares: ptr.To(int32(5)),
				LimitResponse: flowcontrolv1.LimitResponse{
					Type:    flowcontrolv1.LimitResponseTypeQueue,
					Queuing: &flowcontrolv1.QueuingConfiguration{Queues: 4, HandSize: 2, QueueLengthLimit: 20},
				},
			},
		},
	}
	cleanup := func(kind, name string, del func(context.Context, string) error) {
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			if err := del(ctx, name); err != nil {
				t.Errorf("cleanup: delete %s %s: %v", kind, name, err)
			}
		})
	}
	if err := fc.CreatePriorityLevel(ctx, level); err != nil {
		t.Fatal(err)
	}
	cleanup("PriorityLevelConfiguration", pl, fc.DeletePriorityLevel)
	wantDangling := map[string]flowcontrolv1.ConditionStatus{}
	for _, s := range schemas {
		if err := fc.CreateFlowSchema(ctx, s); err != nil {
			t.Fatalf("create FlowSchema %s: %v", s.Name, err)
		}
		cleanup("FlowSchema", s.Name, fc.DeleteFlowSchema)
		wantDangling[s.Name] = flowcontrolv1.ConditionFalse
		if strings.HasSuffix(s.Spec.PriorityLevelConfiguration.Name, "-missing") {
			wantDangling[s.Name] = flowcontrolv1.ConditionTrue
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		list, err := fc.FlowSchemas(ctx)
		if err != nil {
			t.Fatal(err)
		}
		pending := []string{}
		for _, s := range list {
			want, ours := wantDangling[s.Name]
			if ours && !hasCondition(s, want) {
				pending = append(pending, s.Name)
			}
		}
		if len(pending) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the apiserver has not digested %v after 30 s", pending)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func hasCondition(fs *flowcontrolv1.FlowSchema, status flowcontrolv1.ConditionStatus) bool {
	for _, c := range fs.Status.Conditions {
		if c.Type == flowcontrolv1.FlowSchemaConditionDangling {
			return c.Status == status
		}
	}
	return false
}

func current(ctx context.Context, t *testing.T, fc *testcluster.Flowcontrol) ([]*flowcontrolv1.FlowSchema, []*flowcontrolv1.PriorityLevelConfiguration) {
	t.Helper()
	fss, err := fc.FlowSchemas(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pls, err := fc.PriorityLevels(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return fss, pls
}

// send makes the request as the admin impersonating c.who and returns the
// status and the APF headers.
func send(ctx context.Context, t *testing.T, admin *rest.Config, c liveCase) (int, string, string) {
	t.Helper()
	cfg := rest.CopyConfig(admin)
	cfg.Impersonate = c.who
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var body io.Reader
	if c.method == http.MethodPost || c.method == http.MethodPut {
		body = strings.NewReader(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"apf-probe"}}`)
	}
	req, err := http.NewRequestWithContext(ctx, c.method, strings.TrimSuffix(cfg.Host, "/")+c.path, body)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", c.method, c.path, err)
	}
	// A watch that is allowed would stream; the headers are all this test needs.
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get(flowcontrolv1.ResponseHeaderMatchedFlowSchemaUID), resp.Header.Get(flowcontrolv1.ResponseHeaderMatchedPriorityLevelConfigurationUID)
}

// identity is the user the apiserver's impersonation filter builds from the
// Impersonate-* headers: a service account without groups gets its fixed
// groups, and everyone but system:anonymous gets system:authenticated.
func identity(who rest.ImpersonationConfig) (string, []string) {
	groups := slices.Clone(who.Groups)
	if ns, name, ok := apf.SplitServiceAccount(who.UserName); ok && len(groups) == 0 {
		_, groups = apf.ServiceAccountUser(ns, name)
	}
	return who.UserName, apf.WithAuthGroup(who.UserName, groups)
}

func orUID(names map[string]string, uid string) string {
	if n, ok := names[uid]; ok {
		return n
	}
	return "unknown UID " + uid
}

func trace(r apf.Result) string {
	var b strings.Builder
	for _, s := range r.Trace {
		fmt.Fprintf(&b, "  %d %s (%d): %s", s.Position, s.FlowSchema.Name, s.FlowSchema.Spec.MatchingPrecedence, s.Outcome)
		for _, rr := range s.Rules {
			b.WriteString(" | " + rr.Why)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func imp(user string, groups ...string) rest.ImpersonationConfig {
	return rest.ImpersonationConfig{UserName: user, Groups: groups}
}

func res1(verb, group, resource, sub, ns string) apf.Request {
	return apf.Request{IsResourceRequest: true, Verb: verb, APIGroup: group, Resource: resource, Subresource: sub, Namespace: ns}
}

func url1(verb, path string) apf.Request { return apf.Request{Verb: verb, Path: path} }

var (
	byUser      = &flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodByUserType}
	byNamespace = &flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodByNamespaceType}
)

// Short names for the FlowSchema tables above; the builders are shared with
// the other packages' tests (internal/testfixtures).
var (
	fs       = testfixtures.FlowSchema
	rule     = testfixtures.Rule
	subjects = testfixtures.Subjects
	user     = testfixtures.User
	group    = testfixtures.Group
	sa       = testfixtures.ServiceAccount
	res      = testfixtures.Resources
	resRule  = testfixtures.ResourceRule
	nonRes   = testfixtures.NonResourceRule
)
