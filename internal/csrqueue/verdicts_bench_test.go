package csrqueue

import (
	"context"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"sync"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/clusterdesk/clusterdesk/internal/csr"
	"github.com/clusterdesk/clusterdesk/internal/csrpolicy"
	"github.com/clusterdesk/clusterdesk/internal/testfixtures"
)

// The shadow-mode benchmarks: a queue of 10,000 pending requests, a
// kubelet's storm of 5,000 and 5,000 client requests of which one in 50
// names 200 DNS SANs, with the three policies below active or none.

// shadowPolicies are three policies an admin would write: the kubelet's
// client certificates, and two over the client signer that walk the SANs.
func shadowPolicies(gen uint64) *csrpolicy.Compiled {
	return csrpolicy.CompileAll(gen, []*unstructured.Unstructured{
		policyObject("kubelet-client", kubeletClient,
			`request.username.startsWith("system:node:") && request.subject.commonName == request.username && request.subject.organizations == ["system:nodes"]`, "Approve"),
		policyObject("no-wildcards", clientSigner, `request.dnsNames.exists(d, d.startsWith("*.")) || size(request.dnsNames) > 100`, "Deny"),
		policyObject("team-clients", clientSigner,
			`request.subject.organizations.all(o, o.startsWith("team-")) && request.dnsNames.all(d, d.endsWith(".example.com"))`, "Approve"),
	})
}

var (
	shadowOnce  sync.Once
	shadowItems []*certificatesv1.CertificateSigningRequest
)

func shadowCluster(tb testing.TB) []*certificatesv1.CertificateSigningRequest {
	shadowOnce.Do(func() {
		key := testfixtures.SigningKey()
		storm := testfixtures.SubjectPEM(tb, "system:node:storm", "system:nodes")
		mk := func(name, signer, user string, body []byte, created time.Time) *certificatesv1.CertificateSigningRequest {
			return &certificatesv1.CertificateSigningRequest{
				ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name), ResourceVersion: "1", CreationTimestamp: metav1.NewTime(created)},
				Spec: certificatesv1.CertificateSigningRequestSpec{Request: body, SignerName: signer, Username: user,
					Groups: []string{"system:authenticated"}, Usages: []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth}},
			}
		}
		for i := range 5000 {
			shadowItems = append(shadowItems, mk(fmt.Sprintf("storm-%05d", i), kubeletClient, "system:node:storm", storm, benchNow.Add(-time.Duration(i)*time.Second)))
		}
		for i := range 5000 {
			tmpl := &x509.CertificateRequest{Subject: pkix.Name{CommonName: fmt.Sprintf("client-%d", i), Organization: []string{fmt.Sprintf("team-%d", i%300)}}}
			if i%50 == 0 {
				for j := range 200 {
					tmpl.DNSNames = append(tmpl.DNSNames, fmt.Sprintf("host-%d-%d.example.com", i, j))
				}
			}
			shadowItems = append(shadowItems, mk(fmt.Sprintf("client-%05d", i), clientSigner, fmt.Sprintf("user-%d", i%300),
				testfixtures.RequestPEM(tb, key, tmpl), benchNow.Add(-time.Duration(i)*time.Minute)))
		}
	})
	return shadowItems
}

func shadowEnv(q *Queue, pol *csrpolicy.Compiled) Env {
	env := benchEnv(q)
	env.Policies = pol
	return env
}

// BenchmarkShadowQueue is one view of the shadow cluster's queue, warm (the
// caches filled by a first view), with no policies and with three: the
// first page of the pending tab, and (three only) the filter by a policy.
// "policy-changed" is the filter's view right after a policy change (a new
// generation every round): every pending request evaluated again.
func BenchmarkShadowQueue(b *testing.B) {
	items := shadowCluster(b)
	for _, tc := range []struct {
		name string
		pol  *csrpolicy.Compiled
		q    Query
	}{
		{"none/first-page", nil, Query{State: Pending}},
		{"three/first-page", shadowPolicies(1), Query{State: Pending}},
		{"none/filter-signer", nil, Query{Signer: clientSigner}},
		{"three/filter-policy", shadowPolicies(1), Query{Policy: "team-clients", Verdict: VerdictApprove}},
		{"three/filter-deny", shadowPolicies(1), Query{Verdict: VerdictDeny}},
		// Why pending (issue 47): the storm's 4,999 older retries are
		// superseded, each found by a lookup in the storm index.
		{"three/filter-why-superseded", shadowPolicies(1), Query{Why: "Superseded"}},
		{"three/filter-why-not-installed", shadowPolicies(1), Query{Why: "NotInstalled"}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			q := New(&source{items: items})
			if _, err := q.Run(tc.q, shadowEnv(q, tc.pol)); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if res, err := q.Run(tc.q, shadowEnv(q, tc.pol)); err != nil || len(res.Items) == 0 {
					b.Fatal(err, "no rows")
				}
			}
		})
	}
	// The reasons of a page's rows, worded (the clause evaluated): what the
	// queue's "Why pending" column costs per render.
	b.Run("three/why-column-first-page", func(b *testing.B) {
		q := New(&source{items: items})
		env := shadowEnv(q, shadowPolicies(1))
		query := Query{Signer: clientSigner, State: Pending}
		if _, err := q.Run(query, env); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			res, err := q.Run(query, env)
			if err != nil || len(res.Items) == 0 {
				b.Fatal(err, "no rows")
			}
			for _, it := range res.Items {
				if it.Why(true).Code == "" {
					b.Fatal("a pending row without a reason")
				}
			}
		}
	})
	b.Run("three/filter-policy-changed", func(b *testing.B) {
		q := New(&source{items: items})
		pols := [2]*csrpolicy.Compiled{shadowPolicies(1), shadowPolicies(2)}
		query := Query{Policy: "team-clients", Verdict: VerdictApprove}
		// A first view decodes every request (the memo keeps them): not
		// what a policy change costs.
		if _, err := q.Run(query, shadowEnv(q, pols[0])); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			i++
			if res, err := q.Run(query, shadowEnv(q, pols[i%2])); err != nil || len(res.Items) == 0 {
				b.Fatal(err, "no rows")
			}
		}
	})
}

