package admission

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"strconv"
	"time"
)

// ExpiryWarning is how close to its end a CA certificate gets flagged.
const ExpiryWarning = 30 * 24 * time.Hour

// caInjectors are annotations by which a controller fills an empty caBundle.
var caInjectors = []string{
	"cert-manager.io/inject-ca-from",
	"cert-manager.io/inject-ca-from-secret",
	"cert-manager.io/inject-apiserver-ca",
	"service.beta.openshift.io/inject-cabundle",
}

// Certificate is one certificate of a caBundle.
type Certificate struct {
	Subject   string
	NotBefore time.Time
	NotAfter  time.Time
}

// ParseCABundle decodes a caBundle: PEM CERTIFICATE blocks and nothing else.
func ParseCABundle(data []byte) ([]Certificate, error) {
	var out []Certificate
	rest := data
	for n := 1; ; n++ {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			return out, fmt.Errorf("block %d is a %s, not a CERTIFICATE", n, block.Type)
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return out, fmt.Errorf("certificate %d: %w", n, err)
		}
		out = append(out, Certificate{Subject: c.Subject.String(), NotBefore: c.NotBefore, NotAfter: c.NotAfter})
	}
	if len(bytes.TrimSpace(rest)) > 0 {
		if len(out) == 0 {
			return nil, fmt.Errorf("not PEM")
		}
		return out, fmt.Errorf("%d bytes after the last PEM block are not PEM", len(bytes.TrimSpace(rest)))
	}
	return out, nil
}

func caBundleText(data []byte) string {
	if len(bytes.TrimSpace(data)) == 0 {
		return "empty"
	}
	certs, err := ParseCABundle(data)
	if err != nil {
		return "invalid: " + err.Error()
	}
	if len(certs) == 1 {
		return "1 certificate, " + certs[0].Subject + ", valid until " + certs[0].NotAfter.UTC().Format(time.DateOnly)
	}
	return strconv.Itoa(len(certs)) + " certificates"
}

// LintCABundle checks a caBundle at time now. An empty bundle is only worth a
// note for a Service target (a URL may use a publicly trusted certificate).
func LintCABundle(data []byte, service bool, annotations map[string]string, now time.Time) []Finding {
	if len(bytes.TrimSpace(data)) == 0 {
		if !service {
			return nil
		}
		for _, a := range caInjectors {
			if v, ok := annotations[a]; ok {
				return []Finding{{CodeCABundleEmpty, Info, "caBundle injected",
					"caBundle is empty here and filled by a CA injector (" + a + ": " + v + "); until it is, calls fail TLS verification."}}
			}
		}
		return []Finding{{CodeCABundleEmpty, Warning, "caBundle empty",
			"caBundle is empty, so the API server checks the Service's certificate against its own trust roots, which rarely include an in-cluster CA."}}
	}
	certs, err := ParseCABundle(data)
	if err != nil {
		return []Finding{{CodeCABundleInvalid, Error, "caBundle invalid",
			"caBundle must be PEM certificates: " + err.Error() + "; the API server cannot verify the webhook."}}
	}
	var out []Finding
	for _, c := range certs {
		switch {
		case now.After(c.NotAfter):
			out = append(out, Finding{CodeCAExpired, Error, "CA certificate expired",
				c.Subject + " expired on " + c.NotAfter.UTC().Format(time.DateOnly) + ": certificates it signed no longer verify."})
		case c.NotAfter.Sub(now) < ExpiryWarning:
			out = append(out, Finding{CodeCAExpiring, Warning, "CA certificate expiring",
				c.Subject + " expires on " + c.NotAfter.UTC().Format(time.DateOnly) + ", in less than 30 days."})
		case now.Before(c.NotBefore):
			out = append(out, Finding{CodeCANotYetValid, Warning, "CA certificate not yet valid",
				c.Subject + " is valid only from " + c.NotBefore.UTC().Format(time.RFC3339) + "."})
		}
	}
	return out
}
