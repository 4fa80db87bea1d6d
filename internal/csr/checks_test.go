package csr

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"net"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/clusterdesk/clusterdesk/internal/testfixtures"
)

const (
	clientSigner  = certificatesv1.KubeAPIServerClientSignerName
	kubeletClient = certificatesv1.KubeAPIServerClientKubeletSignerName
	kubeletServe  = certificatesv1.KubeletServingSignerName
)

var (
	keysOnce          sync.Once
	ecKey             *ecdsa.PrivateKey
	rsa1024, rsa2048k *rsa.PrivateKey
)

// testKeys makes the keys once: RSA generation is slow on a loaded machine.
func testKeys(t *testing.T) {
	t.Helper()
	keysOnce.Do(func() {
		var err error
		if ecKey, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
			panic(err)
		}
		if rsa1024, err = rsa.GenerateKey(rand.Reader, 1024); err != nil {
			panic(err)
		}
		if rsa2048k, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
			panic(err)
		}
	})
}

// tmpl describes a request to generate.
type tmpl struct {
	cn     string
	orgs   []string
	dns    []string
	ips    []string
	emails []string
	uris   []string
	key    crypto.Signer
	ca     bool
}

// build generates a real PKCS#10 request and decodes it as the console does.
func (r tmpl) build(t *testing.T) *Request {
	t.Helper()
	testKeys(t)
	cr := &x509.CertificateRequest{Subject: pkix.Name{CommonName: r.cn, Organization: r.orgs}, DNSNames: r.dns, EmailAddresses: r.emails}
	for _, s := range r.ips {
		cr.IPAddresses = append(cr.IPAddresses, net.ParseIP(s))
	}
	for _, s := range r.uris {
		u, err := url.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		cr.URIs = append(cr.URIs, u)
	}
	if r.ca {
		v, err := asn1.Marshal(struct{ IsCA bool }{true})
		if err != nil {
			t.Fatal(err)
		}
		cr.ExtraExtensions = append(cr.ExtraExtensions, pkix.Extension{Id: asn1.ObjectIdentifier{2, 5, 29, 19}, Critical: true, Value: v})
	}
	key := r.key
	if key == nil {
		key = ecKey
	}
	req, err := Decode(testfixtures.RequestPEM(t, key, cr))
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func usages(us ...certificatesv1.KeyUsage) []string {
	out := make([]string, len(us))
	for i, u := range us {
		out[i] = string(u)
	}
	return out
}

var (
	clientUsages  = usages(certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth)
	clientUsagesK = usages(certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageClientAuth)
	servingUsages = usages(certificatesv1.UsageDigitalSignature, certificatesv1.UsageServerAuth)
)

// ids lists the check ids of findings with their severities, e.g. "usages/warning".
func ids(fs []Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Check+"/"+f.Severity.String())
		if f.Message == "" {
			out = append(out, "EMPTY MESSAGE")
		}
	}
	return out
}

func expectIDs(t *testing.T, got []Finding, want ...string) {
	t.Helper()
	g := ids(got)
	if !slices.Equal(g, want) {
		t.Errorf("findings = %v, want %v\n%s", g, want, messages(got))
	}
}

func messages(fs []Finding) string {
	var sb strings.Builder
	for _, f := range fs {
		sb.WriteString("  " + f.Message + "\n")
	}
	return sb.String()
}

func TestCheckAPIServerClient(t *testing.T) {
	cases := []struct {
		name   string
		req    tmpl
		usages []string
		want   []string
	}{
		{"plain user", tmpl{cn: "jane", orgs: []string{"dev-team"}}, clientUsages, nil},
		{"key encipherment allowed", tmpl{cn: "jane"}, clientUsagesK, nil},
		{"system:masters", tmpl{cn: "jane", orgs: []string{"dev", "system:masters"}}, clientUsages, []string{"privileged-group/danger"}},
		{"kubeadm cluster admins", tmpl{cn: "jane", orgs: []string{"kubeadm:cluster-admins"}}, clientUsages, []string{"privileged-group/danger"}},
		{"other system group", tmpl{cn: "jane", orgs: []string{"system:nodes"}}, clientUsages, []string{"system-group/warning"}},
		{"node CN", tmpl{cn: "system:node:worker-1"}, clientUsages, []string{"impersonates-node/danger"}},
		{"service account CN", tmpl{cn: "system:serviceaccount:kube-system:default"}, clientUsages, []string{"impersonates-serviceaccount/danger"}},
		{"component CN", tmpl{cn: "system:kube-scheduler"}, clientUsages, []string{"system-user/warning"}},
		{"server auth usage", tmpl{cn: "jane"}, usages(certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth, certificatesv1.UsageServerAuth), []string{"usages/warning"}},
		{"no client auth", tmpl{cn: "jane"}, usages(certificatesv1.UsageDigitalSignature), []string{"usages/warning"}},
		{"node CN in system:nodes", tmpl{cn: "system:node:w", orgs: []string{"system:nodes"}}, clientUsages, []string{"system-group/warning", "impersonates-node/danger"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := CheckAPIServerClient(Spec{Signer: clientSigner, Usages: tc.usages, Username: "admin"}, tc.req.build(t))
			expectIDs(t, got, tc.want...)
		})
	}
}

