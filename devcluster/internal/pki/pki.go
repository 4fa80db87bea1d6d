// Package pki creates the certificates and keys of a devcluster once and reuses
// them on later runs, so kubeconfigs and trust stay valid across restarts.
package pki

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// MaxAPIServers is how many kube-apiserver instances a devcluster can run:
// instance N serves on 127.0.0.N, and the serving certificate holds them all.
const MaxAPIServers = 9

// servingDNSNames and servingIPs are what the API server certificate is valid for: loopback
// (127.0.0.1 to 127.0.0.MaxAPIServers, one address per instance), plus the in-cluster names
// and first service IP a client would use.
var (
	servingDNSNames = []string{
		"localhost",
		"kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local",
	}
	servingIPs = append(instanceIPs(), net.IPv6loopback, net.IPv4(10, 0, 0, 1))
)

// InstanceIP is the loopback address kube-apiserver instance n (from 1) binds to.
func InstanceIP(n int) net.IP { return net.IPv4(127, 0, 0, byte(n)) }

func instanceIPs() []net.IP {
	ips := make([]net.IP, 0, MaxAPIServers)
	for n := 1; n <= MaxAPIServers; n++ {
		ips = append(ips, InstanceIP(n))
	}
	return ips
}

// ControllerManagerUser is the identity in the controller manager's client
// certificate; the bootstrap RBAC policy binds it to system:kube-controller-manager.
const ControllerManagerUser = "system:kube-controller-manager"

// PKI holds the paths of one devcluster's key material. The CA is both the
// client CA of the API server and the cluster-signing CA of the controller
// manager, so certificates issued for approved CSRs log in to this cluster.
type PKI struct {
	CACert, CAKey           string
	ServingCert, ServingKey string // kube-apiserver serving pair
	KCMCert, KCMKey         string // controller manager client pair
	SAPub, SAKey            string // service-account token signing pair
	OIDCCert, OIDCKey       string // OpenID provider serving pair (loopback)
	OIDCSigningKey          string // OpenID provider ID-token signing key (RSA)
	// The audit webhook (issue 29): a console serving on 127.0.0.1 as the
	// API server's audit webhook backend, with a serving pair from the CA
	// above, and the API server's client pair as webhook client from a CA
	// of its own (AuditClientCA). Not from the cluster CA: that CA also
	// signs every approved CSR, so any holder of an issued certificate
	// could then post audit events.
	AuditServingCert, AuditServingKey   string
	AuditClientCACert, AuditClientCAKey string
	AuditClientCert, AuditClientKey     string
}

// AuditWebhookClientUser is the identity in the API server's client
// certificate as audit webhook client.
const AuditWebhookClientUser = "kube-apiserver-audit-webhook"

func layout(dir string) PKI {
	f := func(name string) string { return filepath.Join(dir, name) }
	return PKI{
		CACert: f("ca.crt"), CAKey: f("ca.key"),
		ServingCert: f("apiserver.crt"), ServingKey: f("apiserver.key"),
		KCMCert: f("controller-manager.crt"), KCMKey: f("controller-manager.key"),
		SAPub: f("sa.pub"), SAKey: f("sa.key"),
		OIDCCert: f("oidc.crt"), OIDCKey: f("oidc.key"),
		OIDCSigningKey:   f("oidc-signing.key"),
		AuditServingCert: f("audit-webhook.crt"), AuditServingKey: f("audit-webhook.key"),
		AuditClientCACert: f("audit-client-ca.crt"), AuditClientCAKey: f("audit-client-ca.key"),
		AuditClientCert: f("audit-client.crt"), AuditClientKey: f("audit-client.key"),
	}
}

