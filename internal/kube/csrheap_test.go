package kube_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/clusterdesk/clusterdesk/internal/csr"
	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// The CSR cache's heap: the bench shapes of issue 27 (decided requests,
// some with 200 SANs, one in ten with a 253-character name, as the API
// server returns them: managedFields of the creator, the approver and the
// signer) put through the informers' transform into an informer's store, the
// live heap read after a full GC. Each object is decoded from its own JSON,
// as a LIST decodes it, so no two share a byte.

// csrShapes are the request and certificate PEMs the shapes reuse (signing
// 50,000 requests would take seconds and measure nothing more).
type csrShapes struct {
	request, manySANs, cert []byte
}

func newCSRShapes(tb testing.TB) csrShapes {
	tb.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	req := func(sans int) []byte {
		tmpl := &x509.CertificateRequest{Subject: pkix.Name{CommonName: "user-042", Organization: []string{"team-42"}}}
		for j := range sans {
			tmpl.DNSNames = append(tmpl.DNSNames, fmt.Sprintf("host-42-%d.example.com", j))
		}
		der, err := x509.CreateCertificateRequest(rand.Reader, tmpl, key)
		if err != nil {
			tb.Fatal(err)
		}
		return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(42), Subject: pkix.Name{CommonName: "user-042", Organization: []string{"team-42"}},
		NotBefore: time.Unix(1e9, 0), NotAfter: time.Unix(1e9+3600*24*365, 0), ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		tb.Fatal(err)
	}
	return csrShapes{request: req(0), manySANs: req(200), cert: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// shapeCSRJSON is the i-th CSR of the shapes as the API server sends it:
// decided (half approved and issued, half denied) or pending.
func shapeCSRJSON(tb testing.TB, s csrShapes, i int, decided bool) []byte {
	tb.Helper()
	name := fmt.Sprintf("csr-%06d", i)
	if i%10 == 0 {
		name += "-" + strings.Repeat("x", 253-len(name)-1)
	}
	body := s.request
	if i%50 == 0 {
		body = s.manySANs
	}
	at := metav1.NewTime(time.Unix(1.7e9+int64(i), 0))
	fields := func(raw string) *metav1.FieldsV1 { return &metav1.FieldsV1{Raw: []byte(raw)} }
	c := &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(fmt.Sprintf("6f1c1a2e-0000-4000-8000-%012d", i)),
			ResourceVersion: strconv.Itoa(100000 + i), CreationTimestamp: at,
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate,
				APIVersion: "certificates.k8s.io/v1", Time: &at, FieldsType: "FieldsV1",
				FieldsV1: fields(`{"f:spec":{"f:expirationSeconds":{},"f:request":{},"f:signerName":{},"f:usages":{}}}`)}}},
		Spec: certificatesv1.CertificateSigningRequestSpec{Request: body, SignerName: "kubernetes.io/kube-apiserver-client",
			Username: fmt.Sprintf("user-%03d", i%300), UID: fmt.Sprintf("uid-user-%03d", i%300),
			Groups: []string{"system:authenticated", fmt.Sprintf("team-%03d", i%300)},
			Usages: []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}},
	}
	if decided {
		ty, reason := certificatesv1.CertificateApproved, "ByConsole"
		if i%2 == 1 {
			ty, reason = certificatesv1.CertificateDenied, "ByConsoleDenied"
		}
		c.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: ty, Status: corev1.ConditionTrue,
			Reason: reason, Message: "decided by a person in clusterdesk", LastUpdateTime: at, LastTransitionTime: at}}
		c.ManagedFields = append(c.ManagedFields, metav1.ManagedFieldsEntry{Manager: "clusterdesk", Operation: metav1.ManagedFieldsOperationUpdate,
			APIVersion: "certificates.k8s.io/v1", Time: &at, FieldsType: "FieldsV1", Subresource: "approval",
			FieldsV1: fields(`{"f:status":{"f:conditions":{".":{},"k:{\"type\":\"` + string(ty) + `\"}":{".":{},"f:lastTransitionTime":{},"f:lastUpdateTime":{},"f:message":{},"f:reason":{},"f:status":{},"f:type":{}}}}}`)})
		if ty == certificatesv1.CertificateApproved {
			c.Status.Certificate = s.cert
			c.ManagedFields = append(c.ManagedFields, metav1.ManagedFieldsEntry{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate,
				APIVersion: "certificates.k8s.io/v1", Time: &at, FieldsType: "FieldsV1", Subresource: "status",
				FieldsV1: fields(`{"f:status":{"f:certificate":{}}}`)})
		}
	}
	raw, err := json.Marshal(c)
	if err != nil {
		tb.Fatal(err)
	}
	return raw
}

// csrStoreHeap fills an informer's store with n shaped CSRs (decided of
// them decided) through transform and returns the live heap it holds.
func csrStoreHeap(tb testing.TB, n, decided int, transform cache.TransformFunc) (int64, cache.Indexer) {
	tb.Helper()
	shapes := newCSRShapes(tb)
	before := liveHeap()
	store := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for i := range n {
		var c certificatesv1.CertificateSigningRequest
		if err := json.Unmarshal(shapeCSRJSON(tb, shapes, i, i < decided), &c); err != nil {
			tb.Fatal(err)
		}
		obj, err := transform(&c)
		if err != nil {
			tb.Fatal(err)
		}
		if err := store.Add(obj); err != nil {
			tb.Fatal(err)
		}
	}
	after := liveHeap()
	// CSR_HEAP_PROFILE names a file for the heap profile while the store is
	// alive (go test's -memprofile is written when it is garbage).
	if path := os.Getenv("CSR_HEAP_PROFILE"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			tb.Fatal(err)
		}
		if err := pprof.WriteHeapProfile(f); err != nil {
			tb.Fatal(err)
		}
		f.Close()
	}
	runtime.KeepAlive(store)
	return after - before, store
}

