package approver

import (
	"fmt"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
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
