package csrqueue

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/clusterdesk/clusterdesk/internal/csr"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/testfixtures"
)

// benchSize is how many CSRs the queue benchmarks hold: CSRQUEUE_BENCH_SIZE,
// else 2,000, which builds in a second or two so that make test, which runs
// every benchmark once, stays quick. Issue 27 measures 50,000.
func benchSize() int {
	if n, err := strconv.Atoi(os.Getenv("CSRQUEUE_BENCH_SIZE")); err == nil && n >= 100 {
		return n
	}
	return 2_000
}

var (
	benchOnce  sync.Once
	benchItems []*certificatesv1.CertificateSigningRequest
)

// benchCluster is the shape of issue 27 scaled to n CSRs: 90% decided (issued
// and denied, by 300 users), 10% pending, of which 80% are one node's storm
// (one request body, as a kubelet reusing its key sends) and the rest each
// its own subject; and on top, 6% (3,000 at 50,000) pending from one
// service account, each its own subject (a requester storm). Every request
// but the storm's has its own body, as in a real cluster (a body shared by thousands would hide what decoding keeps);
// one in 50 carries 200 SANs and one in 10 a 253-character name. Built once
// per test binary: signing 50,000 requests takes seconds.
func benchCluster(tb testing.TB) []*certificatesv1.CertificateSigningRequest {
	benchOnce.Do(func() { benchItems = buildBenchCluster(tb, benchSize()) })
	return benchItems
}

func buildBenchCluster(tb testing.TB, n int) []*certificatesv1.CertificateSigningRequest {
	now := benchNow
	pendingN := n / 10
	stormN := pendingN * 4 / 5
	key := testfixtures.SigningKey()
	request := func(cn string, i int) []byte {
		tmpl := &x509.CertificateRequest{Subject: pkix.Name{CommonName: cn, Organization: []string{"team-" + strconv.Itoa(i%300)}}}
		if i%50 == 0 {
			for j := range 200 {
				tmpl.DNSNames = append(tmpl.DNSNames, fmt.Sprintf("host-%d-%d.example.com", i, j))
			}
		}
		return testfixtures.RequestPEM(tb, key, tmpl)
	}
	name := func(prefix string, i int) string {
		s := fmt.Sprintf("%s-%06d", prefix, i)
		if i%10 == 0 {
			s += "-" + strings.Repeat("x", 253-len(s)-1)
		}
		return s
	}
	cert := []byte(strings.Repeat("C", 900)) // an issued certificate's PEM, as the informer holds it
	out := make([]*certificatesv1.CertificateSigningRequest, 0, n)
	mk := func(name, signer, user string, body []byte, created time.Time) *certificatesv1.CertificateSigningRequest {
		return &certificatesv1.CertificateSigningRequest{
			ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name), CreationTimestamp: metav1.NewTime(created)},
			Spec: certificatesv1.CertificateSigningRequestSpec{Request: body, SignerName: signer, Username: user,
				Groups: []string{"system:authenticated", "team-" + user},
				Usages: []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth},
				UID:    "uid-" + user,
				Extra:  map[string]certificatesv1.ExtraValue{"scopes": {"a", "b"}},
			},
		}
	}
	stormBody := testfixtures.SubjectPEM(tb, "system:node:storm", "system:nodes")
	for i := range stormN {
		c := mk(name("storm", i), kubeletClient, "system:node:storm", stormBody, now.Add(-time.Duration(i)*time.Second))
		c.Spec.Groups = []string{"system:nodes", "system:authenticated"}
		out = append(out, c)
	}
	for i := range n * 6 / 100 {
		c := mk(name("runaway", i), clientSigner, benchRunaway, request(fmt.Sprintf("runaway-%d", i), i), now.Add(-time.Duration(i)*time.Second))
		c.Spec.Groups = []string{"system:serviceaccounts", "system:authenticated"}
		out = append(out, c)
	}
	for i := range pendingN - stormN {
		user := fmt.Sprintf("user-%03d", i%300)
		out = append(out, mk(name("pending", i), clientSigner, user, request(fmt.Sprintf("pending-%d", i), i), now.Add(-time.Duration(i)*time.Minute)))
	}
	for i := range n - pendingN {
		user := fmt.Sprintf("user-%03d", i%300)
		c := mk(name("csr", i), clientSigner, user, request(fmt.Sprintf("decided-%d", i), i), now.Add(-time.Duration(i)*time.Minute))
		ty := certificatesv1.CertificateApproved
		if i%2 == 1 {
			ty = certificatesv1.CertificateDenied
		} else {
			c.Status.Certificate = cert
		}
		c.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: ty, Status: corev1.ConditionTrue,
			Reason: "ByConsole", Message: "decided by a person", LastUpdateTime: metav1.NewTime(now.Add(-time.Duration(i) * time.Second))}}
		out = append(out, c)
	}
	return out
}

