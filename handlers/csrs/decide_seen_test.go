package csrs

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestDecisionSeenWaitsForTheCacheToShowIt(t *testing.T) {
	pending := &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: "x", UID: "u1", ResourceVersion: "10"}}
	written := pending.DeepCopy()
	written.ResourceVersion = "11"
	written.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue}}
	issued := written.DeepCopy()
	issued.ResourceVersion = "12" // the signer was quicker than the watch: the written version is never seen
	other := pending.DeepCopy()
	other.UID = "u2"
	gone := apierrors.NewNotFound(schema.GroupResource{Group: "certificates.k8s.io", Resource: "certificatesigningrequests"}, "x")

	for _, tc := range []struct {
		name  string
		later *certificatesv1.CertificateSigningRequest // what the cache holds after three reads of pending
		err   error
		seen  bool
	}{
		{"the written version", written, nil, true},
		{"a later version, decided", issued, nil, true},
		{"another request under the name", other, nil, true},
		{"deleted", nil, gone, true},
		{"the cache never catches up", pending, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var reads atomic.Int32
			read := func(string) (*certificatesv1.CertificateSigningRequest, error) {
				if reads.Add(1) <= 3 {
					return pending, nil
				}
				return tc.later, tc.err
			}
			if got := decisionSeen(context.Background(), read, written, time.Millisecond, 200*time.Millisecond); got != tc.seen {
				t.Fatalf("seen %v, want %v", got, tc.seen)
			}
			if tc.seen && reads.Load() != 4 {
				t.Errorf("%d reads, want 4: done as soon as the cache shows it", reads.Load())
			}
		})
	}
	if decisionSeen(context.Background(), nil, nil, time.Millisecond, time.Second) {
		t.Error("nothing written (a writer that captured no version) is not waited for")
	}
}
