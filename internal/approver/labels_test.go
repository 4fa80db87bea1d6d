package approver

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func noPending() ([]*certificatesv1.CertificateSigningRequest, error) { return nil, nil }
func noSigners() map[string]bool                                      { return nil }

func TestBoundedLabelsKeepTheFirstValuesThenOther(t *testing.T) {
	b := newBoundedLabels(3)
	for i, want := range []string{"a", "b", "c", OtherLabel, OtherLabel} {
		if got := b.Label(fmt.Sprint(string(rune('a' + i)))); got != want {
			t.Errorf("value %d: label %q, want %q", i, got, want)
		}
	}
	if got := b.Label("b"); got != "b" {
		t.Errorf("a value seen before the bound: %q, want b", got)
	}
	// A value spelled like the overflow label takes no room of its own.
	b = newBoundedLabels(1)
	if b.Label(OtherLabel) != OtherLabel || b.Label("x") != "x" {
		t.Error(`"other" took the only place`)
	}
}

func TestSignerLabelsAreWhatPoliciesNameOrKubernetesDefines(t *testing.T) {
	m := NewMetrics(noPending, noSigners)
	named := map[string]bool{"example.com/serving": true, "wild.example/*": true}
	for signer, want := range map[string]string{
		"example.com/serving":           "example.com/serving",
		"wild.example/anything":         "wild.example/anything",
		"kubernetes.io/kubelet-serving": "kubernetes.io/kubelet-serving",
		"example.com/other-path":        OtherLabel, // requesters choose signer names
		"made-up.example/x":             OtherLabel,
	} {
		if got := m.signerLabel(signer, named); got != want {
			t.Errorf("%s: label %q, want %q", signer, got, want)
		}
	}
	// Past the bound, even a named signer is "other".
	for i := range maxSignerLabels {
		m.signerLabel(fmt.Sprintf("kubernetes.io/s%d", i), named)
	}
	if got := m.signerLabel("wild.example/late", named); got != OtherLabel {
		t.Errorf("beyond %d signers: %q, want other", maxSignerLabels, got)
	}
}

func TestPolicyLabelsAreBounded(t *testing.T) {
	m := NewMetrics(noPending, noSigners)
	for i := range maxPolicyLabels + 20 {
		m.decided(fmt.Sprintf("p%d", i), "Approve", false)
	}
	mfs, err := m.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "clusterdesk_approver_decisions_total" {
			continue
		}
		if n := len(mf.GetMetric()); n != maxPolicyLabels+1 {
			t.Errorf("%d series, want %d policies and other", n, maxPolicyLabels)
		}
		for _, s := range mf.GetMetric() {
			for _, l := range s.GetLabel() {
				if l.GetName() == "policy" && l.GetValue() == OtherLabel && s.GetCounter().GetValue() != 20 {
					t.Errorf("other counts %v, want 20", s.GetCounter().GetValue())
				}
			}
		}
	}
}

func TestPendingGaugesCountPendingRequestsBySignerLabel(t *testing.T) {
	now := time.Now()
	csr := func(signer string, age time.Duration, decided bool) *certificatesv1.CertificateSigningRequest {
		c := &certificatesv1.CertificateSigningRequest{
			ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(now.Add(-age))},
			Spec:       certificatesv1.CertificateSigningRequestSpec{SignerName: signer},
		}
		if decided {
			c.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue}}
		}
		return c
	}
	csrs := []*certificatesv1.CertificateSigningRequest{
		csr("example.com/serving", time.Minute, false),
		csr("example.com/serving", 20*time.Minute, false),
		csr("example.com/serving", time.Hour, true), // decided: not pending
		csr("made-up.example/a", 3*time.Minute, false),
		csr("made-up.example/b", 5*time.Minute, false),
	}
	m := NewMetrics(func() ([]*certificatesv1.CertificateSigningRequest, error) { return csrs, nil },
		func() map[string]bool { return map[string]bool{"example.com/serving": true} })
	want := `
# HELP clusterdesk_approver_pending_requests Pending requests (neither approved nor denied) in the approver's cache, by signer (signers no policy names and Kubernetes does not define are "other").
# TYPE clusterdesk_approver_pending_requests gauge
clusterdesk_approver_pending_requests{signer="example.com/serving"} 2
clusterdesk_approver_pending_requests{signer="other"} 2
`
	if err := testutil.GatherAndCompare(m.Gatherer(), strings.NewReader(want), "clusterdesk_approver_pending_requests"); err != nil {
		t.Error(err)
	}
	mfs, err := m.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, mf := range mfs {
		if mf.GetName() != "clusterdesk_approver_oldest_pending_seconds" {
			continue
		}
		for _, s := range mf.GetMetric() {
			seen++
			age := s.GetGauge().GetValue()
			switch s.GetLabel()[0].GetValue() {
			case "example.com/serving":
				if age < 20*60 || age > 20*60+30 {
					t.Errorf("oldest pending for the named signer: %vs, want 20 minutes", age)
				}
			case OtherLabel:
				if age < 5*60 || age > 5*60+30 {
					t.Errorf("oldest pending for other: %vs, want 5 minutes", age)
				}
			}
		}
	}
	if seen != 2 {
		t.Errorf("%d oldest-pending series, want 2", seen)
	}
}