var benchNow = time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)

// benchRunaway asks for the bench cluster's requester storm.
const benchRunaway = "system:serviceaccount:bench:runaway"

// benchWords words the rows as plainly as the presenter does: the static
// text, the findings' labels and messages.
type benchWords struct{}

func (benchWords) Status(state string) string { return state }
func (benchWords) Static(c *certificatesv1.CertificateSigningRequest, state string, req *csr.Request, decodeErr error) (string, string) {
	subject := ""
	if req != nil {
		subject = req.Subject
	} else if decodeErr != nil {
		subject = decodeErr.Error()
	}
	return strings.ToLower(subject + "\n"), strings.ToLower(c.Spec.SignerName + "\n" + c.Spec.Username + "\n" + state + "\n")
}
func (benchWords) Findings(fs []csr.Finding) string {
	var sb strings.Builder
	for _, f := range fs {
		sb.WriteString(strings.ToLower(f.Message))
		sb.WriteByte('\n')
	}
	return sb.String()
}
func (benchWords) Moment(c *certificatesv1.CertificateSigningRequest, _ string, _, now time.Time) (string, string) {
	return now.Sub(c.CreationTimestamp.Time).Round(time.Minute).String(), ""
}

// benchViews are the views issue 27 measures.
var benchViews = []struct {
	name string
	q    Query
}{
	{"pending", Query{State: Pending}},
	{"all", Query{}},
	{"storm-name", Query{Filter: "storm-00001"}},
	{"requester-storm", Query{Requester: "bench:runaway"}},
}

func benchEnv(q *Queue) Env {
	return Env{Now: benchNow, Checks: q.Checks(), Words: benchWords{}, PageSize: 25, Cache: q.Facts(),
		MayDecide: func(string) bool { return true }}
}

// benchView is one view of the queue as the queue's page asks for it: from
// the Queue's index, which lists the source for its first view only (the
// source reports changes; the engine before issue 27 was given the list).
func benchView(tb testing.TB, q *Queue, _ *source, query Query) Result {
	res, err := q.Run(query, benchEnv(q))
	if err != nil {
		tb.Fatal(err)
	}
	return res
}

// BenchmarkQueueView is the time of one view of the queue over the bench
// cluster (CSRQUEUE_BENCH_SIZE CSRs), each view after a first that fills
// the caches, as a console that has served the queue before.
func BenchmarkQueueView(b *testing.B) {
	src := &source{items: benchCluster(b)}
	q := New(src)
	for _, v := range benchViews {
		b.Run(v.name, func(b *testing.B) {
			if res := benchView(b, q, src, v.q); len(res.Items) == 0 {
				b.Fatal("no rows")
			}
			b.ReportAllocs()
			for b.Loop() {
				benchView(b, q, src, v.q)
			}
		})
	}
}

// BenchmarkQueueViewAfterChange is the time of the pending tab's view after
// one more request joins the node's storm, as under a kubelet retrying: the
// change is applied (one CSR read again) and the storm index, which changed,
// grouped again. The request is removed again after each view, so every
// round changes the same cluster.
func BenchmarkQueueViewAfterChange(b *testing.B) {
	items := benchCluster(b)
	src := &changingSource{source: source{items: items}, byName: map[string]*certificatesv1.CertificateSigningRequest{}}
	for _, c := range items {
		src.byName[c.Name] = c
	}
	q := New(src)
	benchView(b, q, &src.source, Query{State: Pending})
	extra := items[0].DeepCopy()
	extra.Name, extra.UID = "storm-extra", "uid-storm-extra"
	b.ReportAllocs()
	in := false
	for b.Loop() {
		if in {
			delete(src.byName, extra.Name)
		} else {
			src.byName[extra.Name] = extra
		}
		in = !in
		src.change(kube.CSRs, extra.Name)
		if res := benchView(b, q, &src.source, Query{State: Pending}); len(res.Items) == 0 {
			b.Fatal("no rows")
		}
	}
	if src.lists != 1 {
		b.Errorf("the queue listed %d times; its changes are read by name", src.lists)
	}
}

