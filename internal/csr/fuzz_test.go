package csr

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"
	"net"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"

	"github.com/clusterdesk/clusterdesk/internal/testfixtures"
)

// The seed corpus of FuzzDecode is in testdata/fuzz/FuzzDecode: requests made
// by `openssl req` (RSA 2048 asking for CA:TRUE with every SAN type, ECDSA
// P-384 kubelet-style, Ed25519, RSA 1024 with a full DN). The shared
// real-world fixtures hold no CSRs; f.Add below adds requests made by Go's
// crypto/x509 the way kubelets and kubeadm make them, and broken ones.

// fuzzSigners are the signers whose checks differ, plus one unknown signer.
var fuzzSigners = []string{
	certificatesv1.KubeAPIServerClientSignerName,
	certificatesv1.KubeAPIServerClientKubeletSignerName,
	certificatesv1.KubeletServingSignerName,
	"kubernetes.io/legacy-unknown",
	"example.com/custom",
}

// FuzzDecode feeds arbitrary bytes to Decode, as they are (PEM text) and
// wrapped in a CERTIFICATE REQUEST block (so mutations reach the PKCS#10
// parser), then runs every signer's checks on whatever decodes.
func FuzzDecode(f *testing.F) {
	key := testfixtures.SigningKey()
	_, edKey, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		f.Fatal(err)
	}
	kubelet := testfixtures.RequestPEM(f, key, &x509.CertificateRequest{
		Subject:     pkix.Name{CommonName: "system:node:worker-1", Organization: []string{"system:nodes"}},
		DNSNames:    []string{"worker-1", "worker-1.cluster.internal"},
		IPAddresses: []net.IP{net.ParseIP("10.0.0.7"), net.ParseIP("fd00::7")},
	})
	client := testfixtures.RequestPEM(f, edKey, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "alice", Organization: []string{"dev", "system:masters"}}})
	f.Add(kubelet)
	f.Add(client)
	if block, _ := pem.Decode(kubelet); block != nil {
		f.Add(block.Bytes) // bare DER: the wrapped path parses it
		f.Add(block.Bytes[:len(block.Bytes)/2])
	}
	f.Add([]byte("this is not a PEM-encoded certificate request")) // the devcluster's legacy CSR
	f.Add([]byte(""))
	f.Add([]byte("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"))
	f.Add([]byte("-----BEGIN NEW CERTIFICATE REQUEST-----\nMA==\n-----END NEW CERTIFICATE REQUEST-----\n"))
	f.Add(append(append([]byte{}, kubelet...), client...))

	f.Fuzz(func(t *testing.T, data []byte) {
		wrapped := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: data})
		for _, in := range [][]byte{data, wrapped} {
			req, err := Decode(in)
			checkDecoded(t, in, req, err)
			checkSummary(t, in, req, err)
		}
	})
}

// checkSummary: what decodes (and is no summary) has a summary that decodes
// to the same Request (summary.go).
func checkSummary(t *testing.T, in []byte, req *Request, err error) {
	if err != nil || IsSummary(in) {
		return
	}
	s, ok := Summarize(in)
	if !ok {
		t.Fatalf("%q decodes but has no summary", in)
	}
	got, err := Decode(s)
	if err != nil || !reflect.DeepEqual(normalized(got), normalized(req)) {
		t.Fatalf("the summary of %q decodes to %+v (%v), the request to %+v", in, got, err, req)
	}
}

