package ledger_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/ledger"
)

// POLICY_BENCH_DECISIONS is how many decisions one policy made in
// BenchmarkPolicyVersions: small by default (make test runs it once, timing
// nothing), 50,000 in make bench-ledger.
func policyBenchDecisions(b *testing.B) int {
	n := 2000
	if v := os.Getenv("POLICY_BENCH_DECISIONS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 100 {
			b.Fatalf("POLICY_BENCH_DECISIONS=%q: a number of at least 100", v)
		}
	}
	return n
}

// BenchmarkPolicyVersions reads a policy's page's versions (counts and the 5
// latest decisions of each) from a ledger where the policy decided
// POLICY_BENCH_DECISIONS requests over 10 versions, the approver's events of
// 253-character names, beside as many entries of another policy and twice as
// many entries that name none, on each backend.
func BenchmarkPolicyVersions(b *testing.B) {
	n := policyBenchDecisions(b)
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) {
			dsn := be.dsn(b)
			ctx := context.Background()
			s, err := ledger.Open(ctx, dsn, ledger.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer func() { s.Close() }()
			start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			const versions = 10
			var batch []ledger.Entry
			flush := func() {
				if _, err := s.Append(ctx, batch); err != nil {
					b.Fatal(err)
				}
				batch = batch[:0]
			}
			for i := range 4 * n {
				name := longName("node-csr", i)
				e := ledger.Entry{Source: ledger.SourceAPIServer, ID: fmt.Sprint("ev-", i), Time: start.Add(time.Duration(i) * time.Second),
					User: "system:serviceaccount:clusterdesk:clusterdesk-approver", Verb: "update", Action: ledger.ActionApprove,
					APIGroup: "certificates.k8s.io", APIVersion: "v1", Resource: "certificatesigningrequests", Subresource: "approval",
					Kind: "csrs", Name: name, UID: fmt.Sprintf("uid-%d", i), Signer: "kubernetes.io/kubelet-serving",
					Code: 200, Result: ledger.ResultOK, Object: smallCSR}
				switch i % 4 {
				case 0: // the policy's, its generation growing through the run
					g := int64(1 + (i/4)*versions/n)
					e.Policy = ledger.PolicyRef{Name: "kubelet-serving", Generation: g, Hash: fmt.Sprintf("%012x", g)}
					if i%40 == 0 {
						e.Action = ledger.ActionDeny
					}
				case 1: // another policy's
					e.Policy = ledger.PolicyRef{Name: "kubelet-serving-other", Generation: 1, Hash: "0123456789ab"}
				default: // people's and the control plane's
					e.Action, e.User = ledger.ActionUpdate, "system:kube-controller-manager"
				}
				batch = append(batch, e)
				if len(batch) == 400 {
					flush()
				}
			}
			flush()
			vacuum(b, dsn)
			b.ResetTimer()
			for b.Loop() {
				got, err := s.(ledger.PolicyStore).PolicyVersions(ctx, "kubelet-serving", 5)
				if err != nil {
					b.Fatal(err)
				}
				var total int64
				for _, v := range got.Versions {
					total += v.Approved + v.Denied
				}
				if len(got.Versions) != versions || total != int64(n) || len(got.Versions[0].Latest) != 5 {
					b.Fatalf("%d versions, %d decisions; want %d and %d", len(got.Versions), total, versions, n)
				}
			}
			b.ReportMetric(float64(n), "decisions")
		})
	}
}

// vacuum is what PostgreSQL's autovacuum does to a table that took many
// inserts: the statistics, and the visibility map an index-only scan needs
// (without it every row is read from the table as well).
func vacuum(b *testing.B, dsn string) {
	if strings.HasPrefix(dsn, "sqlite:") {
		return
	}
	if _, err := rawDB(b, dsn).Exec("VACUUM ANALYZE ledger_entries"); err != nil {
		b.Fatal(err)
	}
}
