package approver

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/clusterdesk/clusterdesk/internal/csrwhy"
)

// reasonGauge is the pending-by-reason gauge's value for code.
func reasonGauge(t *testing.T, c *Controller, code csrwhy.Code) float64 {
	t.Helper()
	return float64(c.pendingByReason()[code])
}

// TestWhyLoggedOncePerChangeAndCounted: a request left pending has its reason
// logged once however often it is evaluated, again when the reason changes,
// counted by the gauge, and forgotten once decided.
func TestWhyLoggedOncePerChangeAndCounted(t *testing.T) {
	d := &scriptedDecider{}
	c, log := oneRequest(t, d, true) // dry run: stays pending
	for range 3 {
		if err := c.Sync(context.Background(), "r"); err != nil {
			t.Fatal(err)
		}
	}
	if n := bytes.Count(log.Bytes(), []byte("reason=DryRun")); n != 1 {
		t.Errorf("DryRun logged %d times:\n%s", n, log)
	}
	if got := reasonGauge(t, c, csrwhy.DryRun); got != 1 {
		t.Errorf("gauge DryRun = %v, want 1", got)
	}
	// The API server refuses the signer: the reason changes, logged once more.
	d.err = apierrors.NewForbidden(csrResource, "r", errors.New("no approve"))
	c.Forget("uid-r") // a dry run's write is reported once per request; start again
	for range 2 {
		_ = c.Sync(context.Background(), "r")
	}
	if n := bytes.Count(log.Bytes(), []byte("reason=Forbidden")); n != 1 {
		t.Errorf("Forbidden logged %d times:\n%s", n, log)
	}
	if reasonGauge(t, c, csrwhy.Forbidden) != 1 || reasonGauge(t, c, csrwhy.DryRun) != 0 {
		t.Errorf("gauge after the 403: %v", c.pendingByReason())
	}
}

// TestWhyNoMatch: a policy whose clause is false leaves the request pending
// with ClauseFalse, the clause and its values in the log line.
func TestWhyNoMatch(t *testing.T) {
	objs := []*unstructured.Unstructured{policyObject("only-bob", certificatesv1.KubeAPIServerClientSignerName, "Approve",
		"request.subject.commonName == 'bob' && request.keyBits > 0")}
	d := &scriptedDecider{}
	c, log := oneRequestUnder(t, d, false, objs, func(string, error) {})
	if err := c.Sync(context.Background(), "r"); err != nil || d.calls != 0 {
		t.Fatalf("Sync = %v, %d decisions", err, d.calls)
	}
	for _, w := range []string{"reason=ClauseFalse", "clause 1 of 2", `request.subject.commonName = \"alice\"`} {
		if !bytes.Contains(log.Bytes(), []byte(w)) {
			t.Errorf("log lacks %s:\n%s", w, log)
		}
	}
	if reasonGauge(t, c, csrwhy.ClauseFalse) != 1 {
		t.Errorf("gauge: %v", c.pendingByReason())
	}
}

// TestWhyGaugeEveryCode: the scrape reports every code (bounded, present at 0).
func TestWhyGaugeEveryCode(t *testing.T) {
	c, _ := oneRequest(t, &scriptedDecider{}, true)
	c.o.Metrics.byReason = c.pendingByReason
	if n := testutil.CollectAndCount(&reasonCollector{m: c.o.Metrics}); n != len(csrwhy.Codes) {
		t.Errorf("%d series, want %d", n, len(csrwhy.Codes))
	}
}
