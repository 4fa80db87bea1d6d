//go:build integration

package flowschemaform

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/clusterdesk/clusterdesk/internal/apf"
	"github.com/clusterdesk/clusterdesk/internal/edit"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// liveCache answers Meta from the API server, for a test without informers.
type liveCache struct{ e *kube.Editor }

func (c liveCache) Meta(_ kube.KindID, name string) (metav1.Object, error) {
	return c.e.Get(context.Background(), flowSchemas, name)
}

// TestSubmitOnTheDevcluster runs the FlowSchema form's use case against the
// real kube-apiserver (flowcontrol v1) as the admin, without echo: create,
// update, a precedence of 0 the server would default, and a conflict when
// the spec changed under the form.
func TestSubmitOnTheDevcluster(t *testing.T) {
	ctx := context.Background()
	api, err := kube.NewEditor(testcluster.RestConfig(t, testcluster.Admin))
	if err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("usecase-edit-fs-%d", time.Now().UnixNano())
	t.Cleanup(func() {
		if _, err := api.Delete(context.Background(), flowSchemas, name, "", false, ""); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("cleanup: %v", err)
		}
	})
	s := &Service{API: api, Cache: liveCache{api}, Audit: &audits{}}

	// Create: Preview stores nothing; Save stores it.
	sub := Submission{Kind: flowSchemas, Name: name, Create: true, Spec: spec(9100)}
	out, err := s.Submit(ctx, sub)
	if err != nil || out.Written || out.Answer == nil {
		t.Fatalf("preview: %+v, %v", out, err)
	}
	sub.Save = true
	if out, err = s.Submit(ctx, sub); err != nil || !out.Written || out.Name != name || out.After == "" {
		t.Fatalf("create: %+v, %v", out, err)
	}

	// The user opens the form (the API server may write the Dangling status
	// meanwhile: that is no conflict).
	opened, err := s.Read(ctx, flowSchemas, name)
	if err != nil {
		t.Fatal(err)
	}
	base, err := edit.Text(opened, false)
	if err != nil {
		t.Fatal(err)
	}
	update := Submission{Kind: flowSchemas, Name: name, Spec: spec(9200), ResourceVersion: opened.GetResourceVersion(), BaseText: base, Save: true}

	// A precedence of 0 would be stored as 1000: Save stops after the dry run.
	zero := update
	zero.Spec = spec(0)
	if out, err = s.Submit(ctx, zero); err != nil || out.Written || !slices.Equal(out.Changed, []string{apf.SpecPrecedence}) {
		t.Fatalf("precedence 0: %+v, %v", out, err)
	}

	// Update.
	out, err = s.Submit(ctx, update)
	if err != nil || !out.Written {
		t.Fatalf("update: %+v, %v", out, err)
	}
	stored, err := api.Get(ctx, flowSchemas, name)
	if err != nil || stored.GetResourceVersion() != out.After {
		t.Fatalf("stored %v, %v", stored, err)
	}
	if p, _, _ := unstructured.NestedInt64(stored.Object, "spec", "matchingPrecedence"); p != 9200 {
		t.Fatalf("stored precedence %d", p)
	}

	// Someone changes the spec after the user opened the form at this version: a conflict.
	reopened, _ := edit.Text(stored, false)
	stale := Submission{Kind: flowSchemas, Name: name, Spec: spec(9300), ResourceVersion: stored.GetResourceVersion(), BaseText: reopened, Save: true}
	other := stored.DeepCopy()
	other.Object["spec"].(map[string]any)["matchingPrecedence"] = int64(9400)
	if _, err := api.Update(ctx, flowSchemas, other, false); err != nil {
		t.Fatal(err)
	}
	out, err = s.Submit(ctx, stale)
	if !apierrors.IsConflict(err) || out.Conflict == nil || out.Conflict.Err != nil || out.Written {
		t.Fatalf("stale save: %+v, %v", out, err)
	}
	if p, _, _ := unstructured.NestedInt64(out.Conflict.Current.Object, "spec", "matchingPrecedence"); p != 9400 {
		t.Errorf("the conflict shows precedence %d, want the other change's 9400", p)
	}
}
