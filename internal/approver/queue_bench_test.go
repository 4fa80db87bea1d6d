package approver

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	certlisters "k8s.io/client-go/listers/certificates/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/clusterdesk/clusterdesk/internal/csrpolicy"
	"github.com/clusterdesk/clusterdesk/internal/testfixtures"
)

// benchPending is how many pending requests the queue benchmark decides:
// APPROVER_BENCH_PENDING, else 1,000, so that make test, which runs every
// benchmark once, stays quick. Issue 28 measures 5,000.
func benchPending() int {
	if n, err := strconv.Atoi(os.Getenv("APPROVER_BENCH_PENDING")); err == nil && n >= 100 {
		return n
	}
	return 1_000
}

// The demo policy's SAN rule (devcluster/internal/seed/demo), which walks
// every SAN against the Node's addresses, and a deny policy on the same
// signer, so that each request runs two programs.
const (
	benchServing = `request.username == request.subject.commonName &&
    request.subject.commonName.startsWith('system:node:') &&
    'system:nodes' in request.groups &&
    request.usages.all(u, u in ['digital signature', 'key encipherment', 'server auth']) &&
    node != null &&
    request.dnsNames.all(n, n in node.addresses) &&
    request.ipAddresses.all(ip, ip in node.addresses)`
	benchDeny = `request.subject.commonName.startsWith('system:serviceaccount:') || request.requestsCA`
)

// benchWorld is a queue of n pending kubelet-serving requests in the worst
// shapes: 10% with 200 SANs (each checked against its Node's 200 addresses),
// 10% with 253-character names (object and node), the rest a storm of one
// node asking again and again (4,000 of 5,000).
type benchWorld struct {
	names []string
	csrs  certlisters.CertificateSigningRequestLister
	nodes map[string]*csrpolicy.Node
}

var (
	worldOnce sync.Once
	world     *benchWorld
)

func newBenchWorld(b *testing.B, n int) *benchWorld {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	w := &benchWorld{nodes: map[string]*csrpolicy.Node{}}
	var sans []string
	for s := range 200 {
		sans = append(sans, fmt.Sprintf("san-%03d.k8s.example.com", s))
	}
	long := strings.Repeat("n", 253)
	storm := x509.CertificateRequest{Subject: pkix.Name{CommonName: "system:node:storm", Organization: []string{"system:nodes"}},
		DNSNames: []string{"storm.example.com"}, IPAddresses: []net.IP{net.ParseIP("10.0.0.1")}}
	stormPEM := testfixtures.RequestPEM(b, key, &storm) // a kubelet retrying sends the same request
	w.nodes["storm"] = &csrpolicy.Node{Name: "storm", Addresses: []string{"storm.example.com", "10.0.0.1"}}
	for i := range n {
		node, pem, name := "storm", stormPEM, fmt.Sprintf("csr-%06d", i)
		switch i % 10 {
		case 0: // 200 SANs, every one its Node's
			node = fmt.Sprintf("wide-%d", i)
			pem = testfixtures.RequestPEM(b, key, &x509.CertificateRequest{
				Subject: pkix.Name{CommonName: "system:node:" + node, Organization: []string{"system:nodes"}}, DNSNames: sans})
			w.nodes[node] = &csrpolicy.Node{Name: node, Addresses: sans}
		case 1: // 253-character names
			suffix := fmt.Sprintf("-%06d", i)
			name = long[:253-len(suffix)] + suffix
			node = long[:253-len("system:node:")-len(suffix)] + suffix
			pem = testfixtures.RequestPEM(b, key, &x509.CertificateRequest{
				Subject: pkix.Name{CommonName: "system:node:" + node, Organization: []string{"system:nodes"}}, DNSNames: []string{node}})
			w.nodes[node] = &csrpolicy.Node{Name: node, Addresses: []string{node}}
		}
		c := &certificatesv1.CertificateSigningRequest{
			ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(fmt.Sprintf("uid-%d", i)), ResourceVersion: "1", CreationTimestamp: metav1.Now()},
			Spec: certificatesv1.CertificateSigningRequestSpec{
				Request: pem, SignerName: certificatesv1.KubeletServingSignerName,
				Username: "system:node:" + node, Groups: []string{"system:nodes", "system:authenticated"},
				Usages: []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageServerAuth},
			},
		}
		if err := idx.Add(c); err != nil {
			b.Fatal(err)
		}
		w.names = append(w.names, name)
	}
	w.csrs = certlisters.NewCertificateSigningRequestLister(idx)
	return w
}

// countingDecider stands for the API server: it counts the decisions.
type countingDecider struct{ n atomic.Int64 }

func (d *countingDecider) Decide(_ context.Context, c *certificatesv1.CertificateSigningRequest, _ csrpolicy.Verdict) (*certificatesv1.CertificateSigningRequest, error) {
	d.n.Add(1)
	return c, nil
}

func benchPolicies(b *testing.B) *Policies {
	objs := []*unstructured.Unstructured{
		policyObject("kubelet-serving", certificatesv1.KubeletServingSignerName, "Approve", benchServing),
		policyObject("deny-system-names", certificatesv1.KubeletServingSignerName, "Deny", benchDeny),
	}
	p := NewPolicies(func() ([]*unstructured.Unstructured, error) { return objs, nil }, slog.New(slog.NewTextHandler(io.Discard, nil)),
		func(name string, err error) { b.Fatalf("policy %s: %v", name, err) })
	if pr, _ := p.For(certificatesv1.KubeletServingSignerName); len(pr) != 2 {
		b.Fatal("the policies did not compile")
	}
	return p
}

func policyObject(name, signer, decision, expr string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": name},
		"spec":     map[string]any{"signerNames": []any{signer}, "decision": decision, "reason": "Bench", "expression": expr},
	}}
}

func benchController(b *testing.B, w *benchWorld, d Decider) *Controller {
	return NewController(Options{
		CSRs: w.csrs, Policies: benchPolicies(b), Decider: d,
		Node:    func(name string) *csrpolicy.Node { return w.nodes[name] },
		Metrics: NewMetrics(noPending, noSigners), Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
}

// BenchmarkSyncWorstRequest is one request's evaluation and decision: a
// node's serving request with 200 SANs against its Node's 200 addresses,
// through both policies naming its signer.
func BenchmarkSyncWorstRequest(b *testing.B) {
	worldOnce.Do(func() { world = newBenchWorld(b, benchPending()) })
	d := &countingDecider{}
	c := benchController(b, world, d)
	name := world.names[0] // i%10 == 0: 200 SANs
	b.ReportAllocs()
	for b.Loop() {
		if err := c.Sync(context.Background(), name); err != nil {
			b.Fatal(err)
		}
	}
	if d.n.Load() == 0 {
		b.Fatal("the request was not approved")
	}
}

// BenchmarkQueuePending decides a queue of pending requests (benchPending)
// through the decide loop, two workers as deployed, the API server stood for
// by a decider that counts.
func BenchmarkQueuePending(b *testing.B) {
	worldOnce.Do(func() { world = newBenchWorld(b, benchPending()) })
	b.ReportAllocs()
	for b.Loop() {
		d := &countingDecider{}
		c := benchController(b, world, d)
		for _, n := range world.names {
			r, err := world.csrs.Get(n)
			if err != nil {
				b.Fatal(err)
			}
			c.Enqueue(r)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { c.Run(ctx, 2); close(done) }()
		for d.n.Load() < int64(len(world.names)) {
			time.Sleep(time.Millisecond)
		}
		cancel()
		<-done
	}
	b.ReportMetric(float64(len(world.names)), "requests/op")
}
