package testcluster

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

func TestCSRNameIsAValidObjectName(t *testing.T) {
	for _, c := range []struct{ test, suffix, prefix string }{
		{"TestApprove", "", "it-testapprove-"},
		{"TestQueue/Sub_Case", "a", "it-testqueue-sub-case-a-"},
		{strings.Repeat("TestLong", 60), "x", "it-testlong"},
	} {
		got := csrName(c.test, c.suffix)
		if errs := validation.IsDNS1123Subdomain(got); len(errs) > 0 {
			t.Errorf("csrName(%q, %q) = %q: %v", c.test, c.suffix, got, errs)
		}
		if !strings.HasPrefix(got, c.prefix) {
			t.Errorf("csrName(%q, %q) = %q, want prefix %q", c.test, c.suffix, got, c.prefix)
		}
	}
	if csrName("T", "") == csrName("T", "") {
		t.Error("two names for the same test are equal")
	}
}
