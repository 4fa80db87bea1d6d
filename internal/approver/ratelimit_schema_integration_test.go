//go:build integration

package approver

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// TestPolicyStormFieldsValidated: the API server, with deploy/base's CRD,
// keeps spec.rateLimit and spec.supersedeDuplicates of a good policy and
// refuses bad values with a message that says what is wrong.
func TestPolicyStormFieldsValidated(t *testing.T) {
	admin := testcluster.RestConfig(t, testcluster.Admin)
	installCRD(t, admin)
	r := policies(admin)
	ctx := context.Background()
	s := stamp()
	good := policyFor("schema-"+s, "rate-ok-"+s, "Approve", "true", "example.com/storm")
	good.Object["spec"].(map[string]any)["rateLimit"] = map[string]any{"maxApprovals": int64(3), "period": "1h"}
	good.Object["spec"].(map[string]any)["supersedeDuplicates"] = true
	stored, err := r.Create(ctx, good, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Delete(ctx, good.GetName(), metav1.DeleteOptions{}) })
	if rl, _ := stored.Object["spec"].(map[string]any)["rateLimit"].(map[string]any); rl["period"] != "1h" || stored.Object["spec"].(map[string]any)["supersedeDuplicates"] != true {
		t.Errorf("stored spec %v: the fields were pruned", stored.Object["spec"])
	}
	for _, tc := range []struct {
		name, decision string
		rate           map[string]any
		supersede      bool
		want           string
	}{
		{"bad-period", "Approve", map[string]any{"maxApprovals": int64(3), "period": "an hour"}, false, "spec.rateLimit.period"},
		{"long-period", "Approve", map[string]any{"maxApprovals": int64(3), "period": "9000h"}, false, "period must be a duration from 1s to 8784h"},
		{"zero", "Approve", map[string]any{"maxApprovals": int64(0), "period": "1h"}, false, "spec.rateLimit.maxApprovals"},
		{"deny-rate", "Deny", map[string]any{"maxApprovals": int64(1), "period": "1h"}, false, "Approve policies only"},
		{"deny-supersede", "Deny", nil, true, "Approve policies only"},
	} {
		p := policyFor("schema-"+s, tc.name+"-"+s, tc.decision, "true", "example.com/storm")
		if tc.rate != nil {
			p.Object["spec"].(map[string]any)["rateLimit"] = tc.rate
		}
		if tc.supersede {
			p.Object["spec"].(map[string]any)["supersedeDuplicates"] = true
		}
		_, err := r.Create(ctx, p, metav1.CreateOptions{})
		if err == nil {
			_ = r.Delete(ctx, p.GetName(), metav1.DeleteOptions{})
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want a refusal naming %q", tc.name, err, tc.want)
		}
	}
}
