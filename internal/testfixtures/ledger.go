package testfixtures

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/clusterdesk/clusterdesk/internal/ledger"
)

// CSRStory is a CSR's three steps as the ledger's ingestion stores them from
// the API server's audit events (create, approve with a reason, issue), and
// the delete after; Serial is the issued certificate's, as openssl prints it.
type CSRStory struct {
	Entries []ledger.Entry
	Serial  string
	Cert    *x509.Certificate
}

// LedgerCSRStory builds the story of the CSR name for signer, requested by
// requester and approved by approver, with sans DNS names (a request may
// carry hundreds), starting at start, one step a minute.
func LedgerCSRStory(t testing.TB, name, signer, requester, approver string, sans int, start time.Time) CSRStory {
	t.Helper()
	tmpl := &x509.CertificateRequest{Subject: pkix.Name{CommonName: requester, Organization: []string{"auditors"}},
		IPAddresses: []net.IP{net.ParseIP("10.0.0.7")}}
	for i := range sans {
		tmpl.DNSNames = append(tmpl.DNSNames, fmt.Sprintf("host-%03d.%s.example.com", i, name))
	}
	reqPEM := RequestPEM(t, SigningKey(), tmpl)
	obj := &certificatesv1.CertificateSigningRequest{
		TypeMeta: metav1.TypeMeta{APIVersion: "certificates.k8s.io/v1", Kind: "CertificateSigningRequest"},
		ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(start),
			UID: types.UID(fmt.Sprintf("4f1c0c1e-0000-4000-8000-%012x", start.Unix()))},
		Spec: certificatesv1.CertificateSigningRequestSpec{Request: reqPEM, SignerName: signer, Username: requester,
			Usages: []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}},
	}
	entry := func(id, verb, action, sub, user string, code int, at time.Time) ledger.Entry {
		b, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		return ledger.Entry{Source: ledger.SourceAPIServer, ID: id + "-" + name, Time: at.UTC(), User: user,
			Groups: []string{"system:authenticated"}, UserAgent: "kubectl/v1.34.0", SourceIPs: []string{"10.0.0.1"},
			Verb: verb, Action: action, APIGroup: "certificates.k8s.io", APIVersion: "v1",
			Resource: "certificatesigningrequests", Subresource: sub, Kind: "csrs", Name: name, UID: string(obj.UID),
			Signer: signer, Code: code, Result: ledger.ResultOK, Object: b}
	}
	s := CSRStory{}
	s.Entries = append(s.Entries, entry("create", "create", ledger.ActionCreate, "", requester, 201, start))

	obj.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateApproved,
		Status: "True", Reason: "AuditorChecked", Message: "ticket OPS-42: the requester's manager confirmed"}}
	approve := entry("approve", "update", ledger.ActionApprove, "approval", approver, 200, start.Add(time.Minute))
	approve.Reason = "AuditorChecked: ticket OPS-42: the requester's manager confirmed"
	s.Entries = append(s.Entries, approve)

	ca := NewCA(t, "ledger test signer")
	certPEM := ca.Issue(t, RequestKey(t, reqPEM), x509.Certificate{Subject: tmpl.Subject,
		NotBefore: start.Add(2 * time.Minute), NotAfter: start.Add(2*time.Minute + 24*time.Hour)})
	obj.Status.Certificate = certPEM
	s.Entries = append(s.Entries, entry("issue", "update", ledger.ActionIssue, "status",
		"system:serviceaccount:kube-system:certificate-controller", 200, start.Add(2*time.Minute)))
	s.Entries = append(s.Entries, entry("delete", "delete", ledger.ActionDelete, "",
		"system:serviceaccount:kube-system:csrcleaner", 200, start.Add(time.Hour+2*time.Minute)))
	block, _ := pem.Decode(certPEM)
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	s.Cert = cert
	b := cert.SerialNumber.Bytes()
	for i, c := range b {
		if i > 0 {
			s.Serial += ":"
		}
		s.Serial += fmt.Sprintf("%02X", c)
	}
	return s
}
