//go:build integration

package handlers

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// TestInterceptMatchConditionsAgreeWithTheAPIServer registers webhooks with
// CEL matchConditions that call a recording server, makes real requests as
// impersonated users, and checks that for each request the simulator's
// evaluation of every webhook's matchConditions agrees with whether the API
// server called it (or rejected the request for a condition error under
// failurePolicy Fail).
func TestInterceptMatchConditionsAgreeWithTheAPIServer(t *testing.T) {
	cfg := testcluster.RestConfig(t, testcluster.Admin)
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, bg := context.Background(), context.Background()
	sfx := strings.ReplaceAll(time.Now().Format("150405.000000"), ".", "")
	ns := "cel-" + sfx
	alice, bob, devs := "cel-"+sfx+"-alice", "cel-"+sfx+"-bob", "cel-devs-"+sfx
	mustCreate(t, func() error {
		_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		return err
	})
	t.Cleanup(func() { _ = cs.CoreV1().Namespaces().Delete(bg, ns, metav1.DeleteOptions{}) })
	// Both users may write ConfigMaps; only alice may list Secrets (what the
	// authorizer condition asks).
	for _, r := range []struct {
		name, resource string
		verbs          []string
		users          []string
	}{
		{"cm-writers", "configmaps", []string{"get", "create", "update", "delete"}, []string{alice, bob}},
		{"secret-listers", "secrets", []string{"list"}, []string{alice}},
	} {
		mustCreate(t, func() error {
			_, err := cs.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: r.name},
				Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{r.resource}, Verbs: r.verbs}}}, metav1.CreateOptions{})
			return err
		})
		rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: r.name}, RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: r.name}}
		for _, u := range r.users {
			rb.Subjects = append(rb.Subjects, rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: u})
		}
		mustCreate(t, func() error {
			_, err := cs.RbacV1().RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{})
			return err
		})
	}

	rec := &recorder{calls: map[string][]string{}}
	srv, caPEM := tlsServer(t, rec)
	type hook struct {
		name  string
		fail  bool
		oSel  *metav1.LabelSelector
		conds []string
	}
	hooks := []hook{
		{name: "obj-blue", conds: []string{`has(object.metadata.labels) && 'team' in object.metadata.labels && object.metadata.labels['team'] == 'blue'`}},
		{name: "data-two", conds: []string{`has(object.data) && size(object.data) >= 2`}},
		{name: "old-data-changed", conds: []string{`request.operation == 'UPDATE'`, `(has(oldObject.data) ? oldObject.data : {}) != (has(object.data) ? object.data : {})`}},
		{name: "user-alice", conds: []string{`request.userInfo.username.endsWith('-alice')`}},
		{name: "group-devs", conds: []string{`request.userInfo.groups.exists(g, g.startsWith('cel-devs-'))`}},
		{name: "authz-secrets", conds: []string{`authorizer.group('').resource('secrets').namespace(request.namespace).check('list').allowed()`}},
		{name: "ns-object", conds: []string{`namespaceObject != null && namespaceObject.metadata.name == request.namespace`}},
		{name: "err-ignore", conds: []string{`object.data.mode == 'on'`}},
		{name: "err-fail", fail: true, oSel: &metav1.LabelSelector{MatchLabels: map[string]string{"cel-fail": "yes"}}, conds: []string{`object.data.mode == 'on'`}},
		{name: "false-beats-error", fail: true, conds: []string{`object.data.nokey == 'x'`, `request.name == 'never'`}},
		{name: "two-true", conds: []string{`size(object.metadata.name) > 3`, `!has(object.metadata.annotations)`}},
		{name: "delete-old", conds: []string{`request.operation == 'DELETE' && object == null && oldObject.metadata.name.startsWith('k')`}},
	}
	vwcName := "cel-" + sfx
	vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: vwcName}}
	for _, h := range hooks {
		fp := admissionregistrationv1.Ignore
		if h.fail {
			fp = admissionregistrationv1.Fail
		}
		w := admissionregistrationv1.ValidatingWebhook{
			Name: h.name + ".cel.clusterdesk.dev", AdmissionReviewVersions: []string{"v1"},
			SideEffects: ptr.To(admissionregistrationv1.SideEffectClassNone), FailurePolicy: &fp, TimeoutSeconds: ptr.To[int32](5),
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}}, ObjectSelector: h.oSel,
			ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: ptr.To(srv.URL + "/" + h.name), CABundle: caPEM},
			Rules: []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{"CREATE", "UPDATE", "DELETE"},
				Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}},
		}
		for i, c := range h.conds {
			w.MatchConditions = append(w.MatchConditions, admissionregistrationv1.MatchCondition{Name: "c" + string(rune('1'+i)), Expression: c})
		}
		vwc.Webhooks = append(vwc.Webhooks, w)
	}
	mustCreate(t, func() error {
		_, err := cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, vwc, metav1.CreateOptions{})
		return err
	})
	t.Cleanup(func() {
		_ = cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(bg, vwcName, metav1.DeleteOptions{})
	})

	as := func(user string, groups ...string) *kubernetes.Clientset {
		c := rest.CopyConfig(cfg)
		c.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: groups}
		return kubernetes.NewForConfigOrDie(c)
	}
	aliceCS, bobCS := as(alice, devs), as(bob)
	dry := []string{metav1.DryRunAll}
	cm := func(name string, lbl, data map[string]string) *corev1.ConfigMap {
		return &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: lbl}, Data: data}
	}
	// Wait until the API server's webhook informer has the configuration:
	// "two-true" is called for any long-named ConfigMap without annotations.
	for i := 0; ; i++ {
		name := "warmup-" + sfx + "-" + string(rune('a'+i%26)) + strings.Repeat("x", i/26)
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm(name, nil, nil), metav1.CreateOptions{DryRun: dry}); err != nil {
			t.Fatal(err)
		}
		if slices.Contains(rec.got("CREATE "+name), "two-true") {
			break
		}
		if i > 200 {
			t.Fatal("the API server never called the recording webhook")
		}
		time.Sleep(100 * time.Millisecond)
	}
	// Stored objects for UPDATE and DELETE (created for real; their creation is recorded under CREATE).
	for _, o := range []*corev1.ConfigMap{cm("k03", nil, map[string]string{"a": "1"}), cm("k04", map[string]string{"team": "red"}, map[string]string{"a": "1"}), cm("k09", nil, nil)} {
		mustCreate(t, func() error { _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, o, metav1.CreateOptions{}); return err })
	}

	toYAML := func(o *corev1.ConfigMap) string {
		if o == nil {
			return ""
		}
		b, err := yaml.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	type celCase struct {
		name, op, label string
		client          *kubernetes.Clientset
		user, groups    string
		obj             *corev1.ConfigMap
		update          func(*corev1.ConfigMap) // UPDATE: changes the stored object
	}
	authGroups := func(g ...string) string { return strings.Join(append(g, "system:authenticated"), ",") }
	cases := []celCase{
		{name: "k01", op: "CREATE", label: "alice in devs, blue, two data keys", client: aliceCS, user: alice, groups: authGroups(devs),
			obj: cm("k01", map[string]string{"team": "blue"}, map[string]string{"a": "1", "b": "2"})},
		{name: "k02", op: "CREATE", label: "bob, red, mode on", client: bobCS, user: bob, groups: authGroups(),
			obj: cm("k02", map[string]string{"team": "red"}, map[string]string{"mode": "on"})},
		{name: "k03", op: "UPDATE", label: "alice changes the data (oldObject differs)", client: aliceCS, user: alice, groups: authGroups(devs),
			update: func(o *corev1.ConfigMap) { o.Data = map[string]string{"a": "2", "mode": "off"} }},
		{name: "k04", op: "UPDATE", label: "bob relabels to blue, data unchanged", client: bobCS, user: bob, groups: authGroups(),
			update: func(o *corev1.ConfigMap) { o.Labels = map[string]string{"team": "blue"} }},
		{name: "k05", op: "CREATE", label: "failurePolicy Fail with an erroring condition: rejected", client: bobCS, user: bob, groups: authGroups(),
			obj: cm("k05", map[string]string{"cel-fail": "yes"}, map[string]string{"a": "1"})},
		{name: "k06", op: "CREATE", label: "failurePolicy Fail, the condition holds: called", client: aliceCS, user: alice, groups: authGroups(devs),
			obj: cm("k06", map[string]string{"cel-fail": "yes"}, map[string]string{"mode": "on", "nokey": "y"})},
		{name: "k07", op: "CREATE", label: "admin, annotated, no data", client: cs, user: "", groups: "",
			obj: &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
				ObjectMeta: metav1.ObjectMeta{Name: "k07", Namespace: ns, Annotations: map[string]string{"a": "b"}}}},
		{name: "k08", op: "CREATE", label: "alice, data.mode off (err-ignore false)", client: aliceCS, user: alice, groups: authGroups(devs),
			obj: cm("k08", nil, map[string]string{"mode": "off", "nokey": "x"})},
		{name: "k09", op: "DELETE", label: "alice deletes: object null, oldObject set", client: aliceCS, user: alice, groups: authGroups(devs)},
	}
	admin, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// The admin's identity as the API server sees it, for case k07.
	who, err := admin.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cases[6].user, cases[6].groups = who.Status.UserInfo.Username, strings.Join(who.Status.UserInfo.Groups, ",")

	ls := newLiveServer(t, testcluster.Admin, false)
	sess := ls.login(t)
	waitFor(t, "the cache to hold the configuration", 30*time.Second, func() bool { _, err := ls.cache.Webhook(vwcName); return err == nil })
	compared, calls, rejected := 0, 0, 0
	evalTimes := []string{}
	for _, tc := range cases {
		t.Run(tc.name+" "+tc.label, func(t *testing.T) {
			form := url.Values{"operation": {tc.op}, "version": {"v1"}, "resource": {"configmaps"}, "namespace": {ns},
				"user": {tc.user}, "groups": {tc.groups}}
			var reqErr error
			switch tc.op {
			case "CREATE":
				form.Set("object", toYAML(tc.obj))
				form.Set("labels", labelsText(tc.obj.Labels))
				_, reqErr = tc.client.CoreV1().ConfigMaps(ns).Create(ctx, tc.obj, metav1.CreateOptions{DryRun: dry})
			case "UPDATE":
				old, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, tc.name, metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				old.APIVersion, old.Kind = "v1", "ConfigMap"
				updated := old.DeepCopy()
				tc.update(updated)
				form.Set("oldObject", toYAML(old))
				form.Set("object", toYAML(updated))
				form.Set("labels", labelsText(updated.Labels))
				form.Set("oldLabels", labelsText(old.Labels))
				_, reqErr = tc.client.CoreV1().ConfigMaps(ns).Update(ctx, updated, metav1.UpdateOptions{DryRun: dry})
			case "DELETE":
				old, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, tc.name, metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				old.APIVersion, old.Kind = "v1", "ConfigMap"
				form.Set("oldObject", toYAML(old))
				form.Set("oldLabels", labelsText(old.Labels))
				reqErr = tc.client.CoreV1().ConfigMaps(ns).Delete(ctx, tc.name, metav1.DeleteOptions{DryRun: dry})
			}
			got := rec.got(tc.op + " " + tc.name)
			sim := simulate(t, ls, sess, form, vwcName)
			evalTimes = append(evalTimes, sim.times...)
			if len(sim.rejectedBy) > 0 {
				rejected++
				if !apierrors.IsForbidden(reqErr) || len(got) > 0 {
					t.Errorf("the simulator says %v reject the request; the API server answered %v and called %v", sim.rejectedBy, reqErr, got)
				}
				t.Logf("rejected by %v: %v", sim.rejectedBy, reqErr)
				return
			}
			if reqErr != nil {
				t.Fatalf("request: %v", reqErr)
			}
			compared += len(hooks)
			calls += len(got)
			if !slices.Equal(got, sim.called) {
				t.Errorf("API server called %v; the simulator says %v\n%s", got, sim.called, sim.detail)
			}
			t.Logf("called: %v", got)
		})
	}
	t.Logf("%d webhook×request comparisons, %d calls, %d rejections; evaluation times: %v", compared, calls, rejected, evalTimes)
	if calls < len(cases) || rejected == 0 {
		t.Errorf("only %d calls and %d rejections: the cases prove little", calls, rejected)
	}
}