// changingSource reports changes and reads one CSR by name, as kube.Cache.
type changingSource struct {
	source
	byName map[string]*certificatesv1.CertificateSigningRequest
}

func (s *changingSource) CSR(name string) (*certificatesv1.CertificateSigningRequest, error) {
	if c, ok := s.byName[name]; ok {
		return c, nil
	}
	return nil, apierrors.NewNotFound(certificatesv1.Resource("certificatesigningrequests"), name)
}

// BenchmarkQueueHeap reports the heap after runtime.GC() with the bench
// cluster's objects alone (as the informer holds them), after the queue's
// first view of each kind (loaded), and after 100 more views; the queue's
// part is the difference. b.N does not matter: one round is the measurement.
func BenchmarkQueueHeap(b *testing.B) {
	items := benchCluster(b)
	for b.Loop() {
		queueHeapRound(b, items, 0)
	}
}

// BenchmarkQueueHeapInformer is BenchmarkQueueHeap with the objects as the
// console's informers hold them: each decoded from its own JSON (a LIST's
// copy) and put through the informers' transform (kube.Transform), the
// objects' heap included in what is read (heap-after-views), and the
// process's RSS (VmRSS) then; run it with and without GOMEMLIMIT for issue
// 27's figures (CSRQUEUE_BENCH_SIZE=50000).
func BenchmarkQueueHeapInformer(b *testing.B) {
	for b.Loop() {
		base := liveHeapMiB()
		src := buildBenchCluster(b, benchSize()) // its own: the test's copy would stay in the figures
		transform := kube.Transform(&kube.CRDSchemas{})
		items := make([]*certificatesv1.CertificateSigningRequest, len(src))
		for i, c := range src {
			src[i] = nil
			raw, err := json.Marshal(c)
			if err != nil {
				b.Fatal(err)
			}
			var o certificatesv1.CertificateSigningRequest
			if err := json.Unmarshal(raw, &o); err != nil {
				b.Fatal(err)
			}
			t, err := transform(&o)
			if err != nil {
				b.Fatal(err)
			}
			items[i] = t.(*certificatesv1.CertificateSigningRequest)
		}
		b.ReportMetric(liveHeapMiB()-base, "informer-objects-MiB")
		queueHeapRound(b, items, base)
		runtime.KeepAlive(items)
	}
}

// liveHeapMiB is the heap in use after two full collections.
func liveHeapMiB() float64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapAlloc) / (1 << 20)
}

// rssMiB is the process's resident set (VmRSS).
func rssMiB(tb testing.TB) float64 {
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		tb.Skip("no /proc/self/status")
	}
	for line := range strings.Lines(string(raw)) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			return float64(kb) / 1024
		}
	}
	return 0
}

// queueHeapRound builds a queue over items and reports the heap it holds
// after its first view of each kind and after 100 more views; with base
// (the live heap before the objects were made) also the heap in all and RSS.
func queueHeapRound(b *testing.B, items []*certificatesv1.CertificateSigningRequest, base0 float64) {
	heap := func() float64 {
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return float64(m.HeapAlloc) / (1 << 20)
	}
	{
		base := heap()
		src := &source{items: items}
		q := New(src)
		for _, v := range benchViews {
			benchView(b, q, src, v.q)
		}
		loaded := heap()
		for i := range 100 {
			v := benchViews[i%len(benchViews)]
			v.q.Page = i % 3
			benchView(b, q, src, v.q)
		}
		viewed := heap()
		// CSRQUEUE_HEAP_PROFILE names a file for the heap profile at this
		// point, while the queue is alive (go test's -memprofile is written
		// after the benchmark, when it is garbage).
		if path := os.Getenv("CSRQUEUE_HEAP_PROFILE"); path != "" {
			f, err := os.Create(path)
			if err != nil {
				b.Fatal(err)
			}
			if err := pprof.WriteHeapProfile(f); err != nil {
				b.Fatal(err)
			}
			f.Close()
		}
		runtime.KeepAlive(q)
		b.ReportMetric(base, "objects-MiB")
		b.ReportMetric(loaded-base, "queue-loaded-MiB")
		b.ReportMetric(viewed-base, "queue-100views-MiB")
		if base0 > 0 {
			b.ReportMetric(viewed-base0, "heap-after-views-MiB")
			b.ReportMetric(rssMiB(b), "rss-after-views-MiB")
		}
	}
}