func TestCheckKubeletClient(t *testing.T) {
	node := tmpl{cn: "system:node:worker-1", orgs: []string{"system:nodes"}}
	cases := []struct {
		name     string
		req      tmpl
		usages   []string
		username string
		groups   []string
		want     []string
	}{
		{"renewal by the node", node, clientUsages, "system:node:worker-1", []string{"system:nodes"}, nil},
		{"RSA usages", node, clientUsagesK, "system:node:worker-1", nil, nil},
		{"bootstrap token user", node, clientUsages, "system:bootstrap:abcdef", nil, nil},
		{"bootstrappers group", node, clientUsages, "kubelet-bootstrap", []string{"system:bootstrappers"}, nil},
		{"another node", node, clientUsages, "system:node:worker-2", nil, []string{"requester/danger"}},
		{"an admin", node, clientUsages, "admin", nil, []string{"requester/warning"}},
		{"CN without prefix", tmpl{cn: "worker-3", orgs: []string{"system:nodes"}}, clientUsages, "admin", nil, []string{"node-cn/warning", "requester/warning"}},
		{"wrong org", tmpl{cn: "system:node:worker-1", orgs: []string{"system:nodes", "x"}}, clientUsages, "system:node:worker-1", nil, []string{"node-org/warning"}},
		{"SANs", tmpl{cn: "system:node:worker-1", orgs: []string{"system:nodes"}, dns: []string{"worker-1"}}, clientUsages, "system:node:worker-1", nil, []string{"sans/warning"}},
		{"server auth", node, servingUsages, "system:node:worker-1", nil, []string{"usages/warning"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := CheckKubeletClient(Spec{Signer: kubeletClient, Usages: tc.usages, Username: tc.username, Groups: tc.groups}, tc.req.build(t))
			expectIDs(t, got, tc.want...)
		})
	}
}

func TestCheckKubeletServing(t *testing.T) {
	node := tmpl{cn: "system:node:worker-1", orgs: []string{"system:nodes"}, dns: []string{"worker-1", "Worker-1.cluster.local."}, ips: []string{"10.0.0.11"}}
	addrs := map[string][]string{"worker-1": {"10.0.0.11", "worker-1", "worker-1.cluster.local", "192.168.1.5"}}
	known := func(name string) ([]string, bool) { a, ok := addrs[name]; return a, ok }
	const self = "system:node:worker-1"
	cases := []struct {
		name     string
		req      tmpl
		usages   []string
		username string
		nodes    func(string) ([]string, bool)
		want     []string
	}{
		{"SANs match the Node", node, servingUsages, self, known, nil},
		{"Node unknown to the console", node, servingUsages, self, nil, []string{"node-unknown/info"}},
		{"no such Node", tmpl{cn: "system:node:ghost", orgs: []string{"system:nodes"}, dns: []string{"ghost"}}, servingUsages, "system:node:ghost", known, []string{"node-missing/warning"}},
		{"SAN not the Node's", tmpl{cn: self, orgs: []string{"system:nodes"}, dns: []string{"worker-1", "kubernetes.default.svc"}, ips: []string{"10.96.0.1"}}, servingUsages, self, known, []string{"node-addresses/danger"}},
		{"IPv6 written differently", tmpl{cn: self, orgs: []string{"system:nodes"}, ips: []string{"fd00::0:1"}}, servingUsages, self, func(string) ([]string, bool) { return []string{"fd00::1"}, true }, nil},
		{"requested by someone else", node, servingUsages, "admin", known, []string{"requester/danger"}},
		{"email SAN", tmpl{cn: self, orgs: []string{"system:nodes"}, dns: []string{"worker-1"}, emails: []string{"a@b.c"}}, servingUsages, self, known, []string{"sans/warning"}},
		{"URI SAN", tmpl{cn: self, orgs: []string{"system:nodes"}, dns: []string{"worker-1"}, uris: []string{"spiffe://x/y"}}, servingUsages, self, known, []string{"sans/warning"}},
		{"no SANs", tmpl{cn: self, orgs: []string{"system:nodes"}}, servingUsages, self, known, []string{"sans/warning"}},
		{"client usages", node, clientUsages, self, known, []string{"usages/warning"}},
		{"not a node", tmpl{cn: "web", orgs: []string{"system:nodes"}, dns: []string{"web"}}, servingUsages, "admin", known, []string{"node-cn/warning"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := CheckKubeletServing(Spec{Signer: kubeletServe, Usages: tc.usages, Username: tc.username}, tc.req.build(t), tc.nodes)
			expectIDs(t, got, tc.want...)
		})
	}
}