// csrHeapSize is how many CSRs the heap benchmark holds: CSR_HEAP_SIZE, else
// 2,000 (make test runs every benchmark once; issue 27 measures 50,000).
func csrHeapSize() int {
	if n, err := strconv.Atoi(os.Getenv("CSR_HEAP_SIZE")); err == nil && n >= 100 {
		return n
	}
	return 2_000
}

// BenchmarkCSRCacheHeap reports the bytes the CSR cache holds per CSR of the
// shapes (90% decided), as the informers' transform leaves them and as
// decoded (no transform).
func BenchmarkCSRCacheHeap(b *testing.B) {
	n := csrHeapSize()
	for _, tc := range []struct {
		name      string
		transform cache.TransformFunc
	}{
		{"decoded", func(o any) (any, error) { return o, nil }},
		{"transformed", kube.Transform(&kube.CRDSchemas{})},
		{"transformed+summarized", kube.TransformWith(&kube.CRDSchemas{}, csr.Summarize)},
	} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				heap, store := csrStoreHeap(b, n, n*9/10, tc.transform)
				b.ReportMetric(float64(heap)/float64(n), "B/csr")
				b.ReportMetric(float64(heap)/(1<<20), "MiB")
				runtime.KeepAlive(store)
			}
		})
	}
}

// requestBytes is the bytes of spec.request of every CSR in store.
func requestBytes(store cache.Indexer) int {
	total := 0
	for _, o := range store.List() {
		total += len(o.(*certificatesv1.CertificateSigningRequest).Spec.Request)
	}
	return total
}

// TestTransformSummarizesDecidedRequests: a decided request's spec.request
// is its summary, which decodes as the PEM did; a pending one keeps its PEM
// (it may still be decided, on what the person saw); the transform run
// again changes nothing.
func TestTransformSummarizesDecidedRequests(t *testing.T) {
	shapes := newCSRShapes(t)
	transform := kube.TransformWith(&kube.CRDSchemas{}, csr.Summarize)
	for i, decided := range []bool{true, true, false} {
		var c certificatesv1.CertificateSigningRequest
		if err := json.Unmarshal(shapeCSRJSON(t, shapes, i, decided), &c); err != nil {
			t.Fatal(err)
		}
		want, err := csr.Decode(c.Spec.Request)
		if err != nil {
			t.Fatal(err)
		}
		pemBytes := c.Spec.Request
		got, err := transform(&c)
		if err != nil {
			t.Fatal(err)
		}
		cached := got.(*certificatesv1.CertificateSigningRequest)
		if csr.IsSummary(cached.Spec.Request) != decided {
			t.Errorf("csr %d: decided %v, summarized %v", i, decided, csr.IsSummary(cached.Spec.Request))
		}
		if !decided && string(cached.Spec.Request) != string(pemBytes) {
			t.Errorf("csr %d: a pending request's PEM changed", i)
		}
		if r, err := csr.Decode(cached.Spec.Request); err != nil || r.Subject != want.Subject || r.PublicKey != want.PublicKey {
			t.Errorf("csr %d: the cached request decodes to %+v (%v), want %+v", i, r, err, want)
		}
		again, _ := transform(cached.DeepCopy())
		if !equality.Semantic.DeepEqual(again, got) {
			t.Errorf("csr %d: the transform run again changed it", i)
		}
	}
}

// TestTransformKeepsCSRValues: interning shares values, it changes none (the
// shapes' field sets are within ManagedFieldsDepth, so nothing is trimmed);
// an issued certificate is left out, in its place what it was, so the
// request still reads as issued, and the transform run again changes nothing.
func TestTransformKeepsCSRValues(t *testing.T) {
	shapes := newCSRShapes(t)
	transform := kube.Transform(&kube.CRDSchemas{})
	for i, decided := range []bool{true, true, false} {
		var c certificatesv1.CertificateSigningRequest
		if err := json.Unmarshal(shapeCSRJSON(t, shapes, i, decided), &c); err != nil {
			t.Fatal(err)
		}
		want := c.DeepCopy()
		got, err := transform(&c)
		if err != nil {
			t.Fatal(err)
		}
		cached := got.(*certificatesv1.CertificateSigningRequest)
		if issued := len(want.Status.Certificate) > 0; issued != kube.CertificateLeftOut(cached) {
			t.Errorf("csr %d: issued %v, certificate left out %v (%q)", i, issued, kube.CertificateLeftOut(cached), cached.Status.Certificate)
		}
		want.Status.Certificate = cached.Status.Certificate
		if !equality.Semantic.DeepEqual(got, want) {
			t.Errorf("csr %d changed by the transform:\n got %+v\nwant %+v", i, got, want)
		}
		again, _ := transform(cached.DeepCopy())
		if !equality.Semantic.DeepEqual(again, got) {
			t.Errorf("csr %d: the transform run again changed it", i)
		}
	}
}
