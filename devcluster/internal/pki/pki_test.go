package pki

import (
	"crypto/rsa"
	"crypto/x509"
	"os"
	"path/filepath"
	"testing"
)

func TestEnsureCreatesChainThatVerifies(t *testing.T) {
	p, err := Ensure(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ca, err := ReadCert(p.CACert)
	if err != nil {
		t.Fatal(err)
	}
	if !ca.IsCA {
		t.Error("CA certificate is not marked IsCA")
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca)

	serving, err := ReadCert(p.ServingCert)
	if err != nil {
		t.Fatal(err)
	}
	for _, host := range []string{"127.0.0.1", "localhost", "::1", "kubernetes.default.svc"} {
		if _, err := serving.Verify(x509.VerifyOptions{Roots: roots, DNSName: host}); err != nil {
			t.Errorf("serving certificate for %s: %v", host, err)
		}
	}

	kcm, err := ReadCert(p.KCMCert)
	if err != nil {
		t.Fatal(err)
	}
	if kcm.Subject.CommonName != ControllerManagerUser {
		t.Errorf("controller-manager CN = %q, want %q", kcm.Subject.CommonName, ControllerManagerUser)
	}
	if _, err := kcm.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("controller-manager client certificate: %v", err)
	}

	oidc, err := ReadCert(p.OIDCCert)
	if err != nil {
		t.Fatal(err)
	}
	for _, host := range []string{"127.0.0.1", "localhost"} {
		if _, err := oidc.Verify(x509.VerifyOptions{Roots: roots, DNSName: host}); err != nil {
			t.Errorf("OpenID provider certificate for %s: %v", host, err)
		}
	}
	if _, err := oidc.Verify(x509.VerifyOptions{Roots: roots, DNSName: "kubernetes.default.svc"}); err == nil {
		t.Error("OpenID provider certificate is valid for kubernetes.default.svc; it should name loopback only")
	}
	signing, err := ReadKey(p.OIDCSigningKey)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := signing.(*rsa.PrivateKey); !ok {
		t.Errorf("OpenID signing key is %T, want RSA (RS256)", signing)
	}

	for _, path := range []string{p.CAKey, p.ServingKey, p.KCMKey, p.SAKey, p.OIDCKey, p.OIDCSigningKey} {
		if _, err := ReadKey(path); err != nil {
			t.Errorf("key %s: %v", filepath.Base(path), err)
		}
		info, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if mode := info.Mode().Perm(); mode != 0o600 {
			t.Errorf("%s mode = %o, want 600", filepath.Base(path), mode)
		}
	}
}

func TestEnsureReusesExistingMaterial(t *testing.T) {
	dir := t.TempDir()
	first, err := Ensure(dir)
	if err != nil {
		t.Fatal(err)
	}
	before := readAll(t, first)
	second, err := Ensure(dir)
	if err != nil {
		t.Fatal(err)
	}
	after := readAll(t, second)
	for path, data := range before {
		if string(after[path]) != string(data) {
			t.Errorf("%s changed on the second run", filepath.Base(path))
		}
	}
}

func TestEnsureReissuesLeavesWhenCAIsReplaced(t *testing.T) {
	dir := t.TempDir()
	p, err := Ensure(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(p.CACert); err != nil {
		t.Fatal(err)
	}
	if _, err := Ensure(dir); err != nil {
		t.Fatal(err)
	}
	ca, err := ReadCert(p.CACert)
	if err != nil {
		t.Fatal(err)
	}
	serving, err := ReadCert(p.ServingCert)
	if err != nil {
		t.Fatal(err)
	}
	if err := serving.CheckSignatureFrom(ca); err != nil {
		t.Errorf("serving certificate not reissued by the new CA: %v", err)
	}
}

func readAll(t *testing.T, p PKI) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, path := range []string{p.CACert, p.CAKey, p.ServingCert, p.ServingKey, p.KCMCert, p.KCMKey, p.SAPub, p.SAKey, p.OIDCCert, p.OIDCKey, p.OIDCSigningKey} {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		out[path] = data
	}
	return out
}
