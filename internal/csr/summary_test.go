package csr

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"errors"
	"fmt"
	"net"
	"net/url"
	"reflect"
	"testing"

	"github.com/clusterdesk/clusterdesk/internal/testfixtures"
)

// A summary decodes to what its PEM decodes to, for every field a Request
// has (the queue's rows, search, checks and policies read nothing else).
func TestSummaryDecodesAsThePEM(t *testing.T) {
	key := testfixtures.SigningKey()
	_, edKey, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTrue, err := asn1.Marshal(struct{ IsCA bool }{true})
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse("spiffe://cluster.local/ns/default/sa/web")
	var many []string
	for i := range 200 {
		many = append(many, fmt.Sprintf("host-%d.example.com", i))
	}
	requests := map[string][]byte{
		"kubelet serving": testfixtures.RequestPEM(t, key, &x509.CertificateRequest{
			Subject:     pkix.Name{CommonName: "system:node:worker-1", Organization: []string{"system:nodes"}},
			DNSNames:    []string{"worker-1"},
			IPAddresses: []net.IP{net.ParseIP("10.0.0.7"), net.ParseIP("fd00::7")},
		}),
		"every SAN type, a CA, an unknown extension": testfixtures.RequestPEM(t, key, &x509.CertificateRequest{
			Subject:        pkix.Name{CommonName: "web", Organization: []string{"a", "b"}, OrganizationalUnit: []string{"ops"}},
			DNSNames:       []string{"web.example.com"},
			EmailAddresses: []string{"ops@example.com"},
			URIs:           []*url.URL{u},
			ExtraExtensions: []pkix.Extension{
				{Id: asn1.ObjectIdentifier{2, 5, 29, 19}, Critical: true, Value: caTrue},
				{Id: asn1.ObjectIdentifier{1, 2, 3, 4}, Value: []byte{5, 0}},
			},
		}),
		"ed25519, no subject": testfixtures.RequestPEM(t, edKey, &x509.CertificateRequest{}),
		"200 SANs":            testfixtures.RequestPEM(t, key, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "many"}, DNSNames: many}),
	}
	for name, pemBytes := range requests {
		t.Run(name, func(t *testing.T) {
			want, err := Decode(pemBytes)
			if err != nil {
				t.Fatal(err)
			}
			s, ok := Summarize(pemBytes)
			if !ok || !IsSummary(s) {
				t.Fatalf("not summarized: %v %q", ok, s)
			}
			got, err := Decode(s)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(normalized(got), normalized(want)) {
				t.Errorf("the summary decodes to\n %+v\nthe PEM to\n %+v", got, want)
			}
			if _, ok := Summarize(s); ok {
				t.Error("a summary was summarized again")
			}
			if _, err := PublicKeyInfo(s); !errors.Is(err, ErrSummary) {
				t.Errorf("the key of a summary: %v, want ErrSummary", err)
			}
			t.Logf("%d bytes of PEM, %d of summary", len(pemBytes), len(s))
		})
	}
	// A request that does not decode stays as it is: it still reads as bad.
	if _, ok := Summarize([]byte("this is not a PEM-encoded certificate request")); ok {
		t.Error("a bad request was summarized")
	}
}

// A usual request's summary is well under its PEM: what the cache saves
// per decided request (issue 27). The kube package's heap test holds the
// saving per cached object.
func TestSummaryIsSmall(t *testing.T) {
	pemBytes := testfixtures.RequestPEM(t, testfixtures.SigningKey(), &x509.CertificateRequest{
		Subject: pkix.Name{CommonName: "user-042", Organization: []string{"team-42"}},
	})
	s, ok := Summarize(pemBytes)
	if !ok {
		t.Fatal("not summarized")
	}
	if len(s) > len(pemBytes)/2 {
		t.Errorf("summary %d bytes, PEM %d: more than half", len(s), len(pemBytes))
	}
}

// normalized is r with empty lists as nil (JSON leaves them out).
func normalized(r *Request) Request {
	out := *r
	for _, l := range []*[]string{&out.Organizations, &out.OrganizationalUnit, &out.DNSNames, &out.IPAddresses, &out.EmailAddresses, &out.URIs} {
		if len(*l) == 0 {
			*l = nil
		}
	}
	if len(out.Extensions) == 0 {
		out.Extensions = nil
	}
	return out
}
