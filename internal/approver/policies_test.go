package approver

import (
	"bytes"
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestABrokenPolicyFailsClosed: a policy that cannot run keeps the approver
// from deciding for the signers it names, for every signer when those cannot
// be read, and for no other signer. The request "r" is a client request the
// policy "approve-all" approves; beside it, a Deny policy that cannot run.
func TestABrokenPolicyFailsClosed(t *testing.T) {
	const client = certificatesv1.KubeAPIServerClientSignerName
	broken := func(signers any) *unstructured.Unstructured {
		o := policyObject("deny-broken", client, "Deny", "request.nosuchfield(")
		o.Object["spec"].(map[string]any)["signerNames"] = signers
		return o
	}
	for _, tc := range []struct {
		name   string
		broken *unstructured.Unstructured
		decide bool
	}{
		{name: "names the signer", broken: broken([]any{client})},
		{name: "names the signer's domain", broken: broken([]any{"kubernetes.io/*"})},
		{name: "signers not a list", broken: broken("kubernetes.io/kube-apiserver-client")},
		{name: "no signers", broken: broken([]any{})},
		{name: "a signer that is no signer name", broken: broken([]any{"example.com/x", "no-slash"})},
		{name: "a field of the wrong type", broken: func() *unstructured.Unstructured {
			o := policyObject("deny-broken", client, "Deny", "true")
			o.Object["spec"].(map[string]any)["decision"] = int64(1)
			return o
		}()},
		// Another signer's broken policy is no reason to leave this one's
		// requests alone.
		{name: "names another signer", broken: broken([]any{"example.com/x"}), decide: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := &scriptedDecider{}
			objs := []*unstructured.Unstructured{policyObject("approve-all", client, "Approve", "true"), tc.broken}
			errs := 0
			c, log := oneRequestUnder(t, d, false, objs, func(string, error) { errs++ })
			for range 2 { // evaluated again (a resync): reported once
				if err := c.Sync(context.Background(), "r"); err != nil {
					t.Fatal(err)
				}
			}
			if errs != 1 || c.o.Policies.Broken() != 1 {
				t.Errorf("%d errors told, %d policies broken; want the broken policy, once", errs, c.o.Policies.Broken())
			}
			if tc.decide {
				if d.calls == 0 { // once per Sync: the scripted decider leaves the cached request pending
					t.Error("not decided, want the request decided")
				}
				return
			}
			if d.calls != 0 {
				t.Errorf("decided %d times beside a policy that cannot run", d.calls)
			}
			if got := testutil.ToFloat64(c.o.Metrics.undecided.WithLabelValues(UndecidedBroken)); got != 1 {
				t.Errorf("undecided{reason=broken} = %v, want 1", got)
			}
			if !bytes.Contains(log.Bytes(), []byte("cannot run")) || !bytes.Contains(log.Bytes(), []byte("deny-broken")) {
				t.Errorf("the log does not name the policy that cannot run:\n%s", log)
			}
		})
	}
}
