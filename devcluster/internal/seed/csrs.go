package seed

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"net"

	certv1 "k8s.io/api/certificates/v1"
)

// Requesters of demo CSRs. Node requests are made by admin impersonating the
// node, so spec.username and spec.groups are what a real kubelet would send.
const (
	byAdmin    = "admin"
	byApprover = "approver"
)

func byNode(name string) string { return "system:node:" + name }

// decision is what the seed does with a CSR after creating it.
type decision int

const (
	pending decision = iota
	approve
	deny
)

type keyAlgorithm int

const (
	ecdsaP256 keyAlgorithm = iota
	rsa2048
	ed25519Key
)

// demoCSR describes one seeded CertificateSigningRequest.
type demoCSR struct {
	name      string
	signer    string
	requester string // byAdmin, byApprover or byNode(…)
	subject   pkix.Name
	dnsNames  []string
	ips       []net.IP
	key       keyAlgorithm
	usages    []certv1.KeyUsage
	// expirationSeconds, when set, asks the signer for a shorter certificate.
	expirationSeconds int32
	decision          decision
	decidedBy         string // byAdmin or byApprover
	reason, message   string
}

const customSigner = "example.com/custom"

var (
	clientUsagesEC   = []certv1.KeyUsage{certv1.UsageDigitalSignature, certv1.UsageClientAuth}
	clientUsagesRSA  = []certv1.KeyUsage{certv1.UsageDigitalSignature, certv1.UsageKeyEncipherment, certv1.UsageClientAuth}
	servingUsagesEC  = []certv1.KeyUsage{certv1.UsageDigitalSignature, certv1.UsageServerAuth}
	servingUsagesRSA = []certv1.KeyUsage{certv1.UsageDigitalSignature, certv1.UsageKeyEncipherment, certv1.UsageServerAuth}
	nodes            = []string{"system:nodes"}
)

// demoCSRs cover every state a console shows: pending, approved and issued,
// approved but never issued (no signer runs for example.com/custom), denied,
// and failed (approved, then refused by the signer because the subject does
// not fit the kubelet client rules).
var demoCSRs = []demoCSR{
	{
		name: "demo-jane-client", signer: certv1.KubeAPIServerClientSignerName, requester: byAdmin,
		subject: pkix.Name{CommonName: "jane", Organization: []string{"dev-team"}},
		key:     ecdsaP256, usages: clientUsagesEC,
	},
	{
		name: "demo-ci-bot-client", signer: certv1.KubeAPIServerClientSignerName, requester: byAdmin,
		subject: pkix.Name{CommonName: "ci-bot", Organization: []string{"ci"}},
		key:     rsa2048, usages: clientUsagesRSA, expirationSeconds: 24 * 3600,
		decision: approve, decidedBy: byAdmin, reason: "DemoApproved", message: "CI robot certificate approved by devcluster seed",
	},
	{
		name: "demo-approver-laptop-client", signer: certv1.KubeAPIServerClientSignerName, requester: byApprover,
		subject: pkix.Name{CommonName: "approver", Organization: []string{"csr-approvers"}},
		key:     ecdsaP256, usages: clientUsagesEC,
	},
	{
		name: "demo-contractor-client", signer: certv1.KubeAPIServerClientSignerName, requester: byApprover,
		subject: pkix.Name{CommonName: "contractor", Organization: []string{"external"}},
		key:     rsa2048, usages: clientUsagesRSA,
		decision: deny, decidedBy: byApprover, reason: "DemoDenied", message: "contractors get no cluster credentials",
	},
	{
		name: "demo-worker-1-client", signer: certv1.KubeAPIServerClientKubeletSignerName, requester: byNode("worker-1"),
		subject: pkix.Name{CommonName: byNode("worker-1"), Organization: nodes},
		key:     ecdsaP256, usages: clientUsagesEC,
		decision: approve, decidedBy: byAdmin, reason: "DemoApproved", message: "node worker-1 joined",
	},
	{
		name: "demo-worker-2-client", signer: certv1.KubeAPIServerClientKubeletSignerName, requester: byNode("worker-2"),
		subject: pkix.Name{CommonName: byNode("worker-2"), Organization: nodes},
		key:     rsa2048, usages: clientUsagesRSA,
	},
	{
		name: "demo-worker-1-serving", signer: certv1.KubeletServingSignerName, requester: byNode("worker-1"),
		subject:  pkix.Name{CommonName: byNode("worker-1"), Organization: nodes},
		dnsNames: []string{"worker-1", "worker-1.cluster.local"}, ips: []net.IP{net.IPv4(10, 0, 0, 11)},
		key: ecdsaP256, usages: servingUsagesEC,
	},
	{
		name: "demo-worker-2-serving", signer: certv1.KubeletServingSignerName, requester: byNode("worker-2"),
		subject:  pkix.Name{CommonName: byNode("worker-2"), Organization: nodes},
		dnsNames: []string{"worker-2"}, ips: []net.IP{net.IPv4(10, 0, 0, 12)},
		key: rsa2048, usages: servingUsagesRSA,
		decision: approve, decidedBy: byAdmin, reason: "DemoApproved", message: "serving certificate for worker-2",
	},
	{
		name: "demo-worker-3-misfit", signer: certv1.KubeAPIServerClientKubeletSignerName, requester: byAdmin,
		// No "system:node:" prefix: the signer marks the approved CSR Failed.
		subject: pkix.Name{CommonName: "worker-3", Organization: nodes},
		key:     ecdsaP256, usages: clientUsagesEC,
		decision: approve, decidedBy: byAdmin, reason: "DemoApproved", message: "approved without checking the subject",
	},
	{
		name: "demo-payments-custom", signer: customSigner, requester: byAdmin,
		subject:  pkix.Name{CommonName: "payments.example.com", Organization: []string{"Example Payments"}, Country: []string{"NL"}},
		dnsNames: []string{"payments.example.com", "api.payments.example.com"},
		key:      ed25519Key, usages: servingUsagesEC, expirationSeconds: 3600,
	},
	{
		name: "demo-mesh-gateway-custom", signer: customSigner, requester: byAdmin,
		subject:  pkix.Name{CommonName: "mesh-gateway"},
		dnsNames: []string{"mesh-gateway.mesh.svc"},
		key:      ecdsaP256, usages: []certv1.KeyUsage{certv1.UsageDigitalSignature, certv1.UsageServerAuth, certv1.UsageClientAuth},
		decision: approve, decidedBy: byAdmin, reason: "DemoApproved", message: "waiting for the example.com/custom signer, which does not run here",
	},
	{
		name: "demo-approver-tool-custom", signer: customSigner, requester: byApprover,
		subject: pkix.Name{CommonName: "approver-tool"},
		key:     ecdsaP256, usages: clientUsagesEC,
	},
}

// request returns a PEM certificate request for c, signed with a key made for
// it now; the key is thrown away because nobody uses the certificates.
func (c demoCSR) request() ([]byte, error) {
	key, err := newKey(c.key)
	if err != nil {
		return nil, err
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject:     c.subject,
		DNSNames:    c.dnsNames,
		IPAddresses: c.ips,
	}, key)
	if err != nil {
		return nil, fmt.Errorf("CSR %s: %w", c.name, err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}), nil
}

func newKey(alg keyAlgorithm) (crypto.Signer, error) {
	switch alg {
	case rsa2048:
		return rsa.GenerateKey(rand.Reader, 2048)
	case ed25519Key:
		_, key, err := ed25519.GenerateKey(rand.Reader)
		return key, err
	default:
		return ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	}
}
