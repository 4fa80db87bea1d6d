package kube

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

func TestAccessCachesAnswers(t *testing.T) {
	cs := fake.NewClientset()
	var asked []authorizationv1.ResourceAttributes
	fail := false
	cs.PrependReactor("create", "selfsubjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if fail {
			return true, nil, errors.New("connection refused")
		}
		r := a.(k8stesting.CreateAction).GetObject().(*authorizationv1.SelfSubjectAccessReview)
		asked = append(asked, *r.Spec.ResourceAttributes)
		r.Status.Allowed = r.Spec.ResourceAttributes.Verb == "get"
		return true, r, nil
	})
	access := newAccess(cs.AuthorizationV1().SelfSubjectAccessReviews())
	now := time.Unix(1000, 0)
	access.now = func() time.Time { return now }
	ctx := context.Background()

	can := func(verb string) bool {
		t.Helper()
		ok, err := access.Can(ctx, verb, "certificates.k8s.io", "certificatesigningrequests", "approval", "csr-1")
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !can("get") || can("update") {
		t.Fatal("want get allowed, update denied")
	}
	want := authorizationv1.ResourceAttributes{Verb: "update", Group: "certificates.k8s.io",
		Resource: "certificatesigningrequests", Subresource: "approval", Name: "csr-1"}
	if len(asked) != 2 || asked[1] != want {
		t.Fatalf("reviews sent: %+v", asked)
	}

	now = now.Add(29 * time.Second)
	if !can("get") || can("update") || len(asked) != 2 {
		t.Fatalf("answers within 30s must come from the cache; reviews sent: %d", len(asked))
	}

	now = now.Add(2 * time.Second)
	fail = true
	if _, err := access.Can(ctx, "get", "certificates.k8s.io", "certificatesigningrequests", "approval", "csr-1"); err == nil {
		t.Fatal("expired answer must be asked again, and the error returned")
	}
	fail = false
	if !can("get") || len(asked) != 3 {
		t.Fatalf("errors must not be cached; reviews sent: %d", len(asked))
	}
}

// Pages asking the same question at once (a person's tabs opening together)
// share one review.
func TestAccessAsksOnceForConcurrentQuestions(t *testing.T) {
	var asked atomic.Int32
	release := make(chan struct{})
	access := newReviewAccess(func(context.Context, *authorizationv1.ResourceAttributes) (bool, error) {
		asked.Add(1)
		<-release
		return true, nil
	})
	var wg sync.WaitGroup
	for range 12 {
		wg.Go(func() {
			if ok, err := access.Can(context.Background(), "list", "", "csidrivers", "", ""); !ok || err != nil {
				t.Errorf("Can: %v %v", ok, err)
			}
		})
	}
	for asked.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond) // the others join the review under way
	close(release)
	wg.Wait()
	if n := asked.Load(); n != 1 {
		t.Errorf("%d reviews for one question asked by 12 pages at once, want 1", n)
	}
}
