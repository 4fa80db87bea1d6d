package testcluster

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"net"
	"regexp"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/clusterdesk/clusterdesk/internal/testfixtures"
)

// CSR describes a CertificateSigningRequest for CreateCSR. Zero fields get
// defaults: a kube-apiserver-client request for CN = the CSR's own name with
// client auth and digital signature usages, created as admin. The CN is unique
// so that a test's requests (and those of tests running beside it on a shared
// devcluster) are no retry storm, which the queue shows as one group row,
// unless a test asks for one by giving the same CommonName.
type CSR struct {
	Suffix            string // part of the generated name, to tell a test's CSRs apart
	Signer            string
	CommonName        string
	Organizations     []string
	DNSNames          []string
	IPs               []string
	Usages            []certificatesv1.KeyUsage
	ExpirationSeconds *int32
	Client            kubernetes.Interface // who creates it; nil: admin
}

// CreateCSR creates a pending CSR with a fresh P-256 key, named after the test
// ("it-<test>-<suffix>-<nanoseconds>"), deletes it when the test ends, and
// returns its name.
func CreateCSR(t testing.TB, s CSR) string {
	t.Helper()
	if s.Signer == "" {
		s.Signer = certificatesv1.KubeAPIServerClientSignerName
	}
	name := csrName(t.Name(), s.Suffix)
	if s.CommonName == "" {
		s.CommonName = name
	}
	if s.Usages == nil {
		s.Usages = []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth, certificatesv1.UsageDigitalSignature}
	}
	cs := s.Client
	if cs == nil {
		cs = kubernetes.NewForConfigOrDie(RestConfig(t, Admin))
	}
	_, err := cs.CertificatesV1().CertificateSigningRequests().Create(context.Background(), &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:           CSRRequest(t, s),
			SignerName:        s.Signer,
			Usages:            s.Usages,
			ExpirationSeconds: s.ExpirationSeconds,
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create CSR %s: %v", name, err)
	}
	// The admin deletes it: the client that made it may not delete CSRs (a
	// node or a bootstrap token may only create and read its own), and a
	// request left behind shows in every later test's queue.
	admin := kubernetes.NewForConfigOrDie(RestConfig(t, Admin))
	t.Cleanup(func() {
		_ = admin.CertificatesV1().CertificateSigningRequests().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	return name
}

// RecreateCSR deletes the CSR name (created by this test) and creates another
// one under the same name from s, as someone racing an approver would, and
// returns the new object's UID. CreateCSR's cleanup deletes it by name.
func RecreateCSR(t testing.TB, name string, s CSR) types.UID {
	t.Helper()
	if s.Signer == "" {
		s.Signer = certificatesv1.KubeAPIServerClientSignerName
	}
	if s.CommonName == "" {
		s.CommonName = name
	}
	if s.Usages == nil {
		s.Usages = []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth, certificatesv1.UsageDigitalSignature}
	}
	cs := s.Client
	if cs == nil {
		cs = kubernetes.NewForConfigOrDie(RestConfig(t, Admin))
	}
	ctx := context.Background()
	csrs := cs.CertificatesV1().CertificateSigningRequests()
	old, err := csrs.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("recreate CSR %s: %v", name, err)
	}
	if err := csrs.Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &old.UID}}); err != nil {
		t.Fatalf("recreate CSR %s: delete: %v", name, err)
	}
	// CSRs have no finalizers, but a create that races the delete would
	// answer AlreadyExists; retry until the name is free.
	deadline := time.Now().Add(10 * time.Second)
	for {
		created, err := csrs.Create(ctx, &certificatesv1.CertificateSigningRequest{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: certificatesv1.CertificateSigningRequestSpec{
				Request: CSRRequest(t, s), SignerName: s.Signer, Usages: s.Usages, ExpirationSeconds: s.ExpirationSeconds,
			},
		}, metav1.CreateOptions{})
		switch {
		case err == nil:
			if created.UID == old.UID {
				t.Fatalf("recreate CSR %s: the new object has the old UID %s", name, old.UID)
			}
			return created.UID
		case !apierrors.IsAlreadyExists(err) || time.Now().After(deadline):
			t.Fatalf("recreate CSR %s: create: %v", name, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// CSRRequest returns a PEM PKCS#10 request for a fresh P-256 key with the
// subject and SANs of s.
func CSRRequest(t testing.TB, s CSR) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.CertificateRequest{
		Subject:  pkix.Name{CommonName: s.CommonName, Organization: s.Organizations},
		DNSNames: s.DNSNames,
	}
	for _, ip := range s.IPs {
		addr := net.ParseIP(ip)
		if addr == nil {
			t.Fatalf("CSR IP %q is not an IP address", ip)
		}
		tmpl.IPAddresses = append(tmpl.IPAddresses, addr)
	}
	return testfixtures.RequestPEM(t, key, tmpl)
}

var notNameChars = regexp.MustCompile(`[^a-z0-9.-]+`)

// csrName is a valid, unique object name made of the test's name and suffix.
func csrName(test, suffix string) string {
	parts := []string{"it", test}
	if suffix != "" {
		parts = append(parts, suffix)
	}
	base := notNameChars.ReplaceAllString(strings.ToLower(strings.Join(parts, "-")), "-")
	stamp := fmt.Sprintf("-%d", time.Now().UnixNano())
	if max := 253 - len(stamp); len(base) > max {
		base = base[:max]
	}
	return strings.Trim(base, "-.") + stamp
}

// With returns a copy of s with Suffix set, for several CSRs of one kind.
func (s CSR) With(suffix string) CSR {
	s.Suffix = suffix
	return s
}
