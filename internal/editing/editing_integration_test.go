//go:build integration

package editing

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/clusterdesk/clusterdesk/internal/edit"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// liveCache answers Meta from the API server: the devcluster's truth, for a
// test that runs no informers.
type liveCache struct{ e *kube.Editor }

func (c liveCache) Meta(id kube.KindID, name string) (metav1.Object, error) {
	return c.e.Get(context.Background(), kindOf(id), name)
}

func kindOf(id kube.KindID) kube.Kind {
	for _, k := range kube.AllKinds() {
		if k.ID == id {
			if k.Version == "" {
				k.Version = "v1" // the devcluster serves flowcontrol v1
			}
			return k
		}
	}
	panic(id)
}

// TestEditingOnTheDevcluster runs the editor's use cases against the real
// kube-apiserver as the admin, without echo: create, the preview's dry-run
// answer, an apply from a stale resourceVersion (a conflict), the rebase onto
// the current version and the apply after it, and a deletion guarded by the
// UID the user saw.
func TestEditingOnTheDevcluster(t *testing.T) {
	ctx := context.Background()
	api, err := kube.NewEditor(testcluster.RestConfig(t, testcluster.Admin))
	if err != nil {
		t.Fatal(err)
	}
	k := kindOf(kube.CSIDrivers)
	name := fmt.Sprintf("usecase-edit-%d.clusterdesk.test", time.Now().UnixNano())
	audit := &audits{}
	s := &Service{API: api, Cache: liveCache{api}, Audit: audit}
	t.Cleanup(func() {
		if _, err := api.Delete(context.Background(), k, name, "", false, ""); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("cleanup: %v", err)
		}
	})

	text := "apiVersion: storage.k8s.io/v1\nkind: CSIDriver\nmetadata:\n  name: " + name +
		"\n  annotations:\n    usecase-edit/seen: \"0\"\n  labels:\n    usecase-edit/mine: \"0\"\nspec:\n  attachRequired: false\n"
	// Create: the preview stores nothing, then the creation.
	out, err := s.Create(ctx, Change{Kind: k, Text: text, DryRun: true})
	if err != nil || out.Written || out.Answer == nil {
		t.Fatalf("create preview: %+v, %v", out, err)
	}
	if _, err := api.Get(ctx, k, name); !apierrors.IsNotFound(err) {
		t.Fatalf("the preview stored the object: %v", err)
	}
	if out, err = s.Create(ctx, Change{Kind: k, Text: text, Cached: true}); err != nil || !out.Written || out.Name != name {
		t.Fatalf("create: %+v, %v", out, err)
	}

	// The user opens the editor at this version.
	opened, err := s.Read(ctx, k, name)
	if err != nil {
		t.Fatal(err)
	}
	base, err := edit.Text(opened, false)
	if err != nil {
		t.Fatal(err)
	}
	mine := strings.Replace(base, `usecase-edit/mine: "0"`, `usecase-edit/mine: "1"`, 1)
	change := Change{Kind: k, Name: name, Text: mine, ResourceVersion: opened.GetResourceVersion(), BaseText: base, Cached: true}

	// Preview: the API server's dry-run answer, nothing stored.
	preview := change
	preview.DryRun = true
	out, err = s.Update(ctx, preview)
	if err != nil || out.Written || out.Answer.GetLabels()["usecase-edit/mine"] != "1" {
		t.Fatalf("preview: %+v, %v", out, err)
	}
	if now, _ := api.Get(ctx, k, name); now.GetResourceVersion() != opened.GetResourceVersion() {
		t.Fatalf("the preview stored a version: %s → %s", opened.GetResourceVersion(), now.GetResourceVersion())
	}

	// Someone else changes it meanwhile: the apply from the opened version is a conflict.
	other := opened.DeepCopy()
	other.SetAnnotations(map[string]string{"usecase-edit/seen": "1"})
	if _, err := api.Update(ctx, k, other, false); err != nil {
		t.Fatal(err)
	}
	before := len(audit.writes)
	out, err = s.Update(ctx, change)
	if !apierrors.IsConflict(err) || out.Conflict == nil || out.Conflict.Err != nil {
		t.Fatalf("stale apply: %+v, %v", out, err)
	}
	current := out.Conflict.Current
	if current.GetAnnotations()["usecase-edit/seen"] != "1" || current.GetResourceVersion() == opened.GetResourceVersion() {
		t.Errorf("the conflict does not show the current version: %v", current.Object["metadata"])
	}
	if w := audit.writes[before]; w.Err == nil || !w.DryRun || w.From == nil {
		t.Errorf("the refused dry run's record: %+v", w)
	}

	// Rebase: the user's change replayed onto the current version, then applied.
	r, err := s.Rebase(ctx, Rebase{Kind: k, Name: name, Text: mine, BaseText: base})
	if err != nil || r.Version != current.GetResourceVersion() {
		t.Fatalf("rebase: %+v, %v", r, err)
	}
	if !strings.Contains(r.Text, `usecase-edit/mine: "1"`) || !strings.Contains(r.Text, `usecase-edit/seen: "1"`) {
		t.Fatalf("the rebase lost a change:\n%s", r.Text)
	}
	out, err = s.Update(ctx, Change{Kind: k, Name: name, Text: r.Text, ResourceVersion: r.Version, BaseText: r.CurrentText, Cached: true})
	if err != nil || !out.Written {
		t.Fatalf("apply after rebase: %+v, %v", out, err)
	}
	stored, err := api.Get(ctx, k, name)
	if err != nil || stored.GetLabels()["usecase-edit/mine"] != "1" || stored.GetAnnotations()["usecase-edit/seen"] != "1" || stored.GetResourceVersion() != out.After {
		t.Fatalf("stored %v at %s, want both changes at %s (%v)", stored.Object["metadata"], stored.GetResourceVersion(), out.After, err)
	}

	// Delete: the plan's dry run passes; a UID other than the object's is refused by the API server.
	plan, err := s.PlanDelete(ctx, k, name)
	if err != nil || plan.DryRunErr != nil || plan.Object.GetUID() != stored.GetUID() {
		t.Fatalf("plan: %+v, %v", plan, err)
	}
	gone, err := s.Delete(ctx, Deletion{Kind: k, Name: name, UID: "00000000-0000-0000-0000-000000000000", Cached: true})
	if !apierrors.IsConflict(err) || gone.PlanErr != nil || gone.Plan.Object.GetUID() != stored.GetUID() {
		t.Fatalf("delete of another UID: %+v, %v", gone, err)
	}
	if _, err := api.Get(ctx, k, name); err != nil {
		t.Fatalf("deleted despite the UID precondition: %v", err)
	}
	if _, err = s.Delete(ctx, Deletion{Kind: k, Name: name, UID: string(stored.GetUID()), Cached: true}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if _, err := api.Get(ctx, k, name); !apierrors.IsNotFound(err) {
		t.Fatalf("still there after the deletion: %v", err)
	}
	last := audit.writes[len(audit.writes)-1]
	if last.Verb != "delete" || last.DryRun || last.From == nil || last.Before != stored.GetResourceVersion() {
		t.Errorf("the deletion's record: %+v", last)
	}
}