// checkDecoded holds for every input: a result or an error, never both; the
// same answer again and through the Memo; and checks that run on it. Error
// texts are not compared: encoding/asn1's structure errors print a pointer
// (testdata/fuzz/FuzzDecode/32fe95329e982b5d), so they differ between calls.
func checkDecoded(t *testing.T, in []byte, req *Request, err error) {
	t.Helper()
	if (req == nil) == (err == nil) {
		t.Fatalf("Decode returned request %v and error %v: want exactly one", req, err)
	}
	if err != nil && err.Error() == "" {
		t.Fatal("Decode returned an error without a message")
	}
	again, err2 := Decode(in)
	if !reflect.DeepEqual(req, again) || (err == nil) != (err2 == nil) {
		t.Fatalf("Decode is not deterministic: %+v, %v then %+v, %v", req, err, again, err2)
	}
	memoed, err3 := NewMemo(4).Decode(in)
	if !reflect.DeepEqual(req, memoed) || (err == nil) != (err3 == nil) {
		t.Fatalf("Memo.Decode differs from Decode: %+v, %v vs %+v, %v", memoed, err3, req, err)
	}
	if req != nil {
		if req.KeyAlgorithm == "" || req.PublicKey == "" || req.SignatureAlgorithm == "" {
			t.Fatalf("decoded request without key or signature description: %+v", req)
		}
		hasBC := slices.ContainsFunc(req.Extensions, func(e Extension) bool { return e.OID == oidBasicConstraints })
		if req.RequestsCA && !hasBC {
			t.Fatalf("RequestsCA without a basicConstraints extension: %+v", req.Extensions)
		}
		for _, e := range req.Extensions {
			if e.OID == "" || e.Name == "" {
				t.Fatalf("extension without OID or name: %+v", e)
			}
		}
	}
	for _, signer := range fuzzSigners {
		spec := Spec{Signer: signer, Usages: []string{"digital signature", "client auth"}, Username: "system:node:worker-1"}
		checkFindings(t, Check(spec, req, fuzzEnv("worker-1", "10.0.0.7")))
	}
}

// fuzzEnv knows one Node with addresses, and every limit overridden for one signer.
func fuzzEnv(node string, addrs ...string) Env {
	return Env{
		NodeAddresses: func(name string) ([]string, bool) {
			if name == node {
				return addrs, true
			}
			return nil, false
		},
		MaxDuration: map[string]time.Duration{"example.com/custom": time.Hour},
		Duplicates:  2,
	}
}

// checkFindings: most severe first, each with an id, a known severity and a message.
func checkFindings(t *testing.T, fs []Finding) {
	t.Helper()
	for i, f := range fs {
		if f.Check == "" || f.Message == "" || f.Severity < Info || f.Severity > Danger {
			t.Fatalf("finding %d malformed: %+v", i, f)
		}
		if i > 0 && fs[i-1].Severity < f.Severity {
			t.Fatalf("findings not most severe first: %+v", fs)
		}
	}
	if w, ok := Worst(fs); ok != (len(fs) > 0) || (ok && w != fs[0].Severity) {
		t.Fatalf("Worst = %v, %v for %+v", w, ok, fs)
	}
}