// simulation is what the simulator page says about a configuration's webhooks.
type simulation struct {
	called, rejectedBy []string // short names
	times              []string // "evaluated in …" per webhook
	detail             string
}

func simulate(t *testing.T, ls *liveServer, sess *http.Cookie, form url.Values, cfg string) simulation {
	t.Helper()
	code, doc, _ := ls.get(t, sess, "/validatingwebhooks/intercept?"+form.Encode())
	if code != http.StatusOK {
		t.Fatalf("form: status %d: %s", code, doc.Find(`[data-testid$="-error"]`).Text())
	}
	var s simulation
	doc.Find(`[data-testid="intercept-row"]`).Each(func(_ int, row *goquery.Selection) {
		cells := row.Find("td")
		if strings.TrimSpace(cells.Eq(2).Text()) != cfg {
			return
		}
		name := strings.TrimSuffix(strings.TrimSpace(cells.Eq(3).Text()), ".cel.clusterdesk.dev")
		verdict := strings.TrimSpace(cells.Eq(4).Text())
		switch verdict {
		case "called":
			s.called = append(s.called, name)
		case "request rejected":
			s.rejectedBy = append(s.rejectedBy, name)
		case "unknown":
			t.Errorf("%s: unknown, though the console's identity may ask SubjectAccessReviews", name)
		}
		why := strings.Join(strings.Fields(cells.Eq(5).Text()), " ")
		if i := strings.Index(why, "evaluated in "); i >= 0 {
			s.times = append(s.times, strings.TrimSuffix(strings.Fields(why[i+len("evaluated in "):])[0], "."))
		}
		s.detail += name + ": " + verdict + ": " + strings.Join(strings.Fields(cells.Eq(6).Text()), " ") + "\n"
	})
	slices.Sort(s.called)
	return s
}

func labelsText(l map[string]string) string {
	var parts []string
	for k, v := range l {
		parts = append(parts, k+"="+v)
	}
	return strings.Join(parts, ",")
}