func TestCheckKey(t *testing.T) {
	testKeys(t)
	cases := []struct {
		name string
		key  crypto.Signer
		want []string
	}{
		{"RSA 1024", rsa1024, []string{"key-size/danger"}},
		{"RSA 2048", rsa2048k, nil},
		{"ECDSA P-256", ecKey, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := tmpl{cn: "x", key: tc.key}.build(t)
			expectIDs(t, CheckKey(req), tc.want...)
			if tc.key == rsa1024 && !strings.Contains(CheckKey(req)[0].Message, "1024") {
				t.Errorf("message should give the size: %q", CheckKey(req)[0].Message)
			}
		})
	}
}

func TestCheckDuration(t *testing.T) {
	secs := func(d time.Duration) *int32 { s := int32(d / time.Second); return &s }
	cases := []struct {
		name     string
		signer   string
		exp      *int32
		override map[string]time.Duration
		want     []string
	}{
		{"none asked", clientSigner, nil, nil, nil},
		{"one day", clientSigner, secs(24 * time.Hour), nil, nil},
		{"exactly the maximum", kubeletServe, secs(DefaultSigningDuration), nil, nil},
		{"two years", clientSigner, secs(2 * DefaultSigningDuration), nil, []string{"duration/warning"}},
		{"unknown signer: no maximum known", "example.com/custom", secs(10 * DefaultSigningDuration), nil, nil},
		{"override lowers the maximum", kubeletClient, secs(48 * time.Hour), map[string]time.Duration{kubeletClient: 24 * time.Hour}, []string{"duration/warning"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			expectIDs(t, CheckDuration(Spec{Signer: tc.signer, ExpirationSeconds: tc.exp}, tc.override), tc.want...)
		})
	}
	f := CheckDuration(Spec{Signer: clientSigner, ExpirationSeconds: secs(2 * DefaultSigningDuration)}, nil)
	if !strings.Contains(f[0].Message, "2y") || !strings.Contains(f[0].Message, "365d") {
		t.Errorf("message should give both durations: %q", f[0].Message)
	}
}

func TestCheckRequester(t *testing.T) {
	cases := []struct {
		name, signer, username, cn string
		want                       []string
	}{
		{"self", clientSigner, "jane", "jane", nil},
		{"on behalf", clientSigner, "admin", "jane", []string{"requester-subject/warning"}},
		{"custom signer on behalf", "example.com/custom", "admin", "payments.example.com", []string{"requester-subject/warning"}},
		{"kubelet signers have their own rule", kubeletServe, "admin", "system:node:w", nil},
		{"no requester recorded", clientSigner, "", "jane", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			expectIDs(t, CheckRequester(Spec{Signer: tc.signer, Username: tc.username}, tmpl{cn: tc.cn}.build(t)), tc.want...)
		})
	}
}

func TestDuplicates(t *testing.T) {
	cases := []struct {
		name   string
		others int
		want   []string
		text   string
	}{
		{"none", 0, nil, ""},
		{"one", 1, []string{"duplicate/warning"}, "1 other pending request for this signer and subject"},
		{"thousands", 4999, []string{"duplicate/warning"}, "4999 other pending requests for this signer and subject"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := CheckDuplicates(tc.others)
			expectIDs(t, f, tc.want...)
			if tc.text != "" && !strings.Contains(f[0].Message, tc.text) {
				t.Errorf("message %q, want %q", f[0].Message, tc.text)
			}
		})
	}
}