// FuzzCheck builds real, validly signed requests from fuzzed subjects, SANs and
// extensions, so the fuzzer gets past the signature check that stops most
// mutated DER, and runs the signer checks with a fuzzed spec. What Go's own
// crypto/x509 creates, Decode must read back faithfully.
func FuzzCheck(f *testing.F) {
	key := testfixtures.SigningKey()
	f.Add("system:node:worker-1", "system:nodes", "worker-1,worker-1.internal", "", "", []byte{10, 0, 0, 7}, false, "", []byte(nil), false,
		uint8(2), "digital signature,key encipherment,server auth", "system:node:worker-1", "system:nodes,system:authenticated", int32(0), "worker-1,10.0.0.7")
	f.Add("system:node:worker-1", "system:nodes", "", "", "", []byte(nil), false, "", []byte(nil), false,
		uint8(1), "digital signature,client auth", "system:bootstrap:abcdef", "system:bootstrappers", int32(3600), "")
	f.Add("jane", "dev,system:masters", "", "jane@example.com", "spiffe://cluster.local/ns/default/sa/jane", []byte(nil), true, "1.2.3.4", []byte{0x05, 0x00}, true,
		uint8(0), "client auth", "admin", "system:masters", int32(1<<30), "")
	f.Add("ca", "", "", "", "", []byte(nil), true, "2.5.29.19", []byte{0x30, 0x03, 0x01, 0x01, 0xff}, true,
		uint8(4), "cert sign", "someone", "", int32(-1), "")

	f.Fuzz(func(t *testing.T, cn, orgs, dns, emails, uri string, ip []byte, ca bool, extOID string, extValue []byte, critical bool,
		signer uint8, usages, username, groups string, expiration int32, nodeAddrs string) {
		tmpl := &x509.CertificateRequest{
			Subject:        pkix.Name{CommonName: cn, Organization: fuzzSplit(orgs)},
			DNSNames:       fuzzSplit(dns),
			EmailAddresses: fuzzSplit(emails),
		}
		if len(ip) == net.IPv4len || len(ip) == net.IPv6len {
			tmpl.IPAddresses = []net.IP{ip}
		}
		if uri != "" {
			u, err := url.Parse(uri)
			if err != nil {
				return
			}
			tmpl.URIs = []*url.URL{u}
		}
		if ca {
			bc, err := asn1.Marshal(struct{ IsCA bool }{true})
			if err != nil {
				t.Fatal(err)
			}
			tmpl.ExtraExtensions = append(tmpl.ExtraExtensions, pkix.Extension{Id: asn1.ObjectIdentifier{2, 5, 29, 19}, Critical: true, Value: bc})
		}
		if oid, ok := parseOID(extOID); ok && !oid.Equal(asn1.ObjectIdentifier{2, 5, 29, 19}) && !oid.Equal(asn1.ObjectIdentifier{2, 5, 29, 17}) {
			tmpl.ExtraExtensions = append(tmpl.ExtraExtensions, pkix.Extension{Id: oid, Critical: critical, Value: extValue})
		}
		der, err := x509.CreateCertificateRequest(rand.Reader, tmpl, key)
		if err != nil {
			return // not a request crypto/x509 will make (say, invalid UTF-8 in a name)
		}
		in := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
		req, err := Decode(in)
		if err != nil {
			// Only what the standard parser itself refuses may fail here.
			if _, perr := x509.ParseCertificateRequest(der); perr == nil {
				t.Fatalf("Decode refused a request crypto/x509 made and parses: %v", err)
			}
			return
		}
		checkDecoded(t, in, req, nil)
		// Several O values form one DER SET, which DER sorts: compare them as sets.
		if req.CommonName != cn || !slices.Equal(sorted(req.Organizations), sorted(tmpl.Subject.Organization)) ||
			!slices.Equal(req.DNSNames, tmpl.DNSNames) || !slices.Equal(req.EmailAddresses, tmpl.EmailAddresses) {
			t.Fatalf("decoded %+v from CN %q O %q DNS %q email %q", req, cn, tmpl.Subject.Organization, tmpl.DNSNames, tmpl.EmailAddresses)
		}
		if len(tmpl.IPAddresses) == 1 && (len(req.IPAddresses) != 1 || !net.ParseIP(req.IPAddresses[0]).Equal(tmpl.IPAddresses[0])) {
			t.Fatalf("decoded IPs %q from %v", req.IPAddresses, tmpl.IPAddresses)
		}
		if req.RequestsCA != ca {
			t.Fatalf("RequestsCA = %v, asked for CA: %v", req.RequestsCA, ca)
		}

		spec := Spec{Signer: fuzzSigners[int(signer)%len(fuzzSigners)], Usages: fuzzSplit(usages), Username: username, Groups: fuzzSplit(groups)}
		if expiration != 0 {
			spec.ExpirationSeconds = &expiration
		}
		node := strings.TrimPrefix(cn, "system:node:")
		checkFindings(t, Check(spec, req, fuzzEnv(node, fuzzSplit(nodeAddrs)...)))
		checkFindings(t, Check(spec, req, Env{}))
		checkFindings(t, Check(spec, nil, Env{}))
	})
}

func fuzzSplit(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// parseOID reads a dotted OID that asn1 can encode: at least two arcs, the
// first 0-2 (and the second below 40 unless the first is 2).
func parseOID(s string) (asn1.ObjectIdentifier, bool) {
	if s == "" {
		return nil, false
	}
	var oid asn1.ObjectIdentifier
	for _, part := range strings.Split(s, ".") {
		n := 0
		if part == "" || len(part) > 6 {
			return nil, false
		}
		for _, c := range part {
			if c < '0' || c > '9' {
				return nil, false
			}
			n = n*10 + int(c-'0')
		}
		oid = append(oid, n)
	}
	if len(oid) < 2 || oid[0] > 2 || (oid[0] < 2 && oid[1] >= 40) {
		return nil, false
	}
	return oid, true
}

// sorted returns a sorted copy.
func sorted(ss []string) []string {
	out := slices.Clone(ss)
	slices.Sort(out)
	return out
}
