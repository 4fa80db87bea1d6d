package decide

import (
	"context"
	"errors"
	"testing"
)

// fakeAccess grants approval updates when update is true and approve on the
// signer resource names in approve; fail makes every review fail. It counts
// the reviews asked.
type fakeAccess struct {
	update  bool
	approve map[string]bool
	fail    bool
	asked   int
}

func (a *fakeAccess) Can(_ context.Context, verb, _, resource, subresource, name string) (bool, error) {
	a.asked++
	if a.fail {
		return false, errors.New("review failed")
	}
	switch {
	case verb == "update" && resource == "certificatesigningrequests" && subresource == "approval":
		return a.update, nil
	case verb == "approve" && resource == "signers":
		return a.approve[name], nil
	}
	return false, nil
}

func TestMayDecide(t *testing.T) {
	const client = "kubernetes.io/kube-apiserver-client"
	for _, tc := range []struct {
		name     string
		readOnly bool
		access   fakeAccess
		nilFunc  bool
		signer   string
		want     bool
	}{
		{"read-only mode decides nothing", true, fakeAccess{update: true, approve: map[string]bool{client: true}}, true, client, false},
		{"no approval updates", false, fakeAccess{approve: map[string]bool{client: true}}, true, client, false},
		{"failed review hides everything", false, fakeAccess{fail: true}, true, client, false},
		{"the signer itself", false, fakeAccess{update: true, approve: map[string]bool{client: true}}, false, client, true},
		{"another signer", false, fakeAccess{update: true, approve: map[string]bool{client: true}}, false, "kubernetes.io/kubelet-serving", false},
		{"the signer's domain wildcard", false, fakeAccess{update: true, approve: map[string]bool{"example.com/*": true}}, false, "example.com/issuer", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			may := Decisions{Access: &tc.access, ReadOnly: tc.readOnly}.MayDecide(context.Background())
			if (may == nil) != tc.nilFunc {
				t.Fatalf("MayDecide returned nil = %v; want %v", may == nil, tc.nilFunc)
			}
			if may != nil && may(tc.signer) != tc.want {
				t.Errorf("may(%s) = %v; want %v", tc.signer, !tc.want, tc.want)
			}
		})
	}
}

// TestMayDecideAsksOncePerResourceName: a page of 500 rows of one signer
// costs the reviews of one row.
func TestMayDecideAsksOncePerResourceName(t *testing.T) {
	a := &fakeAccess{update: true, approve: map[string]bool{"kubernetes.io/kube-apiserver-client": true}}
	may := Decisions{Access: a}.MayDecide(context.Background())
	for range 500 {
		may("kubernetes.io/kube-apiserver-client")
	}
	if a.asked != 2 {
		t.Errorf("%d access reviews for 500 rows of one signer; want 2 (approval updates, the signer)", a.asked)
	}
}
