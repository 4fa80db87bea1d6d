package admission

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestTalliesAreRememberedPerResourceVersion(t *testing.T) {
	now := time.Date(2026, 11, 27, 4, 0, 0, 0, time.UTC)
	o := &metav1.ObjectMeta{Name: "memo.example.com", UID: "uid-memo", ResourceVersion: "7"}
	calls := 0
	lint := func() Tally { calls++; return Tally{Errors: 1} }
	for range 3 {
		ListTally("crds", o, now, lint)
	}
	ListTally("crds", o, now.Add(time.Hour), lint) // the next hour: certificates may have expired
	o.ResourceVersion = "8"
	ListTally("crds", o, now, lint)
	if calls != 3 {
		t.Errorf("linted %d times, want 3 (first view, next hour, new resourceVersion)", calls)
	}
}
