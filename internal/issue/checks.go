package issue

import (
	"bytes"
	"crypto/x509"
	"strconv"
	"strings"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"

	"github.com/clusterdesk/clusterdesk/internal/csr"
)

// Skew is how far a certificate's notBefore may lie in the future, and how
// far past spec.expirationSeconds its lifetime may run, before the upload is
// questioned: clocks of a CA and a cluster differ by seconds to minutes, and
// the kube signer itself backdates notBefore by up to five minutes
// (pkg/controller/certificates/authority/authority.go, backdate).
const Skew = 5 * time.Minute

// Check compares an uploaded chain (leaf first) with the request it claims
// to answer, at now, and verifies it against bundle when one is given (nil:
// none). A mismatch that makes the certificate wrong for the request is an
// *InvalidError; what a person may accept knowingly (a longer lifetime, more
// usages than asked) comes back as warnings.
func Check(req *certificatesv1.CertificateSigningRequest, chain, bundle []*x509.Certificate, now time.Time) (warnings []string, err error) {
	if len(chain) == 0 {
		return nil, invalidf("No certificate was uploaded.")
	}
	spki, err := csr.PublicKeyInfo(req.Spec.Request)
	if err != nil {
		return nil, invalidf("The request's own key cannot be read, so no certificate can be matched to it: %v", err)
	}
	leaf := chain[0]
	if !bytes.Equal(leaf.RawSubjectPublicKeyInfo, spki) {
		for i, c := range chain[1:] {
			if bytes.Equal(c.RawSubjectPublicKeyInfo, spki) {
				return nil, invalidf("Certificate %d of the upload is the one for this request; put it first (the leaf first, then its issuers).", i+2)
			}
		}
		return nil, invalidf("The certificate (subject %q) was issued for another key: its public key is not the one in this request. Upload the certificate the CA issued for this CSR.", leaf.Subject.String())
	}
	if err := checkValidity(leaf, now); err != nil {
		return nil, err
	}
	if w := lifetimeWarning(req, leaf); w != "" {
		warnings = append(warnings, w)
	}
	uw, err := checkUsages(req.Spec.Usages, leaf)
	if err != nil {
		return nil, err
	}
	warnings = append(warnings, uw...)
	if len(bundle) > 0 {
		if err := verify(chain, bundle, now); err != nil {
			return nil, err
		}
	} else {
		warnings = append(warnings, chainOrderWarnings(chain)...)
	}
	return warnings, nil
}

func checkValidity(leaf *x509.Certificate, now time.Time) error {
	stamp := func(t time.Time) string { return t.UTC().Format(time.RFC3339) }
	if now.After(leaf.NotAfter) {
		return invalidf("The certificate expired at %s (notAfter); an expired certificate is of no use to the requester.", stamp(leaf.NotAfter))
	}
	if leaf.NotBefore.After(now.Add(Skew)) {
		return invalidf("The certificate is not valid before %s (notBefore), more than %v from now (%s): check the CA's clock.", stamp(leaf.NotBefore), Skew, stamp(now))
	}
	return nil
}

// lifetimeWarning says when the certificate lives longer than
// spec.expirationSeconds asked; the field is a request, which signers may
// honour or not (the API documents it so), hence a warning.
func lifetimeWarning(req *certificatesv1.CertificateSigningRequest, leaf *x509.Certificate) string {
	if req.Spec.ExpirationSeconds == nil {
		return ""
	}
	asked := time.Duration(*req.Spec.ExpirationSeconds) * time.Second
	lifetime := leaf.NotAfter.Sub(leaf.NotBefore)
	if lifetime <= asked+Skew {
		return ""
	}
	return "The certificate is valid for " + lifetime.Round(time.Second).String() + ", longer than the " + asked.String() + " the request asked for (spec.expirationSeconds)."
}