// BenchmarkShadowQueueDuringPolicyChange is the first page of the pending
// tab, without policies, viewed while the filter's view after a policy
// change (a new generation every round) evaluates every pending request:
// how long one view waits for another's evaluation. The filter's view starts
// first; the page view starts once it holds the warm-up or the index.
func BenchmarkShadowQueueDuringPolicyChange(b *testing.B) {
	items := shadowCluster(b)
	q := New(&source{items: items})
	pols := [2]*csrpolicy.Compiled{shadowPolicies(1), shadowPolicies(2)}
	filter := Query{Policy: "team-clients", Verdict: VerdictApprove}
	if _, err := q.Run(filter, shadowEnv(q, pols[0])); err != nil {
		b.Fatal(err)
	}
	var waited time.Duration
	i := 0
	for b.Loop() {
		i++
		pol := pols[i%2]
		done := make(chan struct{})
		go func() {
			defer close(done)
			if _, err := q.Run(filter, shadowEnv(q, pol)); err != nil {
				b.Error(err)
			}
		}()
		time.Sleep(20 * time.Millisecond) // the filter's view is under way
		start := time.Now()
		if res, err := q.Run(Query{State: Pending}, shadowEnv(q, nil)); err != nil || len(res.Items) == 0 {
			b.Fatal(err, "no rows")
		}
		waited += time.Since(start)
		<-done
	}
	b.ReportMetric(float64(waited.Milliseconds())/float64(i), "page-ms/op")
}

// BenchmarkShadowQueueAfterChange is the pending tab's first page, and the
// policy filter's view, after one more request joins the kubelet's storm
// (removed again the next round), with no policies and with three: what one
// CSR change costs.
func BenchmarkShadowQueueAfterChange(b *testing.B) {
	items := shadowCluster(b)
	for _, tc := range []struct {
		name string
		pol  *csrpolicy.Compiled
		q    Query
	}{
		{"none/first-page", nil, Query{State: Pending}},
		{"three/first-page", shadowPolicies(1), Query{State: Pending}},
		{"three/filter-policy", shadowPolicies(1), Query{Policy: "kubelet-client"}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			src := &changingSource{source: source{items: items}, byName: map[string]*certificatesv1.CertificateSigningRequest{}}
			for _, c := range items {
				src.byName[c.Name] = c
			}
			q := New(src)
			if _, err := q.Run(tc.q, shadowEnv(q, tc.pol)); err != nil {
				b.Fatal(err)
			}
			extra := items[0].DeepCopy()
			extra.Name, extra.UID = "storm-extra", "uid-storm-extra"
			in := false
			b.ReportAllocs()
			for b.Loop() {
				if in {
					delete(src.byName, extra.Name)
				} else {
					src.byName[extra.Name] = extra
				}
				in = !in
				src.change("csrs", extra.Name)
				if res, err := q.Run(tc.q, shadowEnv(q, tc.pol)); err != nil || len(res.Items) == 0 {
					b.Fatal(err, "no rows")
				}
			}
		})
	}
}

// BenchmarkShadowEvaluate is the cost of the three policies on one request,
// as the memo pays it once per request and policy generation: a kubelet's
// request, a client request, and one naming 200 SANs.
func BenchmarkShadowEvaluate(b *testing.B) {
	items := shadowCluster(b)
	pol := shadowPolicies(1)
	for _, tc := range []struct {
		name string
		c    *certificatesv1.CertificateSigningRequest
	}{{"kubelet", items[0]}, {"client", items[5001]}, {"client-200-SANs", items[5000]}} {
		req, err := csr.Decode(tc.c.Spec.Request)
		if err != nil {
			b.Fatal(err)
		}
		in := csrpolicy.Input{CSR: tc.c, Request: req}
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				pol.Evaluate(context.Background(), in)
			}
		})
	}
}
