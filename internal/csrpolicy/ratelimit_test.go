package csrpolicy

import (
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func approvedAt(name, user string, at time.Time) *certificatesv1.CertificateSigningRequest {
	c := pendingOf(name, user)
	c.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{
		Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, LastUpdateTime: metav1.NewTime(at)}}
	return c
}

func pendingOf(name, user string) *certificatesv1.CertificateSigningRequest {
	return &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: certificatesv1.CertificateSigningRequestSpec{Username: user}}
}

// TestRateLimitCountsApprovalsOfTheRequesterWithinThePeriod: three approvals
// within the hour hold a fourth until the oldest of them leaves the window;
// approvals of others, older ones, denials and pending requests do not count.
func TestRateLimitCountsApprovalsOfTheRequesterWithinThePeriod(t *testing.T) {
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	rl := &RateLimit{MaxApprovals: 3, Period: time.Hour}
	denied := pendingOf("denied", "node-a")
	denied.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateDenied, Status: corev1.ConditionTrue, LastUpdateTime: metav1.NewTime(now)}}
	reqs := []*certificatesv1.CertificateSigningRequest{
		approvedAt("a1", "node-a", now.Add(-50*time.Minute)),
		approvedAt("a2", "node-a", now.Add(-10*time.Minute)),
		approvedAt("old", "node-a", now.Add(-61*time.Minute)),
		approvedAt("b1", "node-b", now.Add(-time.Minute)),
		denied, pendingOf("p", "node-a"),
	}
	c := pendingOf("new", "node-a")
	if held, _, err := HeldByRateLimit(rl, c, reqs, now); held || err != nil {
		t.Fatalf("two approvals in the hour hold a third: held=%v err=%v", held, err)
	}
	reqs = append(reqs, approvedAt("a3", "node-a", now.Add(-5*time.Minute)))
	held, until, err := HeldByRateLimit(rl, c, reqs, now)
	if !held || err != nil {
		t.Fatalf("three approvals in the hour do not hold a fourth: held=%v err=%v", held, err)
	}
	if want := now.Add(10 * time.Minute); !until.Equal(want) {
		t.Errorf("the window frees at %v, want %v (the oldest of the three plus the period)", until, want)
	}
	if held, _, _ := HeldByRateLimit(rl, c, reqs, until.Add(time.Second)); held {
		t.Error("still held once the oldest approval left the window")
	}
	if n, _ := RecentApprovals(reqs, "node-b", time.Hour, now); n != 1 {
		t.Errorf("node-b's approvals: %d, want 1", n)
	}
	if held, _, err := HeldByRateLimit(rl, pendingOf("anon", ""), reqs, now); !held || err == nil {
		t.Error("a request without a requester is not held")
	}
	if held, _, _ := HeldByRateLimit(nil, c, reqs, now); held {
		t.Error("no rate holds nothing")
	}
}

// TestRateLimitFromObject: spec.rateLimit and spec.supersedeDuplicates are
// read, and bad values are refused with a message that names the field.
func TestRateLimitFromObject(t *testing.T) {
	obj := func(decision string, rl map[string]any, supersede any) *unstructured.Unstructured {
		spec := map[string]any{"signerNames": []any{"kubernetes.io/kubelet-serving"}, "decision": decision, "reason": "R", "expression": "true"}
		if rl != nil {
			spec["rateLimit"] = rl
		}
		if supersede != nil {
			spec["supersedeDuplicates"] = supersede
		}
		return &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "p"}, "spec": spec}}
	}
	p, err := FromObject(obj("Approve", map[string]any{"maxApprovals": int64(3), "period": "1h"}, true))
	if err != nil {
		t.Fatal(err)
	}
	if p.RateLimit == nil || *p.RateLimit != (RateLimit{MaxApprovals: 3, Period: time.Hour}) || !p.SupersedeDuplicates {
		t.Fatalf("read %+v, %v", p.RateLimit, p.SupersedeDuplicates)
	}
	if _, err := Compile(p); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		o        *unstructured.Unstructured
		fromObj  bool // refused by FromObject, else by Compile
		contains string
	}{
		{"no period", obj("Approve", map[string]any{"maxApprovals": int64(3)}, nil), true, "rateLimit period"},
		{"bad period", obj("Approve", map[string]any{"maxApprovals": int64(3), "period": "an hour"}, nil), true, `"an hour" is not a duration`},
		{"no count", obj("Approve", map[string]any{"period": "1h"}, nil), true, "rateLimit maxApprovals"},
		{"supersede not a bool", obj("Approve", nil, "yes"), true, "supersedeDuplicates"},
		{"zero approvals", obj("Approve", map[string]any{"maxApprovals": int64(0), "period": "1h"}, nil), false, "maxApprovals must be between 1"},
		{"period too short", obj("Approve", map[string]any{"maxApprovals": int64(1), "period": "10ms"}, nil), false, "period must be between 1s"},
		{"rate on a Deny policy", obj("Deny", map[string]any{"maxApprovals": int64(1), "period": "1h"}, nil), false, "Approve policies only"},
		{"supersede on a Deny policy", obj("Deny", nil, true), false, "Approve policies only"},
	} {
		p, err := FromObject(tc.o)
		if !tc.fromObj && err == nil {
			_, err = Compile(p)
			if ce, ok := err.(*CompileError); ok && !strings.Contains(ce.Field, "rateLimit") && !strings.Contains(ce.Field, "decision") {
				t.Errorf("%s: the error names field %q", tc.name, ce.Field)
			}
		}
		if err == nil || !strings.Contains(err.Error(), tc.contains) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.contains)
		}
	}
}
