package issue

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"strings"
)

// Limits on what an upload may hold. A real chain is a leaf and a few
// intermediates; a CA bundle (a distribution's trust store) a few hundred
// roots. Both are bounded so that a pasted file of garbage costs little.
const (
	MaxChainCerts  = 10
	MaxBundleCerts = 500
	MaxChainBytes  = 64 << 10  // 64 KiB: ten certificates with room to spare
	MaxBundleBytes = 512 << 10 // 512 KiB: Mozilla's whole trust store is ~220 KiB
)

// ParseCertificates reads PEM text holding only CERTIFICATE blocks (what
// the API server accepts in status.certificate: upstream
// pkg/apis/certificates/validation/validation.go, validateCertificate, refuses
// any other block type and block headers). what names the input in errors
// ("the certificate", "the CA bundle"). Text between blocks (openssl's
// "subject=" lines) is ignored; a private key is refused by name, so that a
// person who pasted one learns it, and its bytes are never echoed.
func ParseCertificates(data []byte, what string, maxCerts, maxBytes int) ([]*x509.Certificate, error) {
	if len(data) > maxBytes {
		return nil, invalidf("%s is %d bytes; at most %d are accepted.", capital(what), len(data), maxBytes)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, invalidf("%s is empty: paste the PEM text or choose a file.", capital(what))
	}
	var certs []*x509.Certificate
	rest := data
	for n := 1; ; n++ {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		switch {
		case strings.Contains(block.Type, "PRIVATE KEY"):
			return nil, invalidf("%s holds a private key (block %d, %s). Never upload private keys: only the CERTIFICATE blocks the CA issued are needed.", capital(what), n, block.Type)
		case block.Type != "CERTIFICATE":
			return nil, invalidf("%s holds a %q block (block %d); only CERTIFICATE blocks are accepted.", capital(what), block.Type, n)
		case len(block.Headers) > 0:
			return nil, invalidf("%s has PEM headers in block %d; the API server accepts CERTIFICATE blocks without headers.", capital(what), n)
		}
		if len(certs) == maxCerts {
			return nil, invalidf("%s holds more than %d certificates.", capital(what), maxCerts)
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, invalidf("%s: block %d is not a valid X.509 certificate: %v", capital(what), n, err)
		}
		certs = append(certs, cert)
	}
	if len(certs) == 0 {
		return nil, invalidf("%s holds no PEM CERTIFICATE block (-----BEGIN CERTIFICATE-----); DER files must be converted to PEM first (openssl x509 -inform der).", capital(what))
	}
	return certs, nil
}

// EncodeChain is the PEM the console writes to status.certificate: the
// parsed certificates in order, without the text around them.
func EncodeChain(certs []*x509.Certificate) []byte {
	var buf bytes.Buffer
	for _, c := range certs {
		_ = pem.Encode(&buf, &pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
	}
	return buf.Bytes()
}

func capital(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// InvalidError is an upload refused before anything is written: it does not
// parse, or does not fit the request. Its text is for the person: it says
// what is wrong and what to do.
type InvalidError struct{ msg string }

func (e *InvalidError) Error() string { return e.msg }

func invalidf(format string, args ...any) error {
	return &InvalidError{msg: fmt.Sprintf(format, args...)}
}
