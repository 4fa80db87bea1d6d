package csrqueue

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"strings"
	"testing"
	"unsafe"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/clusterdesk/clusterdesk/internal/csr"
	"github.com/clusterdesk/clusterdesk/internal/testfixtures"
)

// decidedCSR is an approved client request for CN cn asked by user.
func decidedCSR(t *testing.T, name, user, cn string) *certificatesv1.CertificateSigningRequest {
	return &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: certificatesv1.CertificateSigningRequestSpec{SignerName: "example.com/bench", Username: user,
			Request: testfixtures.RequestPEM(t, testfixtures.SigningKey(), &x509.CertificateRequest{Subject: pkix.Name{CommonName: cn, Organization: []string{"team"}}})},
		Status: certificatesv1.CertificateSigningRequestStatus{Conditions: []certificatesv1.CertificateSigningRequestCondition{
			{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue}}},
	}
}

// wordsOf is the findings text of c as the queue kept it whole before:
// Words.Findings of the checks' findings.
func wordsOf(t *testing.T, c *certificatesv1.CertificateSigningRequest) string {
	req, err := csr.Decode(c.Spec.Request)
	if err != nil {
		t.Fatal(err)
	}
	return benchWords{}.Findings(csr.Check(csr.SpecOf(c), req, csr.Env{}))
}

// TestFindingsTemplateFindsWhatTheTextHolds: a findings text kept as a
// template expands to the text byte for byte, and the filter finds in it
// exactly what it found in the text (every piece of it, and nothing across
// its end), whatever the requester's name and the CN share.
func TestFindingsTemplateFindsWhatTheTextHolds(t *testing.T) {
	for _, tc := range []struct {
		user, cn string
		tmpl     uint8
	}{
		{"kubernetes-admin", "bench-user-00042", tmplCN | tmplUser},
		{"Admin", "bench-user-00042", tmplCN},                 // a name in capitals is kept as it is
		{"kubernetes-admin", "Bench-User", tmplCN | tmplUser}, // the CN lower-cased, as the text has it
		{"x", "x-y", tmplCN | tmplUser},                       // the name inside the CN
		{"kubernetes-admin", "admin", tmplCN},                 // the CN inside the name
		{"kubernetes-admin", "e", tmplCN},                     // a CN found all over the text, the name's "e"s too
		{"system:serviceaccount:ns:sa", "sa", tmplCN},         // the CN ends the name
	} {
		c := decidedCSR(t, "csr-1", tc.user, tc.cn)
		want := wordsOf(t, c)
		if want == "" {
			t.Fatalf("%s for %s: no findings to keep", tc.user, tc.cn)
		}
		f := newFacts(c)
		f.check(c, Checks{}, benchWords{})
		if f.tmpl != tc.tmpl {
			t.Errorf("%s for %s: template marks %b, want %b (%q)", tc.user, tc.cn, f.tmpl, tc.tmpl, f.findingText)
		}
		if got := string(f.expand(nil, c, f.findingText, f.tmpl)); got != want {
			t.Fatalf("%s for %s: the template %q expands to %q, the text is %q", tc.user, tc.cn, f.findingText, got, want)
		}
		var scratch []byte
		for i := range want {
			for j := i + 1; j <= len(want); j++ {
				if !f.findingsContain(c, f.findingText, f.tmpl, want[i:j], &scratch) {
					t.Fatalf("%s for %s: %q is in the text but not found", tc.user, tc.cn, want[i:j])
				}
			}
		}
		for _, needle := range []string{want + "x", "\xfe", "\xff", strings.ToUpper(tc.cn) + "\xfe", "for cn \xfe"} {
			if f.findingsContain(c, f.findingText, f.tmpl, needle, &scratch) {
				t.Errorf("%s for %s: %q is not in the text but found", tc.user, tc.cn, needle)
			}
		}
	}
}

// TestFindingsTemplatesAreShared: decided requests that differ only in their
// CN keep one findings text between them, where each kept its own (the page
// benchmark's 45,000 decided requests: ~150 bytes each); the bytes kept,
// before and now, are logged.
func TestFindingsTemplatesAreShared(t *testing.T) {
	const n = 200
	texts := map[*byte]int{}
	before, now := 0, 0
	for i := range n {
		c := decidedCSR(t, fmt.Sprintf("csr-%d", i), "kubernetes-admin", fmt.Sprintf("bench-user-%05d", i))
		f := newFacts(c)
		f.check(c, Checks{}, benchWords{})
		before += len(wordsOf(t, c))
		if texts[unsafe.StringData(f.findingText)] == 0 {
			now += len(f.findingText)
		}
		texts[unsafe.StringData(f.findingText)]++
	}
	t.Logf("%d decided requests' findings texts: %d bytes kept whole, %d as templates", n, before, now)
	if len(texts) != 1 {
		t.Errorf("%d requests keep %d findings texts, want one shared", n, len(texts))
	}
}
