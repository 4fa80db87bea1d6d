package csr_test

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"reflect"
	"runtime"
	"testing"

	"github.com/clusterdesk/clusterdesk/internal/csr"
	"github.com/clusterdesk/clusterdesk/internal/testfixtures"
)

// TestContentKeyCoversEveryField: the memo shares one Request among requests
// whose digest of every field is equal (contentKey); a field added to Request
// or Extension must be added to the digest, or two requests that differ in it
// would show as one.
func TestContentKeyCoversEveryField(t *testing.T) {
	if n := reflect.TypeFor[csr.Request]().NumField(); n != 14 {
		t.Errorf("Request has %d fields, contentKey digests 14: add the new one to it, then here", n)
	}
	if n := reflect.TypeFor[csr.Extension]().NumField(); n != 3 {
		t.Errorf("Extension has %d fields, contentKey digests 3: add the new one to it, then here", n)
	}
}

// stormPEMs are n requests of one kubelet retrying: one key, one subject, one
// SAN, each PKCS#10 signed anew (so each PEM is its own).
func stormPEMs(t *testing.T, n int, cn string) [][]byte {
	tmpl := &x509.CertificateRequest{Subject: pkix.Name{CommonName: cn, Organization: []string{"system:nodes"}},
		DNSNames: []string{"storm-node"}}
	out := make([][]byte, n)
	for i := range out {
		out[i] = testfixtures.RequestPEM(t, testfixtures.SigningKey(), tmpl)
	}
	return out
}

func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestMemoSharesRequestsOfOneContent: the requests of a storm, each its own
// PEM, decode through the memo to one Request, which is what the queue keeps
// for each pending one; a request of another content to its own. The heap
// the decoded requests hold is logged, decoded apart and through the memo
// (1,000 storm requests: 522 bytes each apart, 132 through the memo, which
// are its own entries, kept before as well).
func TestMemoSharesRequestsOfOneContent(t *testing.T) {
	const n = 1_000
	pems := stormPEMs(t, n, "system:node:storm-node")
	other := stormPEMs(t, 1, "system:node:other-node")[0]

	base := liveHeap()
	apart := make([]*csr.Request, n)
	for i, p := range pems {
		r, err := csr.Decode(p)
		if err != nil {
			t.Fatal(err)
		}
		apart[i] = r
	}
	apartBytes := liveHeap() - base
	runtime.KeepAlive(apart)
	apart = nil

	m := csr.NewMemo(2 * n)
	base = liveHeap()
	kept := make([]*csr.Request, n)
	for i, p := range pems {
		r, err := m.Decode(p)
		if err != nil {
			t.Fatal(err)
		}
		if i > 0 && r != kept[0] {
			t.Fatalf("request %d of the storm decoded to a Request of its own", i)
		}
		kept[i] = r
	}
	sharedBytes := liveHeap() - base
	runtime.KeepAlive(kept)
	t.Logf("%d storm requests decoded: %d bytes apart, %d through the memo (its entries included)", n, apartBytes, sharedBytes)

	o, err := m.Decode(other)
	if err != nil {
		t.Fatal(err)
	}
	if o == kept[0] || o.CommonName != "system:node:other-node" {
		t.Errorf("another node's request decoded to %+v, the storm's %p", o, kept[0])
	}
	if again, _ := m.Decode(pems[0]); again != kept[0] {
		t.Errorf("a PEM decoded again is another Request")
	}
	if got, want := *kept[0], *apart0(t, pems[0]); !reflect.DeepEqual(got, want) {
		t.Errorf("the shared Request is %+v, the PEM decodes to %+v", got, want)
	}
}

func apart0(t *testing.T, p []byte) *csr.Request {
	r, err := csr.Decode(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestMemoKeepsContentsApart: requests that differ in any decoded field (one
// SAN more, another key size) are not shared.
func TestMemoKeepsContentsApart(t *testing.T) {
	m := csr.NewMemo(10)
	base := &x509.CertificateRequest{Subject: pkix.Name{CommonName: "a"}}
	withSAN := &x509.CertificateRequest{Subject: pkix.Name{CommonName: "a"}, DNSNames: []string{"a.example"}}
	withEmail := &x509.CertificateRequest{Subject: pkix.Name{CommonName: "a"}, EmailAddresses: []string{"a.example"}}
	seen := map[*csr.Request]bool{}
	for _, tmpl := range []*x509.CertificateRequest{base, withSAN, withEmail} {
		r, err := m.Decode(testfixtures.RequestPEM(t, testfixtures.SigningKey(), tmpl))
		if err != nil {
			t.Fatal(err)
		}
		if seen[r] {
			t.Errorf("%+v shares the Request of another content", r)
		}
		seen[r] = true
	}
}
