//go:build integration

package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// TestCleanupOfCustomResources: a CRD of this test's own with test instances
// in two namespaces and one to keep; "labels test=yes" previews and deletes
// exactly the three labelled ones (each by its UID), as the
// user, and the unlabelled one survives.
func TestCleanupOfCustomResources(t *testing.T) {
	ls := newCleanupServer(t, testcluster.Admin, false)
	sess := ls.login(t)
	crd, res, create := ls.gadgets(t, "c")
	test := map[string]any{"test": "yes"}
	create("default", "a", test)
	create("default", "b", test)
	create("kube-public", "c", test)
	create("default", "keep", map[string]any{"test": "no"})

	base := "/crds/" + crd.Name + "/instances"
	_, list, _ := ls.get(t, sess, base)
	if list.Find(`[data-testid="cleanup-link"]`).Length() != 1 {
		t.Error("the instances page offers no cleanup")
	}
	doc, form := ls.previewForm(t, sess, base+"/-/cleanup?selector="+url.QueryEscape("test=yes"))
	if n := previewCount(t, doc); n != 3 || doc.Find(`[data-testid="cleanup-item"][data-result="would be deleted"]`).Length() != 3 {
		t.Fatalf("preview: %d, want 3 passing the dry run: %s", n, squash(doc.Selection))
	}
	if doc.Find(`[data-testid="cleanup-item"][data-namespace="kube-public"][data-name="c"]`).Length() != 1 {
		t.Error("the preview does not name kube-public/c")
	}
	rec := ls.post(t, sess, base+"/-/cleanup/confirm", form)
	if result := postDoc(t, rec); rec.Code != http.StatusOK || resultCount(result, "deleted") != 3 {
		t.Fatalf("confirm: status %d: %s", rec.Code, squash(result.Selection))
	}
	for _, o := range []struct{ ns, name string }{{"default", "a"}, {"default", "b"}, {"kube-public", "c"}} {
		if _, err := res.Namespace(o.ns).Get(context.Background(), o.name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("%s/%s still there: %v", o.ns, o.name, err)
		}
	}
	if _, err := res.Namespace("default").Get(context.Background(), "keep", metav1.GetOptions{}); err != nil {
		t.Errorf("the unlabelled object was deleted: %v", err)
	}
}

// TestCleanupOfTickedCustomResources: the instances page's tick boxes name
// each object with its namespace and UID. Two ticked objects go; the object
// of the same name in the other namespace stays; a ticked object deleted and
// created again since the page was read is refused as replaced, not deleted.
func TestCleanupOfTickedCustomResources(t *testing.T) {
	ls := newCleanupServer(t, testcluster.Admin, false)
	sess := ls.login(t)
	crd, res, createLabelled := ls.gadgets(t, "t")
	create := func(ns, name string) { createLabelled(ns, name, nil) }
	exists := func(ns, name string) bool {
		_, err := res.Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		return err == nil
	}
	create("default", "one")
	create("kube-public", "one")
	create("kube-public", "two")
	create("default", "replaced")

	base := "/crds/" + crd.Name + "/instances"
	_, list, _ := ls.get(t, sess, base)
	if list.Find(`[data-testid="bulk-delete"]`).Length() != 1 || list.Find(`[data-testid="row-tick"]`).Length() != 4 {
		t.Fatalf("the instances page offers no tick boxes for its 4 objects: %s", squash(list.Selection))
	}
	tickOf := func(ns, name string) string {
		t.Helper()
		v, ok := list.Find(`tr[id="cr-` + ns + `-` + name + `"] [data-testid="row-tick"]`).Attr("value")
		if !ok {
			t.Fatalf("no tick box for %s/%s", ns, name)
		}
		return v
	}
	ticked := url.Values{"names": {tickOf("default", "one"), tickOf("kube-public", "two"), tickOf("default", "replaced")}}
	// Replaced under the same name after the page was read.
	if err := res.Namespace("default").Delete(context.Background(), "replaced", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	create("default", "replaced")

	rec := ls.post(t, sess, base+"/-/cleanup", ticked)
	doc := postDoc(t, rec)
	if rec.Code != http.StatusOK || previewCount(t, doc) != 2 {
		t.Fatalf("preview of 3 ticked (one replaced): status %d: %s", rec.Code, squash(doc.Selection))
	}
	for _, o := range []struct{ ns, name string }{{"default", "one"}, {"kube-public", "two"}} {
		if doc.Find(`[data-testid="cleanup-item"][data-namespace="`+o.ns+`"][data-name="`+o.name+`"]`).Length() != 1 {
			t.Errorf("the preview does not name %s/%s: %s", o.ns, o.name, squash(doc.Selection))
		}
	}
	rec = ls.post(t, sess, base+"/-/cleanup/confirm", hiddenFields(doc.Find(`[data-testid="cleanup-form"]`)))
	if result := postDoc(t, rec); rec.Code != http.StatusOK || resultCount(result, "deleted") != 2 {
		t.Fatalf("confirm: status %d: %s", rec.Code, squash(result.Selection))
	}
	if exists("default", "one") || exists("kube-public", "two") {
		t.Error("a ticked object is still there")
	}
	if !exists("kube-public", "one") {
		t.Error("kube-public/one, not ticked but named like a ticked object, was deleted")
	}
	if !exists("default", "replaced") {
		t.Error("the object created again under a ticked name was deleted")
	}

	// A hand-made value that names no object is a 400 in words.
	rec = ls.post(t, sess, base+"/-/cleanup", url.Values{"names": {"no-uid"}})
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "does not say which object it is") {
		t.Errorf("a bad tick value: status %d: %.300s", rec.Code, rec.Body.String())
	}
}

// gadgets installs a Gadget CRD of the test's own (group prefix<nanos>) and
// waits until ls's cache holds it. It returns the CRD, the objects' dynamic
// resource (as admin) and a func that creates one in a namespace.
func (ls *liveServer) gadgets(t *testing.T, prefix string) (*apiextensionsv1.CustomResourceDefinition, dynamic.NamespaceableResourceInterface, func(ns, name string, labels map[string]any)) {
	t.Helper()
	group := fmt.Sprintf("%s%d.clusterdesk.test", prefix, time.Now().UnixNano())
	crd := gadgetCRD("gadgets", group)
	installCRD(t, crd)
	waitFor(t, "the cache to see the CRD", 20*time.Second, func() bool { _, err := ls.cache.CRD(crd.Name); return err == nil })
	res := dynamic.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin)).
		Resource(schema.GroupVersionResource{Group: group, Version: "v1", Resource: "gadgets"})
	create := func(ns, name string, labels map[string]any) {
		t.Helper()
		meta := map[string]any{"name": name}
		if labels != nil {
			meta["labels"] = labels
		}
		obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": group + "/v1", "kind": "Gadget", "metadata": meta}}
		if _, err := res.Namespace(ns).Create(context.Background(), obj, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return crd, res, create
}