// checkUsages refuses a certificate that lacks a usage spec.usages asks
// for, or is a CA the request did not ask for, and warns about usages it
// grants beyond the request. A certificate without the keyUsage or
// extKeyUsage extension is unrestricted in that respect (RFC 5280 4.2.1.3,
// 4.2.1.12), so it lacks nothing.
func checkUsages(usages []certificatesv1.KeyUsage, leaf *x509.Certificate) ([]string, error) {
	wantKU, wantEKU, unknown := requested(usages)
	var warnings []string
	if len(unknown) > 0 {
		warnings = append(warnings, "spec.usages holds usages clusterdesk does not know, not checked: "+strings.Join(unknown, ", ")+".")
	}
	if leaf.BasicConstraintsValid && leaf.IsCA && wantKU&x509.KeyUsageCertSign == 0 {
		return nil, invalidf("The certificate is a CA certificate (basicConstraints CA:TRUE), but the request did not ask for \"cert sign\".")
	}
	if leaf.KeyUsage != 0 {
		if missing := wantKU &^ leaf.KeyUsage; missing != 0 {
			return nil, invalidf("The certificate lacks key usages the request asks for: %s.", strings.Join(keyUsageText(missing), ", "))
		}
		if extra := leaf.KeyUsage &^ wantKU; extra != 0 {
			warnings = append(warnings, "The certificate allows key usages the request did not ask for: "+strings.Join(keyUsageText(extra), ", ")+".")
		}
	}
	if len(leaf.ExtKeyUsage) > 0 && !hasEKU(leaf, x509.ExtKeyUsageAny) {
		var missing []string
		for _, e := range wantEKU {
			if !hasEKU(leaf, e) {
				missing = append(missing, extKeyUsageName(e))
			}
		}
		if len(missing) > 0 {
			return nil, invalidf("The certificate lacks extended key usages the request asks for: %s.", strings.Join(missing, ", "))
		}
	}
	var extra []string
	for _, e := range leaf.ExtKeyUsage {
		if !wantsEKU(wantEKU, e) {
			extra = append(extra, extKeyUsageName(e))
		}
	}
	if len(extra) > 0 {
		warnings = append(warnings, "The certificate allows extended key usages the request did not ask for: "+strings.Join(extra, ", ")+".")
	}
	return warnings, nil
}

func hasEKU(c *x509.Certificate, e x509.ExtKeyUsage) bool {
	for _, u := range c.ExtKeyUsage {
		if u == e {
			return true
		}
	}
	return false
}

func wantsEKU(want []x509.ExtKeyUsage, e x509.ExtKeyUsage) bool {
	for _, w := range want {
		if w == e || w == x509.ExtKeyUsageAny {
			return true
		}
	}
	return false
}

// verify builds a path from the leaf through the uploaded intermediates to a
// root of bundle. Usages were checked above against the request, so any
// extended key usage is accepted here.
func verify(chain, bundle []*x509.Certificate, now time.Time) error {
	roots, inter := x509.NewCertPool(), x509.NewCertPool()
	for _, c := range bundle {
		roots.AddCert(c)
	}
	for _, c := range chain[1:] {
		inter.AddCert(c)
	}
	_, err := chain[0].Verify(x509.VerifyOptions{
		Roots: roots, Intermediates: inter, CurrentTime: now,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny},
	})
	if err != nil {
		return invalidf("The certificate does not verify against the CA bundle given: %v", err)
	}
	return nil
}

// chainOrderWarnings notes, when no bundle was given to verify against, each
// certificate of the chain not signed by the next one: clients expect the
// leaf first, then each issuer.
func chainOrderWarnings(chain []*x509.Certificate) []string {
	var out []string
	for i := 0; i+1 < len(chain); i++ {
		if chain[i].CheckSignatureFrom(chain[i+1]) != nil {
			out = append(out, "Certificate "+itoa(i+2)+" of the chain did not sign certificate "+itoa(i+1)+": clients expect each certificate to be followed by its issuer.")
		}
	}
	return out
}

func itoa(n int) string { return strconv.Itoa(n) }
