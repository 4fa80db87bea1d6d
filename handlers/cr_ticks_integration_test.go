//go:build integration

package handlers

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// TestNamespaceAdminTicksOnlyTheirNamespace: a user who may list a CRD's
// objects everywhere but delete them in "default" only (a RoleBinding, as a
// namespace admin has) gets tick boxes on the rows in default and none on
// the rows in kube-public, and deletes a ticked one. Before, the boxes were
// all or nothing on an access review for every namespace, so this user got
// none at all.
func TestNamespaceAdminTicksOnlyTheirNamespace(t *testing.T) {
	admin := newCleanupServer(t, testcluster.Admin, false)
	crd, res, create := admin.gadgets(t, "n")
	create("default", "mine", nil)
	create("kube-public", "theirs", nil)

	cs := kubernetes.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin))
	name := "it-nsadmin-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	group := crd.Spec.Group
	read := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: []rbacv1.PolicyRule{
		{Verbs: []string{"get", "list", "watch"}, APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"}},
		{Verbs: []string{"get", "list", "watch"}, APIGroups: []string{group}, Resources: []string{"gadgets"}},
	}}
	del := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Rules: []rbacv1.PolicyRule{
		{Verbs: []string{"delete"}, APIGroups: []string{group}, Resources: []string{"gadgets"}},
	}}
	subject := []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: name}}
	ctx := context.Background()
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, read, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.RbacV1().ClusterRoles().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name}, Subjects: subject}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.RbacV1().ClusterRoleBindings().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	if _, err := cs.RbacV1().Roles("default").Create(ctx, del, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.RbacV1().Roles("default").Delete(context.Background(), name, metav1.DeleteOptions{}) })
	if _, err := cs.RbacV1().RoleBindings("default").Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name}, Subjects: subject}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.RbacV1().RoleBindings("default").Delete(context.Background(), name, metav1.DeleteOptions{})
	})

	cfg := rest.CopyConfig(testcluster.RestConfig(t, testcluster.Admin))
	cfg.Impersonate = rest.ImpersonationConfig{UserName: name}
	// Each try asks with a new Access: one keeps an answer 30 s, so a "no"
	// asked before the authorizer saw the bindings would be all 10 s could get.
	var probe *kube.Access
	waitFor(t, "the roles to take effect", 10*time.Second, func() bool {
		var err error
		if probe, err = kube.NewAccess(cfg); err != nil {
			t.Fatal(err)
		}
		ok, err := probe.CanIn(ctx, "delete", "default", group, "gadgets")
		return ok && err == nil
	})
	if ok, err := probe.Can(ctx, "delete", group, "gadgets", "", ""); ok || err != nil {
		t.Fatalf("the user may delete gadgets in every namespace (%v, %v): the test needs one who may not", ok, err)
	}
	ls := newLiveServerWith(t, cfg, name, false, func(d *Deps) {
		ed, err := kube.NewEditor(cfg)
		if err != nil {
			t.Fatal(err)
		}
		d.Editor = ed
	})
	sess := ls.login(t)

	base := "/crds/" + crd.Name + "/instances"
	code, list, _ := ls.get(t, sess, base)
	if code != http.StatusOK || list.Find(`tr[id^="cr-"]`).Length() != 2 {
		t.Fatalf("instances page: status %d: %s", code, squash(list.Selection))
	}
	mine := list.Find(`tr[id="cr-default-mine"] [data-testid="row-tick"]`)
	if mine.Length() != 1 || list.Find(`tr[id="cr-kube-public-theirs"] [data-testid="row-tick"]`).Length() != 0 {
		t.Fatalf("boxes: %d on default/mine (want 1), %d on kube-public/theirs (want 0)",
			mine.Length(), list.Find(`tr[id="cr-kube-public-theirs"] [data-testid="row-tick"]`).Length())
	}
	if list.Find(`[data-testid="bulk-delete"]`).Length() != 1 {
		t.Fatal(`no "Delete selected…" for the ticked rows`)
	}

	rec := ls.post(t, sess, base+"/-/cleanup", url.Values{"names": {mine.AttrOr("value", "")}})
	doc := postDoc(t, rec)
	if rec.Code != http.StatusOK || previewCount(t, doc) != 1 || doc.Find(`[data-testid="cleanup-item"][data-result="would be deleted"]`).Length() != 1 {
		t.Fatalf("preview of default/mine: status %d: %s", rec.Code, squash(doc.Selection))
	}
	rec = ls.post(t, sess, base+"/-/cleanup/confirm", hiddenFields(doc.Find(`[data-testid="cleanup-form"]`)))
	if result := postDoc(t, rec); rec.Code != http.StatusOK || resultCount(result, "deleted") != 1 {
		t.Fatalf("confirm: status %d: %s", rec.Code, squash(result.Selection))
	}
	if _, err := res.Namespace("kube-public").Get(ctx, "theirs", metav1.GetOptions{}); err != nil {
		t.Errorf("kube-public/theirs: %v", err)
	}
}
