//go:build integration

package handlers

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/clusterdesk/clusterdesk/internal/edit"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// Objects these tests create carry a name prefix and a label unique to the
// run ("actions-"…), so the selectors below match them and nothing seeded.

func labelledDriverYAML(name string, labels map[string]string) string {
	y := "apiVersion: storage.k8s.io/v1\nkind: CSIDriver\nmetadata:\n  name: " + name + "\n  labels:\n"
	for k, v := range labels {
		y += "    " + k + ": \"" + v + "\"\n"
	}
	return y + "spec:\n  attachRequired: false\n"
}

// rowNames reads the names of a list page's rows (generic lists, FlowSchemas
// and the CSR queue all mark rows data-testid="list-row").
func rowNames(doc *goquery.Document) []string {
	var out []string
	doc.Find(`[data-testid="list-row"]`).Each(func(_ int, s *goquery.Selection) {
		out = append(out, strings.TrimSpace(s.Find("a[href]").First().Text()))
	})
	return out
}

// TestLabelSelectorFiltersEveryList: a selector keeps exactly the objects
// whose labels it selects, on the registry lists, the CSR queue and a CRD's
// instance list; it stays in the sort links and the live-update view URL.
func TestLabelSelectorFiltersEveryList(t *testing.T) {
	es := newEditServer(t, testcluster.Admin)
	run := uniq("actions-sel")
	a, b, c := run+"-a.clusterdesk.test", run+"-b.clusterdesk.test", run+"-c.clusterdesk.test"
	es.create(t, kube.CSIDrivers, labelledDriverYAML(a, map[string]string{"actions-run": run, "tier": "front"}))
	es.create(t, kube.CSIDrivers, labelledDriverYAML(b, map[string]string{"actions-run": run, "tier": "back"}))
	es.create(t, kube.CSIDrivers, labelledDriverYAML(c, map[string]string{"actions-other": run}))
	waitFor(t, "the cache to see the drivers", 10*time.Second, func() bool { _, err := es.cache.CSIDriver(c); return err == nil })

	for _, tc := range []struct {
		selector string
		want     []string
	}{
		{"actions-run=" + run, []string{a, b}},
		{"actions-run=" + run + ",tier=front", []string{a}},
		{"actions-run=" + run + ",tier!=front", []string{b}},
		{"actions-run in (" + run + "),tier in (back,front)", []string{a, b}},
		{"actions-other", []string{c}},
	} {
		path := "/csidrivers?" + url.Values{"selector": {tc.selector}}.Encode()
		code, doc, _ := es.get(t, es.sess, path)
		got := rowNames(doc)
		slices.Sort(got)
		if code != http.StatusOK || !slices.Equal(got, tc.want) {
			t.Errorf("%s: status %d rows %v, want %v", path, code, got, tc.want)
		}
		if v, _ := doc.Find(`[data-testid="filter-selector"]`).Attr("value"); v != tc.selector {
			t.Errorf("%s: the selector box holds %q", path, v)
		}
		view, _ := doc.Find(`[data-testid="list-table"]`).Attr("data-view-url")
		if !keepsSelector(t, view, tc.selector) {
			t.Errorf("%s: live view URL %q drops the selector", path, view)
		}
		if _, live := doc.Find(`[data-testid="list-table"]`).Attr("data-live-default"); live {
			t.Errorf("%s: a filtered view inserts live rows in place", path)
		}
		doc.Find(`thead a[href]`).Each(func(_ int, s *goquery.Selection) {
			if href, _ := s.Attr("href"); !keepsSelector(t, href, tc.selector) {
				t.Errorf("%s: sort link %q drops the selector", path, href)
			}
		})
	}

	// Every other registry list and FlowSchemas take it too (none of our
	// labels there: no rows, 200).
	for _, p := range []string{"/flowschemas", "/prioritylevels", "/crds", "/validatingwebhooks", "/mutatingwebhooks"} {
		code, doc, _ := es.get(t, es.sess, p+"?selector=actions-run%3D"+run)
		if code != http.StatusOK || len(rowNames(doc)) != 0 {
			t.Errorf("%s: status %d rows %v", p, code, rowNames(doc))
		}
		if code, _, _ = es.get(t, es.sess, p+"?selector=kubernetes.io%2Fbootstrapping%3Drbac-defaults%2C!actions-none"); code != http.StatusOK {
			t.Errorf("%s with a valid selector: status %d", p, code)
		}
	}

	// The CSR queue: label one of two CSRs.
	cs, err := kubernetes.NewForConfig(testcluster.RestConfig(t, testcluster.Admin))
	if err != nil {
		t.Fatal(err)
	}
	one := testcluster.CreateCSR(t, testcluster.CSR{Suffix: "sel1"})
	two := testcluster.CreateCSR(t, testcluster.CSR{Suffix: "sel2"})
	if _, err := cs.CertificatesV1().CertificateSigningRequests().Patch(context.Background(), one, types.MergePatchType,
		[]byte(`{"metadata":{"labels":{"actions-run":"`+run+`"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the cache to see the label", 10*time.Second, func() bool {
		o, err := es.cache.CSR(one)
		return err == nil && o.Labels["actions-run"] == run
	})
	code, doc, _ := es.get(t, es.sess, "/csrs?selector=actions-run%3D"+run)
	if got := rowNames(doc); code != http.StatusOK || !slices.Equal(got, []string{one}) {
		t.Errorf("CSR queue: status %d rows %v, want [%s] (not %s)", code, got, one, two)
	}
	doc.Find(`[data-testid^="tab-"] a[href], thead a[href]`).Each(func(_ int, s *goquery.Selection) {
		if href, _ := s.Attr("href"); !keepsSelector(t, href, "actions-run="+run) {
			t.Errorf("CSR queue link %q drops the selector", href)
		}
	})
}

func keepsSelector(t *testing.T, href, selector string) bool {
	t.Helper()
	u, err := url.Parse(href)
	if err != nil {
		t.Fatal(err)
	}
	return u.Query().Get("selector") == selector
}

// TestBadLabelSelectorIs400WithTheMessage: each list answers 400 with the
// parser's message, no rows, and the rest of the page (navigation, filter bar).
func TestBadLabelSelectorIs400WithTheMessage(t *testing.T) {
	ls := newLiveServer(t, testcluster.Admin, false)
	sess := ls.login(t)
	bad := url.Values{"selector": {"app in (web"}}.Encode()
	for _, p := range []string{"/csidrivers", "/crds", "/flowschemas", "/prioritylevels", "/validatingwebhooks", "/csrs"} {
		code, doc, _ := ls.get(t, sess, p+"?"+bad)
		msg := doc.Find(`[data-testid="selector-error"]`).Text()
		if code != http.StatusBadRequest || !strings.Contains(msg, "app in (web") || !strings.Contains(msg, "kubectl -l") {
			t.Errorf("%s: status %d, message %q", p, code, msg)
		}
		if n := len(rowNames(doc)); n != 0 {
			t.Errorf("%s: %d rows shown for a bad selector", p, n)
		}
		if doc.Find(`[data-testid="filter-form"]`).Length() != 1 || doc.Find("nav a[href]").Length() == 0 {
			t.Errorf("%s: the page around the error is missing", p)
		}
		if v, _ := doc.Find(`[data-testid="filter-selector"]`).Attr("value"); v != "app in (web" {
			t.Errorf("%s: the box lost what was typed: %q", p, v)
		}
	}
}

// TestCRInstancesTakeALabelSelector: the instance list of a CRD (a LIST as
// the user, no informer) passes the selector to the API server, keeps it in
// its paging links, and refuses a bad one with 400.
func TestCRInstancesTakeALabelSelector(t *testing.T) {
	es := newEditServer(t, testcluster.Admin)
	group := uniq("actions-sel") + ".clusterdesk.test"
	crd := es.create(t, kube.CRDs, `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gizmos.`+group+`
spec:
  group: `+group+`
  scope: Cluster
  names: {kind: Gizmo, plural: gizmos, singular: gizmo, listKind: GizmoList}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`)
	waitFor(t, "the CRD to be established", 15*time.Second, func() bool {
		c, err := es.admin.CountCustomResources(context.Background(), crd)
		return err == nil && c.Count == 0
	})
	k := kube.Kind{Group: group, Version: "v1", Resource: "gizmos", Singular: "Gizmo", Title: "Gizmos", ID: "gizmos"}
	for i, tier := range []string{"front", "back", "front"} {
		obj, err := edit.Parse("apiVersion: "+group+"/v1\nkind: Gizmo\nmetadata:\n  name: g"+string(rune('0'+i))+"\n  labels:\n    tier: "+tier+"\n",
			edit.Target{APIVersion: group + "/v1", Kind: "Gizmo"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := es.admin.Create(context.Background(), k, obj, false); err != nil {
			t.Fatal(err)
		}
	}
	base := "/crds/" + crd.GetName() + "/instances"
	code, doc, _ := es.get(t, es.sess, base+"?selector=tier%3Dfront&limit=1")
	rows := doc.Find(`[data-testid="instances-table"] tbody tr`).Length()
	next, _ := doc.Find(`[data-testid="instances-next"]`).Attr("href")
	if code != http.StatusOK || rows != 1 || !keepsSelector(t, next, "tier=front") {
		t.Fatalf("first page: status %d rows %d next %q", code, rows, next)
	}
	_, doc, _ = es.get(t, es.sess, next)
	if got := doc.Find(`[data-testid="instances-table"] tbody tr`).Text(); !strings.Contains(got, "g2") || strings.Contains(got, "g1") {
		t.Errorf("second page: %q", got)
	}
	code, doc, _ = es.get(t, es.sess, base+"?selector=tier+in+(")
	if code != http.StatusBadRequest || !strings.Contains(doc.Find(`[data-testid="selector-error"]`).Text(), "tier in (") {
		t.Errorf("bad selector: status %d %q", code, doc.Find(`[data-testid="selector-error"]`).Text())
	}
}

// TestCSRPageOffersEditAndDelete: the CSR page links the editor and the delete
// page for an identity that may, not in read-only mode; editing its labels
// through the editor works (the spec is immutable: TestEditErrorsNeverWrite).
func TestCSRPageOffersEditAndDelete(t *testing.T) {
	name := testcluster.CreateCSR(t, testcluster.CSR{Suffix: "actions"})
	es := newEditServer(t, testcluster.Admin)
	path := "/csrs/" + name
	waitFor(t, "the cache to see the CSR", 10*time.Second, func() bool { _, err := es.cache.CSR(name); return err == nil })
	_, doc, _ := es.get(t, es.sess, path)
	edit, _ := doc.Find(`[data-testid="edit-link"]`).Attr("href")
	del, _ := doc.Find(`[data-testid="delete-link"]`).Attr("href")
	if edit != path+"/edit" || del != path+"/delete" {
		t.Fatalf("CSR page: edit %q delete %q", edit, del)
	}
	ed := es.openEditor(t, edit)
	mine := strings.Replace(ed.text, "  name: "+name+"\n", "  labels:\n    actions: edited\n  name: "+name+"\n", 1)
	code, _, hdr := es.submit(t, path+"/apply", ed.form(mine))
	if code != http.StatusSeeOther || hdr.Get("Location") != path {
		t.Fatalf("apply labels: %d %q", code, hdr.Get("Location"))
	}
	if got := es.live(t, kube.CSRs, name).GetLabels()["actions"]; got != "edited" {
		t.Fatalf("label after apply: %q", got)
	}

	ro := newLiveServer(t, testcluster.Admin, true)
	_, doc, _ = ro.get(t, ro.login(t), path)
	if n := doc.Find(`[data-testid="edit-links"]`).Length(); n != 0 {
		t.Errorf("read-only mode offers %d edit links", n)
	}
	// An identity that may read CSRs but not change them gets no links.
	viewer := newLiveServer(t, testcluster.Auditor, false)
	_, doc, _ = viewer.get(t, viewer.login(t), path)
	if n := doc.Find(`[data-testid="edit-links"]`).Length(); n != 0 {
		t.Errorf("a viewer is offered %d edit links", n)
	}
}

// TestDeletePropagationReachesTheAPIServer deletes an owner CSIDriver (a
// dependent's ownerReference names it) with each policy through the delete
// page, and checks what the API server made of DeleteOptions.propagationPolicy:
// Background deletes the owner at once; Foreground and Orphan leave it, marked
// for deletion, with the finalizer the garbage collector acts on
// ("foregroundDeletion", "orphan"; apimachinery meta/v1 types.go). The
// devcluster's kube-controller-manager runs without the garbage collector
// ("controller is disabled" garbage-collector-controller in its log), so the
// dependents' fate is not observed here.
func TestDeletePropagationReachesTheAPIServer(t *testing.T) {
	es := newEditServer(t, testcluster.Admin)
	k := es.kind(t, kube.CSIDrivers)
	cs, err := kubernetes.NewForConfig(testcluster.RestConfig(t, testcluster.Admin))
	if err != nil {
		t.Fatal(err)
	}
	for policy, finalizer := range map[string]string{"Background": "", "Foreground": metav1.FinalizerDeleteDependents, "Orphan": metav1.FinalizerOrphanDependents} {
		t.Run(policy, func(t *testing.T) {
			run := uniq("actions-gc-" + strings.ToLower(policy))
			owner := es.create(t, kube.CSIDrivers, csiDriverYAML(run+"-owner.clusterdesk.test"))
			t.Cleanup(func() { // let a finalizer-held owner go
				_, _ = cs.StorageV1().CSIDrivers().Patch(context.Background(), owner.GetName(), types.MergePatchType,
					[]byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
			})
			dep := run + "-dependent.clusterdesk.test"
			es.create(t, kube.CSIDrivers, "apiVersion: storage.k8s.io/v1\nkind: CSIDriver\nmetadata:\n  name: "+dep+
				"\n  ownerReferences:\n  - apiVersion: storage.k8s.io/v1\n    kind: CSIDriver\n    name: "+owner.GetName()+
				"\n    uid: "+string(owner.GetUID())+"\n    blockOwnerDeletion: true\nspec:\n  attachRequired: false\n")
			path := "/csidrivers/" + owner.GetName() + "/delete"
			code, doc, _ := es.get(t, es.sess, path)
			uid, _ := doc.Find(`input[name="uid"]`).Attr("value")
			checked, _ := doc.Find(`[data-testid="delete-propagation"] input:checked`).Attr("value")
			if code != http.StatusOK || doc.Find(`[data-testid="delete-propagation"] input[type=radio]`).Length() != 3 || checked != "Background" {
				t.Fatalf("delete page: %d, default %q", code, checked)
			}
			code, _, hdr := es.submit(t, path, url.Values{"confirm": {owner.GetName()}, "uid": {uid}, "propagation": {policy}})
			if code != http.StatusSeeOther {
				t.Fatalf("delete: %d %q", code, hdr.Get("Location"))
			}
			got, err := es.admin.Get(context.Background(), k, owner.GetName())
			if finalizer == "" {
				if !apierrors.IsNotFound(err) {
					t.Fatalf("Background: the owner is still there: %v %v", err, got.GetFinalizers())
				}
				return
			}
			if err != nil || got.GetDeletionTimestamp() == nil || !slices.Contains(got.GetFinalizers(), finalizer) {
				t.Fatalf("%s: owner err %v, finalizers %v, deletion %v; want %q", policy, err, got.GetFinalizers(), got.GetDeletionTimestamp(), finalizer)
			}
			if d, err := es.admin.Get(context.Background(), k, dep); err != nil || len(d.GetOwnerReferences()) != 1 {
				t.Fatalf("the dependent: %v", err)
			}
		})
	}
}

// TestDeletePropagationRefusals: an unknown policy is 400 and deletes
// nothing; read-only mode and a POST without the CSRF token are refused.
func TestDeletePropagationRefusals(t *testing.T) {
	es := newEditServer(t, testcluster.Admin)
	name := uniq("actions-refuse") + ".clusterdesk.test"
	obj := es.create(t, kube.CSIDrivers, csiDriverYAML(name))
	path := "/csidrivers/" + name + "/delete"
	form := url.Values{"confirm": {name}, "uid": {string(obj.GetUID())}}

	bogus := url.Values{"confirm": {name}, "uid": {string(obj.GetUID())}, "propagation": {"Cascade"}}
	if code, _, _ := es.submit(t, path, bogus); code != http.StatusBadRequest {
		t.Errorf("unknown policy: %d", code)
	}
	// No CSRF token: a cross-site form post.
	r := httptest.NewRequest(http.MethodPost, path, strings.NewReader(form.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.AddCookie(es.sess)
	if rec := es.do(r); rec.Code != http.StatusForbidden {
		t.Errorf("without a CSRF token: %d", rec.Code)
	}
	ro := newLiveServer(t, testcluster.Admin, true)
	if rec := ro.post(t, ro.login(t), path, form); rec.Code != http.StatusForbidden {
		t.Errorf("read-only: %d", rec.Code)
	}
	if _, err := es.admin.Get(context.Background(), es.kind(t, kube.CSIDrivers), name); err != nil {
		t.Fatalf("a refused delete deleted: %v", err)
	}
}