// TestCheck runs the whole set as the console does: signer rules, any-signer
// rules and the environment, most severe first.
func TestCheck(t *testing.T) {
	testKeys(t)
	twoYears := int32(2 * DefaultSigningDuration / time.Second)
	cases := []struct {
		name string
		spec Spec
		req  *tmpl
		env  Env
		want []string
	}{
		{"clean client request", Spec{Signer: clientSigner, Usages: clientUsages, Username: "jane"}, &tmpl{cn: "jane"}, Env{}, nil},
		{"masters with weak key asked by admin for two years, duplicated",
			Spec{Signer: clientSigner, Usages: clientUsages, Username: "admin", ExpirationSeconds: &twoYears},
			&tmpl{cn: "root", orgs: []string{"system:masters"}, key: rsa1024}, Env{Duplicates: 1},
			[]string{"privileged-group/danger", "key-size/danger", "requester-subject/warning", "duration/warning", "duplicate/warning"}},
		{"undecodable request: spec checks only", Spec{Signer: clientSigner, ExpirationSeconds: &twoYears}, nil, Env{}, []string{"duration/warning"}},
		{"custom signer: no signer rules", Spec{Signer: "example.com/custom", Usages: servingUsages, Username: "admin"}, &tmpl{cn: "admin", orgs: []string{"system:masters"}}, Env{}, nil},
		{"serving with node lookups", Spec{Signer: kubeletServe, Usages: servingUsages, Username: "system:node:w"},
			&tmpl{cn: "system:node:w", orgs: []string{"system:nodes"}, dns: []string{"w"}},
			Env{NodeAddresses: func(string) ([]string, bool) { return []string{"w"}, true }}, nil},
		{"CA requested from a kubernetes.io signer, which ignores it", Spec{Signer: clientSigner, Usages: clientUsages, Username: "jane"}, &tmpl{cn: "jane", ca: true}, Env{}, nil},
		{"CA requested from another signer", Spec{Signer: "example.com/custom", Username: "jane"}, &tmpl{cn: "jane", ca: true}, Env{}, []string{"requests-ca/danger"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var req *Request
			if tc.req != nil {
				req = tc.req.build(t)
			}
			expectIDs(t, Check(tc.spec, req, tc.env), tc.want...)
		})
	}
}

func TestSpecOfAndWorst(t *testing.T) {
	exp := int32(3600)
	c := &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "x"},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			SignerName: clientSigner, Username: "jane", Groups: []string{"g"}, ExpirationSeconds: &exp,
			Usages: []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth},
		},
	}
	s := SpecOf(c)
	if s.Signer != clientSigner || s.Username != "jane" || s.Groups[0] != "g" || *s.ExpirationSeconds != 3600 || s.Usages[0] != "client auth" {
		t.Errorf("SpecOf = %+v", s)
	}
	if _, ok := Worst(nil); ok {
		t.Error("no findings have no worst")
	}
	if w, _ := Worst([]Finding{{Severity: Info}, {Severity: Danger}, {Severity: Warning}}); w != Danger {
		t.Errorf("worst = %v", w)
	}
}

func TestDecodeExtensionsAndCA(t *testing.T) {
	req := tmpl{cn: "ca", dns: []string{"a"}, ca: true}.build(t)
	if !req.RequestsCA {
		t.Error("basicConstraints CA:TRUE not seen")
	}
	names := []string{}
	for _, e := range req.Extensions {
		names = append(names, e.Name)
	}
	if !slices.Contains(names, "subjectAltName") || !slices.Contains(names, "basicConstraints") {
		t.Errorf("extensions = %v", names)
	}
	if req.KeyAlgorithm != "ECDSA" || req.KeyBits != 256 || req.Subject != "CN=ca" {
		t.Errorf("key/subject = %s %d %q", req.KeyAlgorithm, req.KeyBits, req.Subject)
	}
	if plain := (tmpl{cn: "p"}).build(t); plain.RequestsCA || len(plain.Extensions) != 0 {
		t.Errorf("a bare request has no extensions: %+v", plain.Extensions)
	}
}

func TestMemo(t *testing.T) {
	testKeys(t)
	pemBytes := testfixtures.RequestPEM(t, ecKey, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "m"}})
	m := NewMemo(2)
	a, err := m.Decode(pemBytes)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := m.Decode(pemBytes)
	if a != b || m.Len() != 1 {
		t.Errorf("second decode should come from the memo (len %d)", m.Len())
	}
	if _, err := m.Decode([]byte("junk")); err == nil {
		t.Error("errors are remembered, not swallowed")
	}
	if _, err := m.Decode([]byte("junk")); err == nil || m.Len() != 2 {
		t.Errorf("a remembered error is still an error (len %d)", m.Len())
	}
	_, _ = m.Decode([]byte("more junk"))
	if m.Len() != 1 {
		t.Errorf("a full memo starts over: len %d", m.Len())
	}
}

// TestCheckDuplicatesStormStaysShort: a storm's thousands of duplicates are
// counted, never named, so one finding stays a sentence long.
func TestCheckDuplicatesStormStaysShort(t *testing.T) {
	f := CheckDuplicates(5000)
	if len(f) != 1 || len(f[0].Message) > 200 || !strings.Contains(f[0].Message, "5000 other pending requests") {
		t.Fatalf("finding %d bytes: %.300q", len(f[0].Message), f[0].Message)
	}
}