// Ensure creates whatever key material is missing under dir and returns its
// layout. Existing files are kept, except leaf certificates that no longer
// chain to the CA on disk (the CA was deleted by hand), which are reissued.
func Ensure(dir string) (PKI, error) {
	p := layout(dir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return p, err
	}
	ca, caKey, err := ensureCA(p.CACert, p.CAKey, "devcluster-ca")
	if err != nil {
		return p, fmt.Errorf("CA: %w", err)
	}
	serving := &x509.Certificate{
		Subject:     pkix.Name{CommonName: "kube-apiserver"},
		DNSNames:    servingDNSNames,
		IPAddresses: servingIPs,
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if err := p.ensureLeaf(p.ServingCert, p.ServingKey, serving, ca, caKey); err != nil {
		return p, fmt.Errorf("apiserver serving certificate: %w", err)
	}
	kcm := &x509.Certificate{
		Subject:     pkix.Name{CommonName: ControllerManagerUser},
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if err := p.ensureLeaf(p.KCMCert, p.KCMKey, kcm, ca, caKey); err != nil {
		return p, fmt.Errorf("controller-manager client certificate: %w", err)
	}
	if err := p.ensureSAKeys(); err != nil {
		return p, fmt.Errorf("service-account keys: %w", err)
	}
	// The OpenID provider is reached by kube-apiserver and by browsers on
	// loopback only, so its certificate names nothing else.
	oidc := &x509.Certificate{
		Subject:     pkix.Name{CommonName: "devcluster-oidc"},
		DNSNames:    []string{"localhost"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if err := p.ensureLeaf(p.OIDCCert, p.OIDCKey, oidc, ca, caKey); err != nil {
		return p, fmt.Errorf("OpenID provider serving certificate: %w", err)
	}
	if err := ensureRSAKey(p.OIDCSigningKey); err != nil {
		return p, fmt.Errorf("OpenID provider signing key: %w", err)
	}
	if err := p.ensureAuditWebhook(ca, caKey); err != nil {
		return p, fmt.Errorf("audit webhook: %w", err)
	}
	return p, nil
}

// ensureAuditWebhook creates the audit webhook's serving pair (loopback,
// from the cluster CA, which the API server's webhook kubeconfig trusts)
// and the API server's client pair from the audit client CA.
func (p PKI) ensureAuditWebhook(ca *x509.Certificate, caKey crypto.Signer) error {
	serving := &x509.Certificate{
		Subject:     pkix.Name{CommonName: "clusterdesk-audit-webhook"},
		DNSNames:    []string{"localhost"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if err := p.ensureLeaf(p.AuditServingCert, p.AuditServingKey, serving, ca, caKey); err != nil {
		return fmt.Errorf("serving certificate: %w", err)
	}
	clientCA, clientCAKey, err := ensureCA(p.AuditClientCACert, p.AuditClientCAKey, "devcluster-audit-client-ca")
	if err != nil {
		return fmt.Errorf("client CA: %w", err)
	}
	client := &x509.Certificate{
		Subject:     pkix.Name{CommonName: AuditWebhookClientUser},
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if err := p.ensureLeaf(p.AuditClientCert, p.AuditClientKey, client, clientCA, clientCAKey); err != nil {
		return fmt.Errorf("client certificate: %w", err)
	}
	return nil
}

// ensureCA reads the CA at certPath and keyPath, or creates it.
func ensureCA(certPath, keyPath, name string) (*x509.Certificate, crypto.Signer, error) {
	if cert, err := ReadCert(certPath); err == nil {
		key, err := ReadKey(keyPath)
		if err != nil {
			return nil, nil, err
		}
		return cert, key, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		Subject:               pkix.Name{CommonName: name},
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	cert, err := sign(tmpl, tmpl, key.Public(), key, 10*365*24*time.Hour)
	if err != nil {
		return nil, nil, err
	}
	if err := writeKey(keyPath, key); err != nil {
		return nil, nil, err
	}
	return cert, key, writeCert(certPath, cert)
}

func (p PKI) ensureLeaf(certPath, keyPath string, tmpl, ca *x509.Certificate, caKey crypto.Signer) error {
	if cert, err := ReadCert(certPath); err == nil {
		// A certificate issued before the template changed (a serving
		// certificate for 127.0.0.1 alone, before several instances) is reissued.
		if _, keyErr := ReadKey(keyPath); keyErr == nil && cert.CheckSignatureFrom(ca) == nil && sameIPs(cert.IPAddresses, tmpl.IPAddresses) {
			return nil
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	cert, err := sign(tmpl, ca, key.Public(), caKey, 5*365*24*time.Hour)
	if err != nil {
		return err
	}
	if err := writeKey(keyPath, key); err != nil {
		return err
	}
	return writeCert(certPath, cert)
}

func sameIPs(a, b []net.IP) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !a[i].Equal(b[i]) {
			return false
		}
	}
	return true
}

// ensureSAKeys writes an RSA pair because service-account token signing
// defaults to RS256, which every token verifier accepts.
func (p PKI) ensureSAKeys() error {
	if _, err := os.Stat(p.SAKey); err == nil {
		if _, err := os.Stat(p.SAPub); err == nil {
			return nil
		}
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	pub, err := x509.MarshalPKIXPublicKey(key.Public())
	if err != nil {
		return err
	}
	if err := writeKey(p.SAKey, key); err != nil {
		return err
	}
	return writePEM(p.SAPub, "PUBLIC KEY", pub, 0o644)
}

// ensureRSAKey writes an RSA key at path unless one is there: ID tokens are
// signed RS256, the one algorithm every OpenID relying party must accept. It
// is kept across runs so tokens issued before a restart still verify.
func ensureRSAKey(path string) error {
	if _, err := ReadKey(path); err == nil {
		return nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	return writeKey(path, key)
}

// sign issues tmpl signed by parent's key, filling in serial and validity.
// NotBefore is backdated an hour so small clock differences don't matter.
func sign(tmpl, parent *x509.Certificate, pub crypto.PublicKey, parentKey crypto.Signer, validity time.Duration) (*x509.Certificate, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, err
	}
	t := *tmpl
	t.SerialNumber = serial
	t.NotBefore = time.Now().Add(-time.Hour)
	t.NotAfter = time.Now().Add(validity)
	der, err := x509.CreateCertificate(rand.Reader, &t, parent, pub, parentKey)
	if err != nil {
		return nil, err
	}
	return x509.ParseCertificate(der)
}

// ReadCert parses the first certificate of a PEM file.
func ReadCert(path string) (*x509.Certificate, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, fmt.Errorf("%s: no CERTIFICATE PEM block", path)
	}
	return x509.ParseCertificate(block.Bytes)
}

// ReadKey parses a PKCS#8 private key PEM file.
func ReadKey(path string) (crypto.Signer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "PRIVATE KEY" {
		return nil, fmt.Errorf("%s: no PRIVATE KEY PEM block", path)
	}
	key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, err
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("%s: %T is not a signing key", path, key)
	}
	return signer, nil
}

func writeCert(path string, cert *x509.Certificate) error {
	return writePEM(path, "CERTIFICATE", cert.Raw, 0o644)
}

func writeKey(path string, key crypto.Signer) error {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	return writePEM(path, "PRIVATE KEY", der, 0o600)
}

func writePEM(path, blockType string, der []byte, mode os.FileMode) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: blockType, Bytes: der}), mode)
}
