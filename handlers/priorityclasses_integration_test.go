//go:build integration

package handlers

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// TestPriorityClassPagesOnTheDevcluster: the read-only kind added as one
// registry entry (issue 44) lists the API server's own classes and one an
// admin creates, to the auditor (whose ClusterRole grants it, like the
// console's), with a detail page; even an admin gets no New, Edit or cleanup
// for it.
func TestPriorityClassPagesOnTheDevcluster(t *testing.T) {
	ctx := context.Background()
	api := kubernetes.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin)).SchedulingV1().PriorityClasses()
	name := fmt.Sprintf("registry-it-batch-%d", time.Now().UnixNano())
	never := corev1.PreemptNever
	if _, err := api.Create(ctx, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: -7,
		PreemptionPolicy: &never, Description: "batch jobs that wait"}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = api.Delete(ctx, name, metav1.DeleteOptions{}) })

	auditor := newLiveServer(t, testcluster.Auditor, false)
	sess := auditor.login(t)
	waitFor(t, "the created class in the auditor's list", 15*time.Second, func() bool {
		code, doc, _ := auditor.get(t, sess, "/priorityclasses?q="+name)
		return code == http.StatusOK && doc.Find(`[data-testid="list-row"]`).Length() == 1
	})
	code, doc, _ := auditor.get(t, sess, "/priorityclasses")
	if code != http.StatusOK {
		t.Fatalf("list: status %d", code)
	}
	for _, system := range []string{"system-cluster-critical", "system-node-critical"} {
		if doc.Find(`#row-priorityclasses-`+system).Length() != 1 {
			t.Errorf("the API server's own class %s is not listed", system)
		}
	}
	row := strings.Join(strings.Fields(doc.Find(`#row-priorityclasses-`+name).Text()), " ")
	for _, want := range []string{"-7", "Never", "batch jobs that wait"} {
		if !strings.Contains(row, want) {
			t.Errorf("row %q lacks %q", row, want)
		}
	}

	code, detail, _ := auditor.get(t, sess, "/priorityclasses/system-node-critical")
	status := strings.TrimSpace(detail.Find(`[data-testid="detail-status"]`).Text())
	if code != http.StatusOK || status != "System" || !strings.Contains(detail.Find(`[data-testid="yaml"]`).Text(), "value: 2000001000") {
		t.Errorf("system class detail: status %d, badge %q", code, status)
	}
	if code, _, _ := auditor.get(t, sess, "/priorityclasses/no-such-class-xyz"); code != http.StatusNotFound {
		t.Errorf("unknown class: status %d, want 404", code)
	}

	admin := newLiveServer(t, testcluster.Admin, false)
	asAdmin := admin.login(t)
	_, list, _ := admin.get(t, asAdmin, "/priorityclasses")
	if list.Find(`[data-testid="new-link"]`).Length() != 0 || list.Find(`[data-testid="cleanup-link"]`).Length() != 0 {
		t.Error("a read-only kind's list offers New or Clean up")
	}
	if code, _, _ := admin.get(t, asAdmin, "/priorityclasses/"+name+"/edit"); code != http.StatusNotFound {
		t.Errorf("editor of a read-only kind: status %d, want 404", code)
	}
}
