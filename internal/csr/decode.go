// Package csr decodes and checks the PKCS#10 requests inside CertificateSigningRequests.
package csr

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"encoding/asn1"
	"encoding/pem"
	"errors"
	"fmt"
	"net/url"
)

// Request is the decoded content of spec.request.
type Request struct {
	Subject            string // the whole subject, RFC 2253, e.g. "CN=jane,O=dev"
	CommonName         string
	Organizations      []string
	OrganizationalUnit []string
	DNSNames           []string
	IPAddresses        []string
	EmailAddresses     []string
	URIs               []string
	PublicKey          string // e.g. "RSA 2048", "ECDSA P-256", "Ed25519"
	KeyAlgorithm       string // "RSA", "ECDSA", "Ed25519", or the Go type of an unknown key
	KeyBits            int    // RSA modulus or curve size; 0 when unknown
	SignatureAlgorithm string
	// Extensions are the X.509 extensions the requester asked for. Kubernetes
	// signers ignore all but the SANs (usages come from spec.usages); other
	// signers may honour them.
	Extensions []Extension
	// RequestsCA is set when the request asks for basicConstraints CA:TRUE.
	RequestsCA bool
}

// Extension is one requested X.509 extension.
type Extension struct {
	Name     string // e.g. "subjectAltName", or the OID when not a well-known one
	OID      string
	Critical bool
}

// ErrNoPEM means spec.request holds no PEM block at all.
var ErrNoPEM = errors.New("spec.request is not PEM: no \"CERTIFICATE REQUEST\" block found")

// Decode parses the PEM-encoded PKCS#10 request, or the summary the CSR
// cache keeps of a decided one (summary.go). It never panics on hostile
// input: the request bytes are written by whoever created the CSR.
func Decode(pemBytes []byte) (*Request, error) {
	if IsSummary(pemBytes) {
		return fromSummary(pemBytes)
	}
	cr, err := parseRequest(pemBytes)
	if err != nil {
		return nil, err
	}
	r := &Request{
		Subject:            cr.Subject.String(),
		CommonName:         cr.Subject.CommonName,
		Organizations:      cr.Subject.Organization,
		OrganizationalUnit: cr.Subject.OrganizationalUnit,
		DNSNames:           cr.DNSNames,
		EmailAddresses:     cr.EmailAddresses,
		SignatureAlgorithm: cr.SignatureAlgorithm.String(),
	}
	r.KeyAlgorithm, r.KeyBits, r.PublicKey = describeKey(cr.PublicKey)
	for _, ext := range cr.Extensions {
		oid := ext.Id.String()
		r.Extensions = append(r.Extensions, Extension{Name: extensionName(oid), OID: oid, Critical: ext.Critical})
		if oid == oidBasicConstraints {
			r.RequestsCA = basicConstraintsCA(ext.Value)
		}
	}
	for _, ip := range cr.IPAddresses {
		r.IPAddresses = append(r.IPAddresses, ip.String())
	}
	for _, u := range cr.URIs {
		r.URIs = append(r.URIs, (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path, Opaque: u.Opaque}).String())
	}
	return r, nil
}

// describeKey returns the key's algorithm, size in bits and a short description.
func describeKey(pub any) (alg string, bits int, text string) {
	switch k := pub.(type) {
	case *rsa.PublicKey:
		return "RSA", k.N.BitLen(), fmt.Sprintf("RSA %d", k.N.BitLen())
	case *ecdsa.PublicKey:
		return "ECDSA", k.Curve.Params().BitSize, "ECDSA " + k.Curve.Params().Name
	case ed25519.PublicKey:
		return "Ed25519", 256, "Ed25519"
	default:
		t := fmt.Sprintf("%T", pub)
		return t, 0, t
	}
}

const oidBasicConstraints = "2.5.29.19"

// extensionNames names the extensions a requester is likely to ask for.
var extensionNames = map[string]string{
	"2.5.29.14":          "subjectKeyIdentifier",
	"2.5.29.15":          "keyUsage",
	"2.5.29.17":          "subjectAltName",
	oidBasicConstraints:  "basicConstraints",
	"2.5.29.30":          "nameConstraints",
	"2.5.29.32":          "certificatePolicies",
	"2.5.29.35":          "authorityKeyIdentifier",
	"2.5.29.37":          "extKeyUsage",
	"1.3.6.1.5.5.7.1.1":  "authorityInfoAccess",
	"1.3.6.1.5.5.7.1.24": "tlsFeature",
}

func extensionName(oid string) string {
	if n, ok := extensionNames[oid]; ok {
		return n
	}
	return oid
}

// basicConstraintsCA reports whether a basicConstraints value says CA:TRUE.
// A value that does not parse is not a CA request the signer could honour.
func basicConstraintsCA(der []byte) bool {
	var bc struct {
		IsCA       bool `asn1:"optional"`
		MaxPathLen int  `asn1:"optional,default:-1"`
	}
	rest, err := asn1.Unmarshal(der, &bc)
	return err == nil && len(rest) == 0 && bc.IsCA
}

// PublicKeyInfo returns the DER SubjectPublicKeyInfo of the key spec.request
// asks a certificate for: a certificate was issued for this request only if
// its own SubjectPublicKeyInfo is the same bytes. The request's signature is
// checked, so the requester holds the private key.
func PublicKeyInfo(pemBytes []byte) ([]byte, error) {
	if IsSummary(pemBytes) {
		return nil, ErrSummary
	}
	cr, err := parseRequest(pemBytes)
	if err != nil {
		return nil, err
	}
	return cr.RawSubjectPublicKeyInfo, nil
}

// parseRequest decodes spec.request's PEM block and parses the PKCS#10
// request in it, its signature checked (the requester holds the key).
func parseRequest(pemBytes []byte) (*x509.CertificateRequest, error) {
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
	return cr, nil
}
