package decide

import (
	"context"
	"strings"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/clusterdesk/clusterdesk/internal/csrpolicy"
)

// FollowPolicy writes only the previewed requests that are still what the
// preview showed and still approved; every other one is skipped with why,
// and nothing is written for it.
func TestFollowPolicySkipsWhatChanged(t *testing.T) {
	obj := func(name, rv string, uid types.UID) *certificatesv1.CertificateSigningRequest {
		return &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: name, UID: uid, ResourceVersion: rv}}
	}
	live := map[string]*certificatesv1.CertificateSigningRequest{}
	var previewed []Previewed
	add := func(name string, shown, now *certificatesv1.CertificateSigningRequest) {
		previewed = append(previewed, Previewed{Ref: Ref{Name: name, UID: shown.UID}, ResourceVersion: shown.ResourceVersion})
		if now != nil {
			live[name] = now
		}
	}
	same := ref("same")
	add("same", obj("same", "1", same.UID), obj("same", "1", same.UID))
	add("gone", obj("gone", "1", "u-gone"), nil)
	add("replaced", obj("replaced", "1", "u-old"), obj("replaced", "1", "u-new"))
	add("changed", obj("changed", "1", "u-c"), obj("changed", "2", "u-c"))
	decided := obj("decided", "1", "u-d")
	decided.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateDenied, Status: corev1.ConditionTrue}}
	add("decided", obj("decided", "1", "u-d"), decided)
	add("unmatched", obj("unmatched", "1", "u-u"), obj("unmatched", "1", "u-u"))

	w := &fakeWriter{errs: map[string]error{}}
	rec := &recorder{}
	out, skipped, err := Decisions{Writer: w, Audit: rec}.FollowPolicy(context.Background(), "alice", csrpolicy.Version{Policy: "p", Generation: 2, Hash: csrpolicy.ExpressionHash("true")}, previewed,
		func(name string) (*certificatesv1.CertificateSigningRequest, bool) { c, ok := live[name]; return c, ok },
		func(c *certificatesv1.CertificateSigningRequest) bool { return c.Name != "unmatched" })
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 1 || len(w.calls) != 1 || w.calls[0].name != "same" || !w.calls[0].approve || w.calls[0].uid != same.UID {
		t.Fatalf("written %+v; want the one unchanged request approved", w.calls)
	}
	if !strings.Contains(w.calls[0].message, "alice") || !strings.Contains(w.calls[0].message, "following policy p (generation 2, expression "+csrpolicy.ExpressionHash("true")+") (shadow)") {
		t.Errorf("condition message %q", w.calls[0].message)
	}
	if len(rec.got) != 1 {
		t.Errorf("audited %d decisions; want 1", len(rec.got))
	}
	want := map[string]string{"gone": SkipGone, "replaced": SkipReplaced, "changed": SkipChanged, "decided": SkipDecided, "unmatched": SkipPolicy}
	if len(skipped) != len(want) {
		t.Fatalf("skipped %+v", skipped)
	}
	for _, s := range skipped {
		if want[s.Ref.Name] != s.Why {
			t.Errorf("%s skipped because %q; want %q", s.Ref.Name, s.Why, want[s.Ref.Name])
		}
	}
	if _, _, err := (Decisions{Writer: w}).FollowPolicy(context.Background(), "alice", csrpolicy.Version{Policy: "p", Generation: 2, Hash: csrpolicy.ExpressionHash("true")}, nil, nil, nil); err == nil {
		t.Error("an empty confirmation was accepted")
	}
}
