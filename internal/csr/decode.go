// Package csr decodes and checks the PKCS#10 requests inside CertificateSigningRequests.
package csr

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net/url"
)

// Request is the decoded content of spec.request.
type Request struct {
	CommonName         string
	Organizations      []string
	OrganizationalUnit []string
	DNSNames           []string
	IPAddresses        []string
	EmailAddresses     []string
	URIs               []string
	PublicKey          string // e.g. "RSA 2048", "ECDSA P-256", "Ed25519"
	SignatureAlgorithm string
}

// ErrNoPEM means spec.request holds no PEM block at all.
var ErrNoPEM = errors.New("spec.request is not PEM: no \"CERTIFICATE REQUEST\" block found")

// Decode parses the PEM-encoded PKCS#10 request. It never panics on hostile
// input: the request bytes are written by whoever created the CSR.
func Decode(pemBytes []byte) (*Request, error) {
	block, _ := pem.Decode(pemBytes)
	if block == nil {
		return nil, ErrNoPEM
	}
	if block.Type != "CERTIFICATE REQUEST" && block.Type != "NEW CERTIFICATE REQUEST" {
		return nil, fmt.Errorf("spec.request holds a PEM block of type %q, want \"CERTIFICATE REQUEST\"", block.Type)
	}
	cr, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("spec.request is not a valid PKCS#10 request: %w", err)
	}
	if err := cr.CheckSignature(); err != nil {
		return nil, fmt.Errorf("spec.request signature does not verify: %w", err)
	}
	r := &Request{
		CommonName:         cr.Subject.CommonName,
		Organizations:      cr.Subject.Organization,
		OrganizationalUnit: cr.Subject.OrganizationalUnit,
		DNSNames:           cr.DNSNames,
		EmailAddresses:     cr.EmailAddresses,
		PublicKey:          describeKey(cr.PublicKey),
		SignatureAlgorithm: cr.SignatureAlgorithm.String(),
	}
	for _, ip := range cr.IPAddresses {
		r.IPAddresses = append(r.IPAddresses, ip.String())
	}
	for _, u := range cr.URIs {
		r.URIs = append(r.URIs, (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path, Opaque: u.Opaque}).String())
	}
	return r, nil
}

func describeKey(pub any) string {
	switch k := pub.(type) {
	case *rsa.PublicKey:
		return fmt.Sprintf("RSA %d", k.N.BitLen())
	case *ecdsa.PublicKey:
		return "ECDSA " + k.Curve.Params().Name
	case ed25519.PublicKey:
		return "Ed25519"
	default:
		return fmt.Sprintf("%T", pub)
	}
}
